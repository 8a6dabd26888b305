"""Vendor fault: an emoji's escaped surrogate pair cut between two stream events.

A gateway that re-chunks text by UTF-16 code units (JavaScript strings) can
end one event with the first half of a pair and start the next with the
second: ``{"content": "Hi \\ud83d"}`` then ``{"content": "\\ude00 there"}``
(each half JSON-escaped on its own, as ``JSON.stringify`` writes a lone
surrogate; elizaOS/eliza#30904, elie222/rakazo#416). orjson refuses a lone
surrogate escape, so a healthy reply failed as "malformed stream event: not
JSON". The events are read, and the reply's text, its structured output and
the history sent back hold the emoji whole, and no streamed piece holds a
lone surrogate (it could not be printed, encoded or parsed downstream).

Served by an OpenAI fake that chunks by UTF-16 code units, streamed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import AgentState, Complete, OutputPartial, ReActAgent, ReasoningChunk
from agentflow.model import ModelProfile
from agentflow.providers.openai import OpenAIChatModel
from agentflow.testing import Reply, ScriptedModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

TEXT = "Bonjour \U0001f600, bravo \U0001f389 fin"


def code_unit_pieces(text: str, size: int) -> list[str]:
    """``text`` cut every ``size`` UTF-16 code units and inside every pair."""
    units = text.encode("utf-16-le").decode("utf-16-le", "surrogatepass")
    wide = "".join(c if ord(c) < 0x10000 else
                   chr(0xD800 + ((ord(c) - 0x10000) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF))
                   for c in units)
    pieces: list[str] = []
    piece = ""
    for unit in wide:
        piece += unit
        if len(piece) == size or "\ud800" <= unit <= "\udbff":
            pieces.append(piece)
            piece = ""
    return [*pieces, piece] if piece else pieces


class CodeUnitFake(OpenAIFake):
    """OpenAI behind a gateway that chunks text by UTF-16 code units and
    escapes each chunk on its own (``JSON.stringify``)."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = [self.chunk(body, {"role": "assistant", "content": ""})]
        frames += [self.chunk(body, {"content": p}) for p in code_unit_pieces(reply.text, 3)]
        frames += self.tail_frames(reply, body)
        return [b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames] + [
            b"data: [DONE]\n\n"]


class Greeting(BaseModel):
    text: str


def test_the_fake_cuts_pairs() -> None:
    assert any(len(p) and "\ud800" <= p[-1] <= "\udbff" for p in code_unit_pieces(TEXT, 3))


async def _stream(agent: ReActAgent, output: Any, state: AgentState) -> Complete[Any]:
    events = [e async for e in agent.stream("Say hi", output, state=state)]
    for event in events:  # every streamed piece can be printed, sent and stored
        if isinstance(event, ReasoningChunk):
            event.text.encode()
    assert isinstance(events[-1], Complete)
    return events[-1]


@pytest.mark.parametrize("structured", [False, True], ids=["text", "native"])
async def test_a_pair_cut_between_events_is_one_character(structured: bool) -> None:
    state = AgentState()
    async with CodeUnitFake() as fake:
        answer = json.dumps({"text": TEXT}, ensure_ascii=False) if structured else TEXT
        fake.add(FakeReply(text=answer), FakeReply(text="ok"))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("g", model)
            done = await _stream(agent, Greeting if structured else None, state)
            await _stream(agent, None, state)  # the history goes back to the server
    if structured:
        assert done.output == Greeting(text=TEXT)
    else:
        assert done.message.text == TEXT
    sent = next(m["content"] for m in fake.bodies[1]["messages"] if m["role"] == "assistant")
    assert (json.loads(sent)["text"] if structured else sent) == TEXT


async def test_a_custom_models_split_pair_never_breaks_the_partial_output() -> None:
    # a ChatModel of the caller's own whose text holds an emoji as two code points
    halves = TEXT.encode("utf-16-le").decode("utf-16-le", "surrogatepass")
    split = "".join(c if ord(c) < 0x10000 else
                    chr(0xD800 + ((ord(c) - 0x10000) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF))
                    for c in halves)
    model = ScriptedModel([Reply(text='{"text": "' + split + '"}', chunk_size=3)],
                          profile=ModelProfile(native_output="json_schema"))
    events = [e async for e in ReActAgent("g", model).stream("Say hi", Greeting)]
    partials = [e.data for e in events if isinstance(e, OutputPartial)]
    assert partials and partials[-1] == {"text": TEXT}
    assert isinstance(events[-1], Complete) and events[-1].output == Greeting(text=TEXT)
