"""Vendor fault: Gemini's OpenAI-compatible endpoint drops the tool loop's
thought signature.

Through ``https://generativelanguage.googleapis.com/v1beta/openai`` (and
Vertex AI's OpenAI-compatible endpoint) a Gemini 3 tool call carries its
thought signature in an extension field of the call, ``"extra_content":
{"google": {"thought_signature": "..."}}``, and the next request must hold
it on that call in the history, else 400 ``[{"error": {"code": 400,
"message": "Function call is missing a thought_signature in functionCall
parts. ...", "status": "INVALID_ARGUMENT"}}]`` (crmne/ruby_llm#591,
https://github.com/crmne/ruby_llm/issues/591; securo-finance/securo#884;
Gitlawb/openclaude#67; Google's "OpenAI compatibility" guide, "Thought
signatures"). The OpenAI-compatible adapter read the call and dropped the
field, so every tool loop on Gemini 3 failed at its second request. It is
kept on the call now (``ToolUseBlock.provider_data``) and sent back as it
came, streamed and whole; a vendor's own host (OpenAI's), which never sends
it, is never sent one.

Served by a Gemini-compatible fake (the OpenAI fake with Gemini's rule),
through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from agentflow import AgentState, BadRequestError, Msg, ReActAgent
from agentflow.messages import ToolResultBlock, ToolUseBlock
from agentflow.model import GenerateOptions
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
MISSING = ("Function call is missing a thought_signature in functionCall parts. This is "
           "required for tools to work correctly, and missing thought_signature may lead to "
           "degraded model performance. Additional data, function call `default_api:{name}` , "
           "position {position}. Please refer to "
           "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.")


class GeminiCompat(OpenAIFake):
    """Gemini 3 behind its OpenAI-compatible endpoint: each tool call carries
    ``extra_content.google.thought_signature``; a request whose history holds
    one of those calls without it is refused as Google refuses it."""

    def __init__(self) -> None:
        super().__init__()
        self.issued: dict[str, str] = {}

    def tool_json(self, index: int, call: FakeCall, reply: FakeReply) -> dict[str, Any]:
        out = super().tool_json(index, call, reply)
        signature = f"sig-{len(self.issued)}-{call.name}"
        self.issued[out["id"]] = signature
        return {"extra_content": {"google": {"thought_signature": signature}}, **out}

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        for position, message in enumerate(body.get("messages") or []):
            for n, call in enumerate(message.get("tool_calls") or []):
                given = ((call.get("extra_content") or {}).get("google") or {}).get(
                    "thought_signature")
                wanted = self.issued.get(call.get("id"))
                # a call Gemini made needs its own signature back; a step's first
                # call made elsewhere needs one too, Google's stand-in will do
                if (given != wanted) if wanted else (n == 0 and not given):
                    name = call["function"]["name"]
                    return FakeError(400, [{"error": {
                        "code": 400, "message": MISSING.format(name=name, position=position),
                        "status": "INVALID_ARGUMENT"}}])
        return super().check(request, body)


class City(BaseModel):
    name: str
    country: str


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"


def _model(fake: OpenAIFake, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel("gemini-3-flash-preview", base_url=fake.url, api_key="k",
                           stream=stream, settings=FAST)


@STREAMS
async def test_the_signature_goes_back_with_its_call(stream: bool) -> None:
    async with GeminiCompat() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"}),
                                       FakeCall("get_weather", {"city": "Rome"})]),
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'))
        async with _model(fake, stream) as model:
            reply = await ReActAgent("a", model, tools=[get_weather]).call(
                "Where is the Louvre, and the weather there?", City)
    assert reply.output == City(name="Louvre", country="FR")
    turn = next(m for m in fake.bodies[1]["messages"] if m.get("tool_calls"))
    sent = [call["extra_content"] for call in turn["tool_calls"]]
    assert sent == [{"google": {"thought_signature": s}} for s in fake.issued.values()]


async def test_a_conversation_keeps_it_across_calls() -> None:
    state = AgentState()
    async with GeminiCompat() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text="Sunny in Paris."), FakeReply(text="You are welcome."))
        async with _model(fake, True) as model:
            agent = ReActAgent("a", model, tools=[get_weather])
            await agent.call("Weather in Paris?", state=state)
            assert (await agent.call("Thanks!", state=state)).text == "You are welcome."
    restored = AgentState.from_json(state.to_json())  # persisted with the conversation
    calls = [b for m in restored.memory for b in m.content if isinstance(b, ToolUseBlock)]
    assert calls and all(c.provider_data for c in calls)


async def test_without_it_the_refusal_is_typed() -> None:
    """What the fake refuses: a history that lost the signature (a call made
    elsewhere) is a typed 400 naming Gemini's reason."""
    call = ToolUseBlock("call_0_fake", "get_weather", {"city": "Paris"})
    state = AgentState([Msg.user("Weather?"), Msg("assistant", [call]),
                        Msg("tool", [ToolResultBlock("call_0_fake", "Paris: sunny")])])
    async with GeminiCompat() as fake:
        fake.issued["call_0_fake"] = "sig-x"
        async with _model(fake, False) as model:
            with pytest.raises(BadRequestError) as caught:
                await ReActAgent("a", model, tools=[get_weather]).call("And now?", state=state)
    assert "missing a thought_signature" in str(caught.value)


