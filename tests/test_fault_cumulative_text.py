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
from agentflow.providers.dashscope import DEFAULT_PROFILE, DashScopeChatModel
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.openai import OpenAIChatModel
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


class Deltas(DashScopeFake):
    """Streams the text in the pieces ``reply.extra["pieces"]``, as they are."""

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        return [self.chunk(body, {"role": "assistant", "content": ""}),
                *(self.chunk(body, {"content": p}) for p in reply.extra["pieces"])]


async def _text(fake: DashScopeFake, reply: FakeReply, known: bool | None) -> str:
    async with fake:
        fake.add(reply)
        profile = DEFAULT_PROFILE.with_(cumulative_stream_deltas=known)
        async with DashScopeChatModel("qwen-plus", base_url=fake.url, api_key="k",
                                      stream=True, settings=FAST, profile=profile) as model:
            done = [e async for e in ReActAgent("q", model).stream("Say it")][-1]
    assert isinstance(done, Complete)
    return done.message.text


async def test_a_profile_that_knows_the_stream_reads_it_without_the_guess() -> None:
    """The guess read an incremental delta that happens to start with the
    text so far ("Yes! " then "Yes! Yes! and more") as cumulative and lost
    text, and a cumulative stream too short to tell ("ab", "abc") as
    deltas. A profile that says how the endpoint streams
    (``cumulative_stream_deltas``) is read as it says; unknown, as before."""
    said = ["Yes! ", "Yes! Yes! and more"]
    deltas = FakeReply(text="".join(said), extra={"pieces": said})
    assert await _text(Deltas(), deltas, False) == "Yes! Yes! Yes! and more"
    assert await _text(Deltas(), deltas, None) == "Yes! Yes! and more"  # the guess
    short = FakeReply(text="abc", chunk_size=2)  # "ab", then "abc"
    assert await _text(Cumulative(), short, True) == "abc"
    assert await _text(Cumulative(), short, None) == "ababc"  # too short to tell


def test_the_vendors_own_hosts_say_their_streams_are_deltas() -> None:
    """OpenAI, DeepSeek and GLM document ``delta`` as new text: their own
    hosts' profiles say so; the same adapter on another host guesses."""
    assert OpenAIChatModel("gpt-4o-mini", api_key="k").profile.cumulative_stream_deltas is False
    assert DeepSeekChatModel("deepseek-chat", api_key="k").profile.cumulative_stream_deltas \
        is False
    assert GLMChatModel("glm-4.6", api_key="k").profile.cumulative_stream_deltas is False
    elsewhere = OpenAIChatModel("gpt-4o-mini", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert elsewhere.profile.cumulative_stream_deltas is None
    assert DashScopeChatModel("qwen-plus", api_key="k").profile.cumulative_stream_deltas is None
