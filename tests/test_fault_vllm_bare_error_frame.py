"""Vendor fault: older vLLM's bare error frame inside a stream.

vLLM's OpenAI-compatible server reports a failure after the 200 as one more
data line, then ``[DONE]`` (vllm-project/vllm#40986: "both APIs return an
SSE 500 error before DONE"). Current servers wrap its ``ErrorResponse`` in
``{"error": ...}``; older ones sent it bare, the same object their HTTP
errors carry (modelscope/ms-agent#489: "Error code: 400 - {'object':
'error', 'message': ..., 'type': 'BadRequestError', 'param': None, 'code':
400}"). The bare frame read as a chunk without choices, and the stream then
"ended ([DONE]) without a finish_reason": a ``TruncatedStreamError`` that
hid the server's message. Now it is the server's error, typed by its
``code`` as its HTTP twin (400 -> ``BadRequestError``, a context overflow ->
``ContextLengthError``, 503 -> ``OverloadedError``), in a stream and in a
whole 200 body alike.

Served by the OpenAI fake on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import (
    BadRequestError,
    ContextLengthError,
    OverloadedError,
    ProviderError,
    ReActAgent,
    TruncatedStreamError,
)
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


def bare(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


FRAMES: dict[str, tuple[dict[str, Any], type[ProviderError]]] = {
    "bad-request": (bare("[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), "
                         "'msg': 'Extra inputs are not permitted'}]", "BadRequestError", 400),
                    BadRequestError),
    "context": (bare("This model's maximum context length is 4096 tokens. However, you "
                     "requested 5000 tokens (4000 in the messages, 1000 in the completion).",
                     "BadRequestError", 400), ContextLengthError),
    "overloaded": (bare("The server is overloaded", "ServiceUnavailableError", 503),
                   OverloadedError),
}


@pytest.mark.parametrize("name", sorted(FRAMES))
@pytest.mark.parametrize("after", [1, 3], ids=["before-content", "after-content"])
async def test_a_bare_error_frame_is_the_servers_error(name: str, after: int) -> None:
    frame, kind = FRAMES[name]
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="Paris is the capital.", chunk_size=4,
                           extra={"bare_error": frame, "error_after": after}))
        async with OpenAIChatModel("qwen2.5-7b", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            with pytest.raises(ProviderError) as caught:
                async for _ in ReActAgent("a", model).stream("Capital of France?"):
                    pass
    error = caught.value
    assert isinstance(error, kind) and not isinstance(error, TruncatedStreamError)
    assert frame["message"][:30] in str(error)
    assert error.partial  # it came after the 200: stream_retries may send it again


async def test_a_bare_error_in_a_whole_200_body_is_the_servers_error() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeError(200, bare("The server is overloaded", "ServiceUnavailableError",
                                     503)),
                 FakeReply(text="Paris."))
        async with OpenAIChatModel("qwen2.5-7b", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            reply = await ReActAgent("a", model).call("Capital of France?")
    assert reply.text == "Paris." and len(fake.requests) == 2  # retried as a 503 is
