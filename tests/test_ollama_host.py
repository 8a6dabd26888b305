"""``OLLAMA_HOST`` picks the Ollama server when no ``base_url`` is given, read
as the official client reads it (ollama-python 0.6 ``_client._parse_host``,
the witness here: its own doctest table); agentflow used to ignore it and
ask localhost. A bind-all address (``0.0.0.0``, the server-side setting the
Ollama FAQ suggests) is the loopback for a client."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from ollama._client import _parse_host

from agentflow.errors import InvalidModelError
from agentflow.messages import Msg
from agentflow.providers._ollama_host import DEFAULT_BASE_URL, ollama_host
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.registry import get_model
from agentflow.reply import generate
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake
from tests.provider_scenarios import FAST

SDK_CASES = [
    "1.2.3.4", ":56789", "1.2.3.4:56789", "http://1.2.3.4", "https://1.2.3.4",
    "https://1.2.3.4:56789", "example.com", "example.com:56789", "http://example.com",
    "https://example.com", "https://example.com:56789", "example.com/", "example.com:56789/",
    "example.com/path", "example.com:56789/path", "https://example.com:56789/path",
    "example.com:56789/path/", "[0001:002:003:0004::1]", "[0001:002:003:0004::1]:56789",
    "http://[0001:002:003:0004::1]", "https://[0001:002:003:0004::1]:56789",
    "[0001:002:003:0004::1]:56789/path/",
]


@pytest.mark.parametrize("value", SDK_CASES)
def test_parsed_as_the_sdk_parses_it(value: str) -> None:
    assert ollama_host(value) == _parse_host(value)


@pytest.mark.parametrize(("value", "expected"), [
    ("", DEFAULT_BASE_URL), ("  ", DEFAULT_BASE_URL),
    ("0.0.0.0", "http://127.0.0.1:11434"), ("0.0.0.0:8080", "http://127.0.0.1:8080"),
    ("http://[::]:11434", "http://127.0.0.1:11434"),
    ("::", "http://127.0.0.1:11434"), ("::1", "http://[::1]:11434"),
    ("http://::1/api/", "http://[::1]:80/api"), ("fe80::1", "http://[fe80::1]:11434"),
])
def test_unset_and_bind_all(value: str, expected: str) -> None:
    assert ollama_host(value) == expected


@pytest.mark.parametrize("value", ["example.com:port", "1.2.3.4:99999", "[::1]:x"])
def test_a_bad_port_names_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match=r"OLLAMA_HOST=.*is no Ollama server address"):
        ollama_host(value)


def test_no_variable_is_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert ollama_host() == DEFAULT_BASE_URL


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_model_without_base_url_asks_the_server_the_variable_names(
        monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    async with OllamaFake() as fake:
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{urlsplit(fake.url).port}")
        fake.add(FakeReply(text="from OLLAMA_HOST"))
        model = OllamaChatModel("llama3.2", stream=stream, settings=FAST)
        try:
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert reply.message.text == "from OLLAMA_HOST" and len(fake.requests) == 1


async def test_an_explicit_base_url_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # the discard port: never asked
    async with OllamaFake() as fake:
        fake.add(FakeReply(text="explicit"))
        model = OllamaChatModel("llama3.2", base_url=fake.url, settings=FAST)
        try:
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert reply.message.text == "explicit"


@pytest.mark.parametrize("value", ["localhost:11434", "gpu-box", "127.0.0.1:8000/v1", ":56789"])
def test_a_base_url_without_scheme_is_read_as_the_variable_is(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """The official client parses ``Client(host=...)`` and ``OLLAMA_HOST``
    alike (``_parse_host(host or os.getenv('OLLAMA_HOST'))``): a ``base_url``
    written as the variable would be was refused ("did you mean http://")
    while the variable with the same value was taken."""
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    given = OllamaChatModel("llama3.2", base_url=value)
    monkeypatch.setenv("OLLAMA_HOST", value)
    from_variable = OllamaChatModel("llama3.2")
    assert given.base_url == from_variable.base_url == _parse_host(value)


async def test_a_model_asks_the_server_a_scheme_less_base_url_names() -> None:
    async with OllamaFake() as fake:
        fake.add(FakeReply(text="scheme-less"))
        model = get_model("ollama:llama3.2", base_url=f"127.0.0.1:{urlsplit(fake.url).port}",
                          settings=FAST)
        try:
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert reply.message.text == "scheme-less" and len(fake.requests) == 1


@pytest.mark.parametrize("value", ["example.com:port", "1.2.3.4:99999"])
def test_a_scheme_less_base_url_with_a_bad_port_is_refused_naming_it(value: str) -> None:
    with pytest.raises(InvalidModelError, match=r"^ollama: base_url=.*is no Ollama server "):
        OllamaChatModel("llama3.2", base_url=value)


def test_a_url_with_a_scheme_is_taken_as_given() -> None:
    model = OllamaChatModel("llama3.2", base_url="http://127.0.0.1:9/v1/")
    assert model.base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("where", ["base_url", "OLLAMA_HOST"])
def test_a_bad_address_is_refused_without_its_password(
        where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheme-less address with credentials and a bad port, given as
    ``base_url`` or in the variable: a typed error naming where it came from,
    its ``user:password@`` masked."""
    value = "admin:hunter2-secret@gpu-box:99x"
    monkeypatch.setenv("OLLAMA_HOST", value)
    with pytest.raises(InvalidModelError) as caught:
        OllamaChatModel("qwen3:8b", base_url=value if where == "base_url" else None)
    assert where in str(caught.value) and "***@gpu-box:99x" in str(caught.value)
    assert "hunter2" not in str(caught.value) and "admin" not in str(caught.value)
