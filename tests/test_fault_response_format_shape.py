"""Vendor fault: a server whose request decoder does not know our
``response_format``.

Hugging Face TGI takes its own ``{"type": "json", "value": schema}`` and
refuses OpenAI's form before its request is read: 422 "Failed to deserialize
the JSON body into the target type: response_format: missing field `value`
at line 1 column 168" (huggingface/huggingface_hub#2744,
https://github.com/huggingface/huggingface_hub/issues/2744), "unknown variant
`json_schema`" on older builds; an older vLLM's validation says
"response_format.type Input should be 'text' or 'json_object'". Each was a
plain ``BadRequestError`` and every structured call on such a server failed.
They are ``UnsupportedFeatureError("native_output")`` now: the engine steps
down to the output tool.

Served by a TGI-like fake (the OpenAI fake with TGI's decoder), through the
public API."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

REFUSALS = {
    "tgi-missing-value": (422, "Failed to deserialize the JSON body into the target type: "
                               "response_format: missing field `value` at line 1 column 168"),
    "tgi-unknown-variant": (422, "Failed to deserialize the JSON body into the target type: "
                                 "response_format: unknown variant `json_schema`, expected "
                                 "`json` or `regex` at line 1 column 210"),
    "old-vllm": (400, "1 validation error for ChatCompletionRequest\nresponse_format.type\n"
                      "  Input should be 'text' or 'json_object' [type=literal_error, "
                      "input_value='json_schema', input_type=str]"),
}


class Decoding(OpenAIFake):
    """A server refusing any ``response_format`` with ``refusal`` (TGI's 422 is
    plain text from its JSON extractor; vLLM's an OpenAI-style error)."""

    def __init__(self, refusal: tuple[int, str]) -> None:
        super().__init__()
        self.refusal = refusal

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        if isinstance(body, dict) and body.get("response_format"):
            status, message = self.refusal
            if status == 422:
                return FakeError(status, message.encode())
            return FakeError(status, {"object": "error", "message": message,
                                      "type": "BadRequestError", "param": None, "code": 400})
        return super().check(request, body)


class City(BaseModel):
    name: str
    country: str


@pytest.mark.parametrize("refusal", list(REFUSALS), ids=list(REFUSALS))
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_the_call_steps_down_to_the_output_tool(refusal: str, stream: bool) -> None:
    async with Decoding(REFUSALS[refusal]) as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response",
                                                {"name": "Paris", "country": "FR"})]))
        async with OpenAIChatModel("HuggingFaceH4/zephyr-7b-beta", base_url=fake.url,
                                   api_key="k", settings=FAST, stream=stream) as model:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert reply.output == City(name="Paris", country="FR")
    assert "response_format" in fake.requests[0].body
    assert "response_format" not in fake.requests[-1].body
