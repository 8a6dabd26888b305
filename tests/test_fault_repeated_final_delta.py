"""Vendor fault: a stream whose terminal chunk repeats the whole reply as
its ``delta``.

Rapid-MLX (vllm-mlx) started with ``--enable-auto-tool-choice`` sends, in
the terminal chunk (the one with ``finish_reason``), the entire response in
``delta.content`` again (raullenchai/Rapid-MLX#1709,
https://github.com/raullenchai/Rapid-MLX/issues/1709), as RAGFlow's
OpenAI-compatible endpoint did (infiniflow/ragflow#15286). Read as one more
delta, the text came out twice and JSON output became ``{...}{...}``. The
terminal delta that repeats the text so far now adds only what follows the
repeat; a last delta that is a suffix of the reply (as every token delta
is) is read as it came, the finish chunk's own or not.

Served by the OpenAI fake (an OpenAI-compatible server), streamed, through
the public API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, ReasoningChunk
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class FinalDelta(OpenAIFake):
    """Deltas as usual; the finish chunk's ``delta.content`` is ``last``
    (``None``: the whole text again, as Rapid-MLX sends it). Every reply is
    streamed (a whole-reply request too)."""

    def __init__(self, last: str | None = None) -> None:
        super().__init__()
        self.last = last
        self.force_stream = "text/event-stream"

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frames = super().tail_frames(reply, body)
        frames[0]["choices"][0]["delta"] = {
            "content": reply.text if self.last is None else self.last}
        return frames


class City(BaseModel):
    name: str
    country: str


async def test_a_terminal_delta_repeating_the_reply_adds_nothing() -> None:
    async with FinalDelta() as fake:
        fake.add(FakeReply(text='{"name": "Paris", "country": "FR"}'),
                 FakeReply(text="The Louvre is in Paris."))
        async with OpenAIChatModel("lfm2.5-8b-a1b-4bit", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            agent = ReActAgent("a", model)
            city = await agent.call("Where is the Louvre?", City)
            streamed = [e.text async for e in agent.stream("And in words?")
                        if isinstance(e, ReasoningChunk)]
    assert city.output == City(name="Paris", country="FR")
    assert len(fake.bodies) == 2  # read at once: no output retry
    assert "".join(streamed) == "The Louvre is in Paris."


@pytest.mark.parametrize(("text", "last"), [
    ("The Louvre is in ", "Paris."),  # a suffix: the usual last token
    ("Paris, Paris, ", "Paris."),  # words the text so far holds, shorter than it
    ("ab", "abc"),  # one delta before: nothing repeated
], ids=["suffix", "echo_of_a_part", "one_delta_before"])
async def test_a_terminal_delta_that_is_a_suffix_is_read_as_it_came(text: str, last: str) -> None:
    async with FinalDelta(last) as fake:
        fake.add(FakeReply(text=text, chunk_size=3 if text != "ab" else 8))
        async with OpenAIChatModel("some-model", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            reply = await ReActAgent("a", model).call("Where is the Louvre?")
    assert reply.text == text + last
