"""Vendor fault: reply text streamed cumulatively, each delta the whole text so far.

Some OpenAI-compatible paths (DashScope's Coding Plan endpoints among them)
stream ``delta.content`` and ``delta.reasoning_content`` as the accumulated
full text instead of what each chunk adds
(https://github.com/QwenLM/qwen-code/pull/3896: "the same content gets
concatenated repeatedly during streaming"). Read as deltas, the reply repeated
itself ("Paris Paris is the caParis is the capital...") and a structured
output written in the text was no JSON. A delta that is the text so far and
more now adds only the rest, in the text and the reasoning alike; an
incremental stream is read as before.

Served by the DashScope fake, streamed, through the public API."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentflow import Complete, OutputConfig, PromptStrategy, ReActAgent, ThinkingChunk
from agentflow.providers._openai_deltas import SoFar, new_text
from agentflow.providers.dashscope import DashScopeChatModel
from tests.fakes.base import FakeReply, pieces
from tests.fakes.dashscope import DashScopeFake
from tests.provider_scenarios import FAST


class City(BaseModel):
    name: str
    country: str


class Cumulative(DashScopeFake):
    """Streams the reasoning, then the text, each chunk the whole of it so far."""

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frames = [self.chunk(body, {"role": "assistant", "content": ""})]
        for field, text in (("reasoning_content", reply.thinking), ("content", reply.text)):
            parts = pieces(text, reply.chunk_size)
            frames += [self.chunk(body, {field: "".join(parts[: n + 1])})
                       for n in range(len(parts))]
        return frames


async def _events(reply: FakeReply, output: Any = None) -> list[Any]:
    async with Cumulative() as fake:
        fake.add(reply)
        async with DashScopeChatModel("qwen3-coder-plus", base_url=fake.url, api_key="k",
                                      stream=True, settings=FAST) as model:
            agent = ReActAgent("q", model,
                               output=OutputConfig(strategy=PromptStrategy()))
            return [e async for e in agent.stream("The capital of France?", output)]


async def test_cumulative_text_and_reasoning_are_read_once() -> None:
    events = await _events(FakeReply(text="Paris is the capital of France.",
                                     thinking="The user asks about France.", chunk_size=6))
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Paris is the capital of France."
    thought = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thought == "The user asks about France."


async def test_a_cumulative_json_answer_is_the_output() -> None:
    events = await _events(FakeReply(text='{"name": "Paris", "country": "France"}',
                                     chunk_size=5), City)
    done = events[-1]
    assert isinstance(done, Complete) and done.output == City(name="Paris", country="France")


async def test_an_incremental_stream_is_read_as_before() -> None:
    async with DashScopeFake() as fake:
        fake.add(FakeReply(text="ab ab ab abc", chunk_size=3))
        async with DashScopeChatModel("qwen-plus", base_url=fake.url, api_key="k",
                                      stream=True, settings=FAST) as model:
            events = [e async for e in ReActAgent("q", model).stream("Say it")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "ab ab ab abc"


def test_a_short_delta_after_a_cumulative_mark_is_kept() -> None:
    """Once a stream is read as cumulative, only a delta of at least half the
    text so far can be a repeat: an incremental stream that once began a
    delta with its whole text ("Yes", "Yes!") keeps its later short deltas
    that happen to be the text's start (" ", "Y" was dropped as a repeat)."""
    so_far: dict[str, SoFar] = {}
    read = [new_text(so_far, "content", piece) for piece in ["Yes", "Yes!", " ", "Y", "es"]]
    assert "".join(read) == "Yes! Yes"
    again: dict[str, SoFar] = {}
    cumulative = ["Paris", "Paris is", "Paris is", "Paris is the capital."]
    assert "".join(new_text(again, "content", p) for p in cumulative) == "Paris is the capital."
