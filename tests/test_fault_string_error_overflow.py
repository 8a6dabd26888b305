"""Vendor fault: a context overflow told as a bare string error over HTTP 200.

LM Studio answers a prompt longer than the model's loaded context window with
HTTP 200 and an error instead of a reply (lmstudio-ai/lmstudio-bug-tracker#2322:
"the response error message has a 200 status code vs a 400"), in its words
"Trying to keep the first 111490 tokens when context the overflows. However,
the model is loaded with context length of only 32768 tokens" (#546), as a
bare string: ``{"error": "..."}``. The wording was known, but only inside an
error *object*: a string error was a retried ``ServerError`` (three requests
for an input that can never fit, and no word of chunking). It is now a
``ContextLengthError``, sent once, whole reply and stream alike; so is
LM Studio's "Reached context length of N tokens" for a reply that outgrew
the window mid-generation (#1024), which no wording matched.

Served by an OpenAI fake answering as LM Studio does."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import ContextLengthError, ReActAgent, ServerError
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

MID_REPLY = ("Reached context length of 32000 tokens with model (arch: gpt-oss) that does not "
             "currently support mid-generation context overflow. Try reloading with a larger "
             "context length or shortening the prompt/chat.")
"""LM Studio's words when prompt and reply together outgrow the loaded window
(lmstudio-ai/lmstudio-bug-tracker#1024)."""
OVERFLOW = ("Trying to keep the first 111490 tokens when context the overflows. However, the "
            "model is loaded with context length of only 32768 tokens, which is not enough. "
            "Try to load the model with a larger context length, or provide a shorter input")


class City(BaseModel):
    name: str


class LMStudioFake(OpenAIFake):
    """Answers with HTTP 200 and ``{"error": <string>}`` (whole), or that object
    as the stream's one data line (streamed)."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return {"error": reply.extra["error_text"]}

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return [b"data: " + orjson.dumps({"error": reply.extra["error_text"]}) + b"\n\n"]


@pytest.mark.parametrize("text", [OVERFLOW, MID_REPLY], ids=["prompt", "mid-reply"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_string_overflow_error_is_a_context_length_error(stream: bool,
                                                                 text: str) -> None:
    async with LMStudioFake() as fake:
        fake.default = FakeReply(extra={"error_text": text})
        async with OpenAIChatModel("qwen3-coder-30b", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            with pytest.raises(ContextLengthError):
                await ReActAgent("a", model).call("A long document...", City)
        assert len(fake.requests) == 1  # never retried: it can never fit


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_another_string_error_stays_a_server_error(stream: bool) -> None:
    async with LMStudioFake() as fake:
        fake.default = FakeReply(extra={"error_text": "Model unloaded unexpectedly"})
        async with OpenAIChatModel("qwen3-coder-30b", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            with pytest.raises(ServerError, match="Model unloaded"):
                await ReActAgent("a", model).call("Hello")
