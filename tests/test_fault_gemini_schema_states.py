"""Vendor fault: Gemini refuses a schema as "too many states for serving".

Gemini answers a schema it will not constrain decoding by (long enum or
property names, nested arrays with length limits, numbers with bounds, many
tools) with 400 INVALID_ARGUMENT "The specified schema produces a constraint
that has too many states for serving. Typical causes of this error are ..."
(googleapis/python-genai#660, https://github.com/googleapis/python-genai/issues/660;
cline/cline#7897; bethington/ghidra-mcp#440). The message names no field, so
it read as a plain ``BadRequestError`` and the call failed, where a refused
``response_schema`` steps down to the output tool and a refused tool schema
to the prompt. It is an ``UnsupportedFeatureError`` of the part that carried
the schema now (the response schema when the request had one, else the
output tool's parameters), so the engine steps down the same way, natively,
on the tool path and through Gemini's OpenAI-compatible endpoint.

Served by the Gemini and OpenAI fakes, through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, ToolStrategy
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.gemini import GeminiFake, gemini_error
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STATES = ("The specified schema produces a constraint that has too many states for serving.  "
          "Typical causes of this error are schemas with lots of text (for example, very long "
          "property or enum names), schemas with long array length limits (especially when "
          "nested), or schemas using complex value matchers (for example, integers or numbers "
          "with minimum/maximum bounds or strings with complex formats like date-time)")
ANSWER = {"name": "Louvre", "country": "FR"}


class City(BaseModel):
    name: str
    country: str


@pytest.mark.parametrize("model_name", ["gemini-2.5-flash", "gemini-3-flash-preview"])
async def test_a_refused_response_schema_steps_down_to_the_tool(model_name: str) -> None:
    async with GeminiFake() as fake:
        fake.add(gemini_error(400, STATES), FakeReply(tool_calls=[
            FakeCall("generate_response", ANSWER)]))
        model = GeminiChatModel(model_name, base_url=fake.url, api_key="k", settings=FAST)
        try:
            reply = await ReActAgent("g", model).call("Where is the Louvre?", City)
        finally:
            await model.aclose()
    assert reply.output == City(**ANSWER)
    first, second = fake.bodies
    assert "responseSchema" in str(first["generationConfig"]) or "responseJsonSchema" in str(
        first["generationConfig"])
    assert "generate_response" in str(second["tools"])


async def test_a_refused_output_tool_steps_down_to_the_prompt() -> None:
    async with GeminiFake() as fake:
        fake.add(gemini_error(400, STATES), FakeReply(text='{"name": "Louvre", "country": "FR"}'))
        model = GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                settings=FAST)
        try:
            reply = await ReActAgent("g", model).call("Where is the Louvre?", City,
                                                      strategy=ToolStrategy())
        finally:
            await model.aclose()
    assert reply.output == City(**ANSWER)
    first, second = fake.bodies
    assert "generate_response" in str(first["tools"]) and "tools" not in second


async def test_the_openai_compatible_endpoint_steps_down_too() -> None:
    refused = FakeError(400, [{"error": {"code": 400, "message": STATES,
                                         "status": "INVALID_ARGUMENT"}}])
    async with OpenAIFake() as fake:
        fake.add(refused, FakeReply(tool_calls=[FakeCall("generate_response", ANSWER)]))
        async with OpenAIChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            reply = await ReActAgent("g", model).call("Where is the Louvre?", City)
    assert reply.output == City(**ANSWER)
    assert fake.bodies[0].get("response_format") and not fake.bodies[1].get("response_format")
