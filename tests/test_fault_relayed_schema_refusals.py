"""Vendor fault: Gemini's schema refusal relayed by an OpenAI-compatible gateway.

Gemini refuses a schema keyword it does not take with a 400 that names the
keyword and the field path of the part that carried it: "Invalid JSON
payload received. Unknown name "$schema" at 'generation_config.response_schema':
Cannot find field." (through new-api, QuantumNous/new-api#1037), "[gemini/
gemini-3.1-pro-preview] [400]: Invalid JSON payload received. Unknown name
"additionalProperties" at 'tools[0].function_declarations[0].parameters'"
(through LiteLLM, openswarm-ai/openswarm#24). In an OpenAI error envelope
these words said nothing the adapter read as "unsupported", so the call
failed with ``BadRequestError`` where the native Gemini adapter steps down a
strategy (native -> tool -> prompt). Now the field path names the refused
part: the response format (``native_output``) or a function's parameters
(``tool_schema``), in an OpenAI envelope or in Google's own (the RPC error
Gemini's OpenAI endpoint sends).

Served by the OpenAI fake on 127.0.0.1, through the public API."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, OutputRetry, ReActAgent, ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

RESPONSE_SCHEMA = ("Invalid JSON payload received. Unknown name \"$schema\" at "
                   "'generation_config.response_schema': Cannot find field.")
PARAMETERS = ("[gemini/gemini-3.1-pro-preview] [400]: Invalid JSON payload received. Unknown "
              "name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters': "
              "Cannot find field.")


def openai_envelope(message: str) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": "invalid_request_error",
                                   "param": None, "code": "400"}})


def rpc_envelope(message: str) -> bytes:
    return orjson.dumps([{"error": {"code": 400, "message": message,
                                    "status": "INVALID_ARGUMENT"}}])


ENVELOPES = {"openai": openai_envelope, "rpc": rpc_envelope}


class Ticket(BaseModel):
    id: int
    title: str


DATA = {"id": 7, "title": "login page"}


async def _complete(fake: OpenAIFake, output: OutputConfig | None = None) -> Complete[Any]:
    async with OpenAIChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                               stream=True, settings=FAST) as model:
        events = [e async for e in ReActAgent("g", model, output=output).stream(
            "the ticket", Ticket)]
    assert isinstance(events[-1], Complete)
    assert any(isinstance(e, OutputRetry) and e.reason == "degradation" for e in events)
    return events[-1]


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
async def test_a_refused_response_schema_takes_the_tool_path(envelope: str) -> None:
    async with OpenAIFake() as fake:
        fake.add_error(400, ENVELOPES[envelope](RESPONSE_SCHEMA))
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response", DATA)]))
        done = await _complete(fake)
        first, second = fake.bodies
    assert done.output == Ticket(**DATA)
    assert "response_format" in first and "response_format" not in second
    assert [t["function"]["name"] for t in second["tools"]] == ["generate_response"]


@pytest.mark.parametrize("envelope", sorted(ENVELOPES))
async def test_refused_tool_parameters_take_the_prompt_path(envelope: str) -> None:
    async with OpenAIFake() as fake:
        fake.add_error(400, ENVELOPES[envelope](PARAMETERS))
        fake.add(FakeReply(text='{"id": 7, "title": "login page"}'))
        done = await _complete(fake, OutputConfig(strategy=ToolStrategy()))
        first, second = fake.bodies
    assert done.output == Ticket(**DATA)
    assert first.get("tools") and not second.get("tools")
