"""Vendor fault: contentless SSE frames and a byte-order mark in a stream.

Relays and gateways in front of OpenAI-compatible servers keep long streams
alive with a bare ``data:`` frame (no payload), and some put a UTF-8
byte-order mark before the first frame. The WHATWG event-stream rules
dispatch no event for an empty data buffer and ignore one leading BOM; the
stream was read as broken instead ("malformed stream event: not JSON",
"empty reply"), so a healthy reply failed (openai/openai-go#621,
openai/openai-python#2722, NousResearch/hermes-agent#111887).

Served by a fake OpenAI server that sends such frames, streamed, through the
public API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

BOM = b"\xef\xbb\xbf"


class RelayFake(OpenAIFake):
    """OpenAI behind a relay: a bare ``data:`` frame (with or without a space
    after the colon) between every two frames, and a BOM first."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = super().render_events(reply, body)
        kept = [frame for pair in zip(frames, [b"data:\n\n", b"data: \r\n\r\n"] * len(frames),
                                      strict=False) for frame in pair]
        return [BOM + kept[0], *kept[1:]]


class Ticket(BaseModel):
    id: int
    title: str


async def _stream(agent: ReActAgent, output: Any = None) -> Complete[Any]:
    events = [e async for e in agent.stream("the ticket", output)]
    assert isinstance(events[-1], Complete)
    return events[-1]


async def test_a_text_reply_through_a_relay() -> None:
    async with RelayFake() as fake:
        fake.add(FakeReply(text="Ticket 7 is about the login page.", chunk_size=4))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            done = await _stream(ReActAgent("r", model))
    assert done.message.text == "Ticket 7 is about the login page."
    assert done.usage.known


@pytest.mark.parametrize("tool", [True, False], ids=["tool", "native"])
async def test_structured_output_through_a_relay(tool: bool) -> None:
    data = {"id": 7, "title": "login page"}
    async with RelayFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response", data)]) if tool
                 else FakeReply(text='{"id": 7, "title": "login page"}'))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            output = OutputConfig(strategy=ToolStrategy()) if tool else None
            done = await _stream(ReActAgent("r", model, output=output), Ticket)
    assert done.output == Ticket(**data)
    assert len(fake.requests) == 1
