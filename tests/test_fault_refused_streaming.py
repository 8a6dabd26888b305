"""Vendor fault: a server that refuses to stream the request.

OpenAI's o1 models at launch answered a streamed request with 400
"Unsupported value: 'stream' does not support true with this model. Only the
default (false) value is supported." (code ``unsupported_value``, param
``stream``); Groq, before it streamed tool calls, "Tool and function calls do
not currently support streaming" (groq/groq-python#27). Every ``stream()``
call (and every call of a model made with ``stream=True``) failed with a
``BadRequestError``. The request now goes again unstreamed, the whole reply
is yielded as the same events, and the model asks for whole replies from
then on.

Served by the OpenAI fake refusing ``stream: true`` as those servers did."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import Complete, ReActAgent
from agentflow.events import ReasoningChunk
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake, openai_error
from tests.provider_scenarios import FAST

O1 = ("Unsupported value: 'stream' does not support true with this model. Only the default "
      "(false) value is supported.")
GROQ = "Tool and function calls do not currently support streaming"


class NoStreamFake(OpenAIFake):
    """Refuses ``stream: true`` with ``message``."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        if body.get("stream"):
            return openai_error(400, self.message, param="stream", code="unsupported_value")
        return super().validate(body)


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "18C"


@pytest.mark.parametrize("message", [O1, GROQ], ids=["o1", "groq"])
async def test_a_refused_stream_is_sent_whole_and_streams_its_events(message: str) -> None:
    async with NoStreamFake(message) as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="It is 18C in Paris."), FakeReply(text="Still 18C."))
        async with OpenAIChatModel("o1-mini", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("s", model, tools=[get_weather])
            events = [e async for e in agent.stream("Weather in Paris?")]
            again = [e async for e in agent.stream("And now?")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "It is 18C in Paris."
    assert any(isinstance(e, ReasoningChunk) for e in events)
    assert isinstance(again[-1], Complete) and again[-1].message.text == "Still 18C."
    assert len(fake.requests) == 4  # one refusal, then whole replies at once
    assert not any(b.get("stream") or "stream_options" in b for b in fake.bodies[1:])