@STREAMS
async def test_a_history_from_another_model_gets_the_stand_in(stream: bool) -> None:
    """Tool calls in the history that Gemini did not make (another model's,
    a hand-built history) carry no signature; Gemini 3 refuses the step's first
    call without one. Google documents a stand-in for them,
    ``skip_thought_signature_validator`` (ai.google.dev/gemini-api/docs/
    thought-signatures, "FAQs"), which the native adapter already sent; the
    OpenAI-compatible path sends it too now, on each step's first call only,
    and never over a signature that came with the call."""
    calls = [ToolUseBlock("call_a", "get_weather", {"city": "Paris"}),
             ToolUseBlock("call_b", "get_weather", {"city": "Rome"})]
    state = AgentState([Msg.user("Weather in Paris and Rome?"), Msg("assistant", calls),
                        Msg("tool", [ToolResultBlock("call_a", "Paris: sunny"),
                                     ToolResultBlock("call_b", "Rome: rain")])])
    async with GeminiCompat() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": "Paris"})]),
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'))
        async with _model(fake, stream) as model:
            reply = await ReActAgent("a", model, tools=[get_weather]).call(
                "Where is the Louvre?", City, state=state)
    assert reply.output == City(name="Louvre", country="FR")
    first, second = (m for m in fake.bodies[1]["messages"] if m.get("tool_calls"))
    assert first["tool_calls"][0]["extra_content"] == {
        "google": {"thought_signature": "skip_thought_signature_validator"}}
    assert "extra_content" not in first["tool_calls"][1]
    assert second["tool_calls"][0]["extra_content"] == {  # Gemini's own, untouched
        "google": {"thought_signature": next(iter(fake.issued.values()))}}


@pytest.mark.parametrize("name", ["gemini-2.5-flash", "gpt-4o", "qwen3-32b"])
async def test_models_that_never_check_are_never_sent_it(name: str) -> None:
    call = ToolUseBlock("call_1", "get_weather", {"city": "Paris"})
    model = OpenAIChatModel(name, base_url="http://127.0.0.1:9/v1", api_key="k")
    try:
        body = model.build_body([Msg.user("Weather?"), Msg("assistant", [call])], [],
                                GenerateOptions())
    finally:
        await model.aclose()
    assert "extra_content" not in body["messages"][1]["tool_calls"][0]


async def test_openai_itself_is_never_sent_the_field() -> None:
    call = ToolUseBlock("call_1", "get_weather", {"city": "Paris"},
                        provider_data={"openai_extra_content": {"google": {
                            "thought_signature": "sig"}}})
    model = OpenAIChatModel("gpt-4o", api_key="k")
    try:
        body = model.build_body([Msg.user("Weather?"), Msg("assistant", [call])], [],
                                GenerateOptions())
    finally:
        await model.aclose()
    assert "extra_content" not in body["messages"][1]["tool_calls"][0]
