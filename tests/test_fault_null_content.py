"""Vendor fault: a server that refuses ``content: null`` on a tool-call turn.

llama.cpp's server from build b5331 answers an assistant turn of tool calls
whose ``content`` is ``null`` (as OpenAI itself writes it, and as llama.cpp
returns it) with 500 "Expected 'content' to be a string or an array"
(ggml-org/llama.cpp#13471, browser-use/browser-use#1635): every tool loop
failed at its second request, after the HTTP layer had retried the 500 as
a server fault. The refusal is now a ``BadRequestError`` and the request
goes again with ``content: ""``, and the model sends that from then on.

Served by an OpenAI fake answering as those llama.cpp builds do."""

from __future__ import annotations

from typing import Any

from agentflow import ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class LlamaCppFake(OpenAIFake):
    """Refuses a message whose ``content`` is ``null``, with llama.cpp's 500."""

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        if any(m.get("content") is None for m in body.get("messages") or ()):
            return FakeError(500, {"error": {
                "code": 500, "message": "Expected 'content' to be a string or an array",
                "type": "server_error"}})
        return super().validate(body)


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "18C"


async def test_a_tool_loop_goes_on_with_string_content() -> None:
    async with LlamaCppFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="It is 18C in Paris."),
                 FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Oslo"})]),
                 FakeReply(text="It is 18C in Oslo."))
        async with OpenAIChatModel("qwen3-4b", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            agent = ReActAgent("l", model, tools=[get_weather])
            assert (await agent.call("Weather in Paris?")).text == "It is 18C in Paris."
            assert (await agent.call("Weather in Oslo?")).text == "It is 18C in Oslo."
    assert len(fake.requests) == 5  # one refusal, never retried as a server fault
    turn = next(m for m in fake.bodies[2]["messages"] if m.get("tool_calls"))
    assert turn["content"] == ""
