"""Vendor fault: a stream that closes by sending the whole reply again.

Some OpenAI-style servers and proxies end a stream of ``delta`` chunks with
one more chunk shaped like a whole reply: its choice holds ``message`` (all
the text, and the calls, so far) instead of a last ``delta``
(abundantbeing/hermes-browser-extension#11,
https://github.com/abundantbeing/hermes-browser-extension/issues/11; MiniMax
does it too, its own parser already read it so). The generic adapter read
that ``message`` as one more delta: the text came out twice, JSON output
became ``{...}{...}`` and a call's arguments were doubled. The official SDK
(openai-python's ``ChatCompletionChunk``) reads ``delta`` alone in a stream;
the closing ``message`` now gives only its finish reason and usage. A whole
reply, and a stream that sends ``message`` objects from its first chunk
(nothing to repeat), are read as before.

Served by the OpenAI fake (an OpenAI-compatible server), streamed, through
the public API."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, ReasoningChunk
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class Repeating(OpenAIFake):
    """Deltas as usual, then the reply once more as a ``message``: in the
    finish chunk itself (``"chunk"``), or as a whole ``chat.completion``
    frame after it (``"completion"``)."""

    def __init__(self, shape: str) -> None:
        super().__init__()
        self.shape = shape

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frames = super().tail_frames(reply, body)
        whole = self.render_json(reply, body)
        if self.shape == "chunk":
            choice = frames[0]["choices"][0]
            del choice["delta"]
            choice["message"] = whole["choices"][0]["message"]
            return frames
        return [*frames, whole]


class City(BaseModel):
    name: str
    country: str


SHAPES = pytest.mark.parametrize("shape", ["chunk", "completion"])


@SHAPES
async def test_the_closing_message_adds_nothing_to_the_text(shape: str) -> None:
    async with Repeating(shape) as fake:
        fake.add(FakeReply(text='{"name": "Paris", "country": "FR"}'))
        async with OpenAIChatModel("some-model", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert reply.output == City(name="Paris", country="FR")
    assert len(fake.bodies) == 1  # read at once: no output retry


@SHAPES
async def test_a_text_reply_comes_out_once(shape: str) -> None:
    async with Repeating(shape) as fake:
        fake.add(FakeReply(text="The Louvre is in Paris."),
                 FakeReply(text="The Louvre is in Paris."))
        async with OpenAIChatModel("some-model", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            agent = ReActAgent("a", model)
            streamed = [e.text async for e in agent.stream("Where is the Louvre?")
                        if isinstance(e, ReasoningChunk)]
            reply = await agent.call("And again?")
    assert "".join(streamed) == "The Louvre is in Paris."
    assert reply.text == "The Louvre is in Paris."


@SHAPES
async def test_a_repeated_call_runs_once_with_its_arguments(shape: str) -> None:
    cities: list[str] = []

    def get_weather(city: str) -> str:
        """The weather in a city."""
        cities.append(city)
        return f"{city}: sunny"

    async with Repeating(shape) as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="Sunny."))
        async with OpenAIChatModel("some-model", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            reply = await ReActAgent("a", model, tools=[get_weather]).call("Weather?")
    assert cities == ["Paris"]
    assert reply.text == "Sunny."


@pytest.mark.parametrize("role", [False, True], ids=["alone", "after_role"])
async def test_a_stream_of_messages_alone_is_read_whole(role: bool) -> None:
    """A server that streams one ``message`` chunk holding the whole reply
    (no text before it; MiniMax after a bare ``role`` delta) is read as it
    was: nothing there repeats."""

    class OneMessage(OpenAIFake):
        def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
            return [self.chunk(body, {"role": "assistant", "content": ""})] if role else []

        def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
            frame = self.render_json(reply, body)
            frame["object"] = "chat.completion.chunk"
            return [frame]

    async with OneMessage() as fake:
        fake.add(FakeReply(text='{"name": "Rome", "country": "IT"}'))
        async with OpenAIChatModel("some-model", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            reply = await ReActAgent("a", model).call("Where is the Colosseum?", City)
    assert reply.output == City(name="Rome", country="IT")
