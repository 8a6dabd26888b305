"""Credentials never leak: the shared mask, and every vendor adapter against a
fake that echoes the key it was sent (whole and as a prefix) in its
wrong-key error."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agentflow import ReActAgent
from agentflow._logging import get_logger
from agentflow._secrets import mask_secrets, mask_value, register_secret
from agentflow.errors import ProviderError
from agentflow.providers.registry import get_model
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeServer
from tests.fakes.dashscope import DashScopeFake
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.gemini import GeminiFake
from tests.fakes.glm import GLMFake
from tests.fakes.minimax import MiniMaxFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake


def test_mask_hides_the_secret_and_echoed_prefixes() -> None:
    key = "sk-test-Q1w2E3r4T5y6U7i8O9p0"
    register_secret(key)
    assert mask_secrets(f"invalid x-api-key {key}.") == "invalid x-api-key ***."
    assert mask_secrets(f"key {key[:14]}... is wrong") == "key ***... is wrong"
    assert mask_secrets(f"{key}{key}") == "***"  # one run of key characters, one mask
    assert mask_secrets("sk-test") == "sk-test"  # shorter than MIN_PREFIX: ordinary text
    assert mask_value({"a": [f"x{key}"], "b": (key, 3)}) == {"a": ["x***"], "b": ("***", 3)}


@pytest.mark.parametrize("echo", [
    "Incorrect API key provided: ****{tail}",          # the key's last characters
    "bad key ...{middle}...",                          # a middle part
    "INVALID KEY {upper}",                             # the key upper-cased
    "key={whole}; again {whole}",                      # twice
])
def test_mask_hides_any_run_of_a_key_in_any_case(echo: str) -> None:
    key = "sk-proj-SECRETabcdef0123456789XYZ"
    register_secret(key)
    text = echo.format(tail=key[-12:], middle=key[5:22], upper=key.upper(), whole=key)
    masked = mask_secrets(text)
    assert "***" in masked
    for i in range(len(key) - 7):  # no 8 characters of the key survive, in any case
        assert key[i:i + 8].lower() not in masked.lower(), masked
    assert mask_secrets("İstanbul " + key) == "İstanbul ***"  # offsets kept past 'İ'
    assert mask_secrets("an ordinary sentence") == "an ordinary sentence"


def test_bearer_values_register_the_key_and_short_values_are_ignored() -> None:
    register_secret("Bearer tok-9f8e7d6c5b4a3")
    assert mask_secrets("got tok-9f8e7d6c5b4a3") == "got ***"
    register_secret("k")  # too short to be a key: masking it would garble words
    assert mask_secrets("kind") == "kind"


def test_logs_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    register_secret("log-secret-123456789")
    with caplog.at_level(logging.INFO, logger="agentflow.test"):
        get_logger("agentflow.test").info("event", detail="got log-secret-123456789 back")
    assert "log-secret" not in caplog.text and "detail='got *** back'" in caplog.text


VENDORS: list[tuple[str, type[FakeServer]]] = [
    ("openai:gpt-4o-mini", OpenAIFake),
    ("deepseek:deepseek-chat", DeepSeekFake),
    ("dashscope:qwen-plus", DashScopeFake),
    ("glm:glm-4.6", GLMFake),
    ("minimax:MiniMax-M2", MiniMaxFake),
    ("anthropic:claude-sonnet-4-5", AnthropicFake),
    ("gemini:gemini-2.5-flash", GeminiFake),
    ("ollama:qwen3:8b", OllamaFake),
]


@pytest.mark.parametrize(("spec", "fake_class"), VENDORS, ids=[v[0].split(":")[0] for v in VENDORS])
async def test_an_echoed_key_never_reaches_errors_reprs_or_logs(
    spec: str, fake_class: type[FakeServer], caplog: pytest.LogCaptureFixture
) -> None:
    key = f"sk-{spec.split(':')[0]}-live-8Hq2ZkW9xVt4LpN7"
    async with fake_class() as fake:
        fake.echo_key = True
        model = get_model(spec, base_url=fake.url, api_key=key)
        agent = ReActAgent("a", model)
        try:
            with caplog.at_level(logging.DEBUG, logger="agentflow"), pytest.raises(
                    ProviderError) as info:
                await agent.call("hi")
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    sent = fake.requests[0].headers
    assert key in str(sent)  # the key did travel, and the fake quoted it back...
    error: Any = info.value
    seen = [str(error), repr(error), error.message, str(error.args), repr(model), repr(agent),
            caplog.text]
    for text in seen:  # ...but nothing a person or a file sees holds it, whole or in part
        assert key not in text and key[:12] not in text, text
    assert "***" in error.message


@pytest.mark.parametrize(("text", "shown"), [
    ("Error while downloading https://h.example/a.png?X-Amz-Signature=abc123&b=2.",
     "Error while downloading https://h.example/a.png?\u2026."),
    ("fetch 'https://user:pa55word@h.example/x#token=abc' failed",
     "fetch 'https://h.example/x?\u2026' failed"),
    ("gs://bucket/doc.pdf?sig=abc and HTTP://H.EXAMPLE/P?k=v",
     "gs://bucket/doc.pdf?\u2026 and HTTP://H.EXAMPLE/P?\u2026"),
    ("see https://docs.example/errors/invalid_image_url",
     "see https://docs.example/errors/invalid_image_url"),
    ("no URL here: a?b=c", "no URL here: a?b=c"),
])
def test_mask_cuts_url_queries_and_user_info(text: str, shown: str) -> None:
    # Presigned URLs (S3, GCS, Azure SAS) carry their credential in the query,
    # and vendors echo a URL they could not fetch: the mask cuts it everywhere.
    assert mask_secrets(text) == shown
    assert mask_value({"e": [text]}) == {"e": [shown]}


async def test_a_logged_failure_has_its_traceback_masked(
        caplog: pytest.LogCaptureFixture) -> None:
    """A web stream that fails with an exception that is not agentflow's logs
    it (``web.stream_failed``): the record held the exception's ``repr``
    unmasked (a URL's password and query token; ``mask_value`` left an
    exception as it was) and no traceback. Now the traceback is formatted and
    masked."""
    import asyncio

    from agentflow.middleware.base import Middleware
    from agentflow.testing import FunctionModel, Reply
    from agentflow.web.sse import EventStreamResponse

    leaky = "https://svc:pw-0123456789abcdef@db.example/q?token=tok-fedcba9876543210"

    class Buggy(Middleware):
        def on_chunk(self, ex: Any, chunk: Any, reply: Any) -> None:
            raise RuntimeError(f"bug while reading {leaky}")

    agent = ReActAgent("a", FunctionModel(lambda r: Reply(text="hello")), middleware=[Buggy()])

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        pass

    response = EventStreamResponse(agent.stream("x"), ping_interval=60)
    with caplog.at_level(logging.ERROR, logger="agentflow"):
        await response({"type": "http"}, receive, send)  # type: ignore[arg-type]
    assert response.outcome == "failed"
    [record] = [r for r in caplog.records if "web.stream_failed" in r.getMessage()]
    logged = record.getMessage()
    assert "Traceback (most recent call last)" in logged and "in on_chunk" in logged
    assert "RuntimeError: bug while reading https://db.example/q?" in logged
    for secret in ("pw-0123456789abcdef", "tok-fedcba9876543210"):
        assert secret not in caplog.text
    assert mask_value(RuntimeError(leaky)) == "RuntimeError('https://db.example/q?\u2026')"


def test_logged_url_loses_its_query(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="agentflow.test"):
        get_logger("agentflow.test").warning("fetch.failed",
                                             url="https://h.example/a.pdf?sig=s3cr3tvalue")
    assert "s3cr3tvalue" not in caplog.text and "https://h.example/a.pdf?\u2026" in caplog.text


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "gemini", "ollama", "deepseek",
                                    "dashscope", "glm", "minimax"])
@pytest.mark.parametrize("url", [
    "http://gateway-user:pw-0123456789abcdef@127.0.0.1:9/v1",
    "http://127.0.0.1:9/v1?key=q-0123456789abcdef",
])
async def test_a_credential_in_base_url_never_reaches_a_repr(vendor: str, url: str) -> None:
    # Gemini takes ?key=, gateways take user:password@: neither is registered as a
    # key, so the repr must cut them as the error messages do.
    key = None if "@" in url else "k-0123456789abcdef"  # both: refused (test_http)
    model = get_model(f"{vendor}:m", base_url=url, api_key=key)
    try:
        batch_api = getattr(model, "batch_api", None)
        batches = batch_api() if callable(batch_api) else None
        for text in (repr(model), repr(getattr(model, "_client", None)),
                     repr(getattr(model, "_http", None)), repr(batches)):
            assert ("0123456789abcdef" not in text and "127.0.0.1:9" in text) or text == "None"
    finally:
        await model.aclose()
