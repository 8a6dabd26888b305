"""Vendor fault: usage reported outside ``usage``.

Groq's OpenAI-compatible stream reports the request's token counts under
``x_groq.usage`` in the finish chunk, not in ``usage`` (vercel/ai#1651,
Portkey-AI/gateway#1072): read as "no usage", every streamed Groq call's
tokens were unknown and its cost unestimated. They are read there when the
stream gives none in ``usage``.

Served by an OpenAI fake answering as Groq does, streamed."""

from __future__ import annotations

from typing import Any

from agentflow import Complete, ReActAgent, Usage
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class GroqFake(OpenAIFake):
    """Groq: no ``usage`` field; the counts in ``x_groq`` on the finish chunk."""

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frame = self.chunk(body, {}, self.finish_of(reply))
        frame.pop("usage", None)
        prompt, completion = reply.usage
        frame["x_groq"] = {"id": "req_01", "usage": {
            "queue_time": 0.07, "prompt_tokens": prompt, "prompt_time": 0.006,
            "completion_tokens": completion, "completion_time": 0.022,
            "total_tokens": prompt + completion, "total_time": 0.028}}
        return [frame]


async def test_groq_usage_is_read_from_x_groq() -> None:
    async with GroqFake() as fake:
        fake.add(FakeReply(text="Hello there.", usage=(23, 19)))
        async with OpenAIChatModel("llama-3.3-70b-versatile", base_url=fake.url, api_key="k",
                                   stream=True, settings=FAST) as model:
            events = [e async for e in ReActAgent("g", model).stream("Hello")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Hello there."
    assert done.usage == Usage(23, 19, requests=1)
    assert done.usage.known
