"""Requests over the context window (providers/_context_errors.py): each
vendor's own error reply is a ``ContextLengthError`` with the counts it gave
and a message that says to chunk; it is never retried, and an extraction
record names it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from pydantic import BaseModel

from agentflow import ContextLengthError, ReActAgent
from agentflow.batch import extract_many
from agentflow.cli import main
from agentflow.errors import BadRequestError, ProviderError, ServerError
from agentflow.providers._anthropic_errors import map_error as anthropic_error
from agentflow.providers._anthropic_errors import stream_error as anthropic_stream_error
from agentflow.providers._openai_errors import openai_error, payload_error
from agentflow.providers.dashscope import DashScopeChatModel
from agentflow.providers.gemini import map_error as gemini_error
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.minimax import base_resp_error
from agentflow.providers.ollama import map_error as ollama_error
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST, close_models, tracked

SCHEMA = Path(__file__).resolve().parent.parent / "examples" / "contact.py"
Mapper = Callable[[int, dict[str, str], bytes], ProviderError]


def _openai(status: int, headers: dict[str, str], body: bytes) -> ProviderError:
    return openai_error("openai", status, headers, body)


def _glm(status: int, headers: dict[str, str], body: bytes) -> ProviderError:
    return GLMChatModel("glm-z1-air", api_key="k").map_error(status, headers, body)


def _dashscope(status: int, headers: dict[str, str], body: bytes) -> ProviderError:
    return DashScopeChatModel("qwen-plus", api_key="k").map_error(status, headers, body)


OPENAI_BODY = {"error": {
    "message": "This model's maximum context length is 128000 tokens. However, your messages "
               "resulted in 131072 tokens. Please reduce the length of the messages.",
    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}

CASES: list[tuple[str, Mapper, int, Any, int | None, int | None]] = [
    ("openai", _openai, 400, OPENAI_BODY, 128000, 131072),
    ("openai-code-only", _openai, 400, {"error": {
        "message": "Your input exceeds the context window of this model.",
        "type": "invalid_request_error", "code": "context_length_exceeded"}}, None, None),
    ("vllm", _openai, 400, {"object": "error", "message":
        "This model's maximum context length is 4096 tokens. However, you requested 5000 "
        "tokens (4000 in the messages, 1000 in the completion). Please reduce the length of "
        "the messages or completion.", "type": "BadRequestError", "param": None, "code": 400},
     4096, 5000),
    ("vllm-decoder", _openai, 400, {"object": "error", "message":
        "The decoder prompt (length 9000) is longer than the maximum model length of 8192. "
        "Make sure that `max_model_len` is no smaller than the number of text tokens.",
        "type": "BadRequestError", "code": 400}, 8192, 9000),
    ("llama.cpp", _openai, 400, {"error": {
        "code": 400, "message": "the request exceeds the available context size, try "
        "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 14429,
        "n_ctx": 8192}}, 8192, 14429),
    ("llama.cpp-500", _openai, 500, {"error": {
        "code": 500, "message": "the request exceeds the available context size. try "
        "increasing the context size or enable context shift",
        "type": "exceed_context_size_error", "n_prompt_tokens": 1407, "n_ctx": 256}},
     256, 1407),
    ("llama.cpp-worded", _openai, 400, {"error": {
        "code": 400, "message": "request (4390 tokens) exceeds the available context size "
        "(4096 tokens), try increasing it", "type": "exceed_context_size_error"}}, 4096, 4390),
    ("llama.cpp-server-error", _openai, 500, {"error": {
        "code": 500, "message": "Context size has been exceeded.", "type": "server_error"}},
     None, None),
    ("llama-cpp-python", _openai, 400, {"detail": "Requested tokens (2285) exceed context "
                                                  "window of 2048"}, 2048, 2285),
    ("gateway", _openai, 400, {"error": {"message": "Provider returned error", "code": 400,
                                         "metadata": {"raw": orjson.dumps(OPENAI_BODY).decode(),
                                                      "provider_name": "OpenAI"}}},
     128000, 131072),
    ("anthropic", anthropic_error, 400, {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum"}}, 200000, 210000),
    ("anthropic-max-tokens", anthropic_error, 400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": "input length and `max_tokens` exceed "
        "context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and "
        "try again"}}, 200000, 209573),
    ("gemini", gemini_error, 400, [{"error": {
        "code": 400, "message": "The input token count (1200000) exceeds the maximum number of "
        "tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}], 1048576, 1200000),
    ("ollama", ollama_error, 400, {"error": "input length exceeds the context length"},
     None, None),
    ("glm", _glm, 400, {"error": {"code": "1261", "message": "Prompt 超长"}}, None, None),
    ("dashscope", _dashscope, 400, {"error": {
        "message": "<400> InternalError.Algo.InvalidParameter: Range of input length should "
        "be [1, 30720]", "type": "invalid_request_error", "code": "invalid_parameter_error"}},
     None, None),
]


@pytest.mark.parametrize(("mapper", "status", "body", "limit", "requested"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_vendor_wording_is_a_context_length_error(
        mapper: Mapper, status: int, body: Any, limit: int | None,
        requested: int | None) -> None:
    error = mapper(status, {}, orjson.dumps(body))
    assert isinstance(error, ContextLengthError) and isinstance(error, BadRequestError)
    assert (error.limit, error.requested) == (limit, requested)
    assert not error.retryable and error.status == status
    assert "chunking=" in str(error) and "--chunk-chars" in str(error)
    assert error.reason == ContextLengthError.HINT


def test_errors_inside_a_reply_or_stream_too() -> None:
    streamed = payload_error("openai", {"error": OPENAI_BODY["error"]})
    assert isinstance(streamed, ContextLengthError) and streamed.limit == 128000
    event = {"type": "error", "error": {"type": "invalid_request_error",
                                        "message": "prompt is too long: 3 tokens > 2 maximum"}}
    assert isinstance(anthropic_stream_error(event), ContextLengthError)
    minimax = base_resp_error("minimax", {"base_resp": {
        "status_code": 2013, "status_msg": "invalid params, context window exceeds limit"}})
    assert isinstance(minimax, ContextLengthError)


@pytest.mark.parametrize(("mapper", "status", "body"), [
    (_openai, 400, {"error": {"message": "Invalid value for 'temperature'",
                              "type": "invalid_request_error", "code": None}}),
    (_openai, 400, {"error": {"message": "max_tokens is too large: 9000. This model supports "
                              "at most 4096 completion tokens", "code": None}}),
    (anthropic_error, 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                       "message": "messages: field required"}}),
    (_openai, 429, {"error": {"message": "Rate limit reached for tokens per min (TPM): "
                              "Limit 30000, Requested 50000.", "code": "rate_limit_exceeded"}}),
    (_openai, 500, {"error": {"message": "internal error", "type": "server_error"}}),
])
def test_other_errors_are_not(mapper: Mapper, status: int, body: Any) -> None:
    assert not isinstance(mapper(status, {}, orjson.dumps(body)), ContextLengthError)


class Contact(BaseModel):
    name: str


LLAMA_500 = FakeError(500, {"error": {
    "code": 500, "message": "the request exceeds the available context size. try increasing "
    "the context size or enable context shift", "type": "exceed_context_size_error",
    "n_prompt_tokens": 9000, "n_ctx": 4096}})


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_never_retried(stream: bool) -> None:
    """A 500 from llama.cpp was a ServerError, retried with backoff: the same
    request fails the same way every time."""
    try:
        async with OpenAIFake() as fake:
            fake.add(LLAMA_500, LLAMA_500, FakeReply(text='{"name": "Ann"}'))
            model = tracked(OpenAIChatModel("local-model", api_key="k", base_url=fake.url,
                                            settings=FAST, stream=stream))
            with pytest.raises(ContextLengthError) as caught:
                await ReActAgent("a", model).call("x" * 100, Contact)
            assert len(fake.requests) == 1
            assert not isinstance(caught.value, ServerError)
            assert (caught.value.limit, caught.value.requested) == (4096, 9000)
    finally:
        await close_models()


async def test_an_extraction_record_names_it(tmp_path: Path) -> None:
    try:
        async with OpenAIFake() as fake:
            fake.add(LLAMA_500)
            model = tracked(OpenAIChatModel("local-model", api_key="k", base_url=fake.url,
                                            settings=FAST))
            [result] = [r async for r in extract_many(model, ["Ann " * 50], Contact,
                                                       chunking=None)]
            assert not result.ok and isinstance(result.error, ContextLengthError)

            fake.add(LLAMA_500)
            (tmp_path / "in.jsonl").write_text('{"id": "1", "text": "Ann is here"}\n')
            out = tmp_path / "out.jsonl"
            argv = ["extract", "--schema", f"{SCHEMA}:Contact", "--input",
                    str(tmp_path / "in.jsonl"), "--model", "openai:local-model",
                    "--base-url", fake.url, "--api-key", "k", "--out", str(out)]
            status = await anyio.to_thread.run_sync(main, argv)
            assert status == 1
            [record] = [orjson.loads(line) for line in out.read_bytes().splitlines()]
            assert record["error"]["type"] == "ContextLengthError"
            assert "--chunk-chars" in record["error"]["reason"]
    finally:
        await close_models()


@pytest.mark.parametrize(("vendor", "status", "message", "code", "kind"), [
    ("openai", 400, OPENAI_BODY["error"]["message"], "context_length_exceeded", "context_length"),
    ("gemini", 400, "The input token count (1200000) exceeds the maximum number of tokens "
                    "allowed (1048576).", "INVALID_ARGUMENT", "context_length"),
    ("anthropic", None, "prompt is too long: 3 tokens > 2 maximum", "invalid_request_error",
     "context_length"),
    ("openai", 500, "Internal server error", "server_error", "error"),
])
def test_batch_item_errors_say_context_length(vendor: str, status: int | None, message: str,
                                              code: str, kind: str) -> None:
    from agentflow.providers._context_errors import item_kind
    assert item_kind(vendor, status, message, code) == kind
