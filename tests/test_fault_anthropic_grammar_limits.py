"""Vendor fault: Anthropic's structured outputs refuse a schema as too big to compile.

Anthropic compiles ``output_config.format``'s schema into a decoding grammar
and refuses one past undocumented limits with 400 ``invalid_request_error``:
"The compiled grammar is too large, which would cause performance issues.
Simplify your tool schemas or reduce the number of strict tools."
(anthropics/anthropic-sdk-python#1185,
https://github.com/anthropics/anthropic-sdk-python/issues/1185), "Schemas
contains too many optional parameters" past 24 (anthropics/claude-code#55539),
"Schema is too complex for compilation" (langchain-ai/langchainjs#11100). The
message names neither ``output_config`` nor a schema field, so it read as a
plain ``BadRequestError`` and the call failed on a valid schema. It is an
``UnsupportedFeatureError("native_output")`` now: the engine steps down to
the output tool, whose schema Anthropic does not compile (no strict tools).

Served by the Anthropic fake, through the public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, UnsupportedFeatureError
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake, anthropic_error
from tests.fakes.base import FakeCall, FakeReply
from tests.provider_scenarios import FAST

LIMITS = [
    "The compiled grammar is too large, which would cause performance issues. Simplify your "
    "tool schemas or reduce the number of strict tools.",
    "Schemas contains too many optional parameters (31), which would cause performance "
    "issues. The limit is 24.",
    "Schema is too complex for compilation. Try reducing the number of tools or simplifying "
    "tool schemas.",
]
ANSWER = {"name": "Louvre", "country": "FR"}


class City(BaseModel):
    name: str
    country: str


@pytest.mark.parametrize("message", LIMITS, ids=["grammar", "optionals", "complex"])
async def test_the_call_steps_down_to_the_output_tool(message: str) -> None:
    async with AnthropicFake() as fake:
        fake.add(anthropic_error(400, "invalid_request_error", message),
                 FakeReply(tool_calls=[FakeCall("generate_response", ANSWER)]))
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   settings=FAST)
        try:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
        finally:
            await model.aclose()
    assert reply.output == City(**ANSWER)
    first, second = fake.bodies
    assert "output_config" in first and "output_config" not in second
    assert [t["name"] for t in second["tools"]] == ["generate_response"]


def test_the_refusal_is_typed() -> None:
    from agentflow.providers._anthropic_errors import map_error
    body = (b'{"type":"error","error":{"type":"invalid_request_error","message":"'
            + LIMITS[0].encode() + b'"},"request_id":"req_1"}')
    error = map_error(400, {}, body)
    assert isinstance(error, UnsupportedFeatureError) and error.feature == "native_output"
    assert "compiled grammar is too large" in str(error) and not error.retryable
