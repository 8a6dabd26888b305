"""Vendor fault: a 200 whole reply that holds no choice and no error.

OpenRouter now and then answers a chat completion with HTTP 200 and a body
whose ``choices`` is ``null`` and that carries no error envelope, "a
transient provider hiccup carrying no completion"
(https://github.com/pydantic/pydantic-ai/issues/6901), or with the whole
completion nested under ``provider`` and ``null`` at the top
(https://github.com/pydantic/pydantic-ai/issues/3994). The call failed at
once with a ``ServerError`` marked retryable that nothing sent again. Such a
body is now retried like a 5xx (the next attempt answers); one that lasts
still ends as that ``ServerError``, naming the empty reply.

Served by the OpenAI fake, whole replies, through the public API."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import ReActAgent, ServerError
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

BODIES: dict[str, dict[str, Any]] = {
    "null-choices": {"id": "gen-1", "choices": None, "provider": "Google",
                     "model": "google/gemini-3-flash-preview"},
    "nested-in-provider": {
        "id": None, "choices": None, "model": None, "object": None,
        "provider": {"id": "gen-123", "model": "google/gemini-3-flash-preview",
                     "provider": "Google",
                     "choices": [{"message": {"content": "Paris."}, "finish_reason": "stop"}]}},
    "no-choices-key": {"id": "gen-2", "object": "chat.completion", "usage": {
        "prompt_tokens": 9, "completion_tokens": 0, "total_tokens": 9}},
}


class Hiccups(OpenAIFake):
    """Answers ``extra["body"]`` as it is, when the reply has one."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        if "body" in reply.extra:
            return reply.extra["body"]
        return super().render_json(reply, body)


@pytest.mark.parametrize("shape", sorted(BODIES))
async def test_a_choiceless_200_is_sent_again(shape: str) -> None:
    async with Hiccups() as fake:
        fake.add(FakeReply(extra={"body": BODIES[shape]}),
                 FakeReply(text="Paris is the capital of France."))
        async with OpenAIChatModel("google/gemini-3-flash-preview", base_url=fake.url,
                                   api_key="k", stream=False, settings=FAST) as model:
            reply = await ReActAgent("a", model).call("Capital of France?")
    assert reply.text == "Paris is the capital of France." and len(fake.requests) == 2


async def test_a_lasting_choiceless_200_is_an_empty_reply_error() -> None:
    async with Hiccups() as fake:
        fake.default = FakeReply(extra={"body": BODIES["null-choices"]})
        async with OpenAIChatModel("google/gemini-3-flash-preview", base_url=fake.url,
                                   api_key="k", stream=False, settings=FAST) as model:
            with pytest.raises(ServerError, match="empty reply from openai") as caught:
                await ReActAgent("a", model).call("Capital of France?")
    assert caught.value.retryable and len(fake.requests) == 1 + FAST.max_retries
