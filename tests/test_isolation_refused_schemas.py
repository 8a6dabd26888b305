"""One user's schema refused by the vendor never changes another user's
requests on a shared agent.

Gemini refuses a schema it will not constrain decoding by ("too many states
for serving", a keyword its response schema does not know); a
constrained-decoding server refuses a schema its engine cannot compile; a
gateway relays Gemini's refusal of a response-schema keyword. That
refusal is of that schema, not of native output: it was remembered for the
model, so after one user's large form every later call of the shared agent,
whatever its schema, lost native output for the tool path (other requests,
other prompts, other costs). Now the refused schema alone steps down, and is
remembered: its next call goes to the tool path at once, without a second
refused request."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel, Field

from agentflow import ReActAgent
from agentflow.model import ChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.gemini import GeminiFake, gemini_error
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST
from tests.test_fault_gemini_schema_states import STATES
from tests.test_fault_relayed_schema_refusals import RESPONSE_SCHEMA, openai_envelope


class City(BaseModel):
    name: str
    country: str


class Form(BaseModel):
    """A large form (the schema the vendor refuses)."""

    serial: str = Field(pattern=r"^[A-Z]{3}-\d{8}$")
    codes: list[list[int]] = Field(max_length=500)


CITY = {"name": "Louvre", "country": "FR"}
FORM = {"serial": "ABC-12345678", "codes": [[1]]}


def _native(body: dict[str, Any], vendor: str) -> bool:
    if vendor == "gemini":
        config = str(body.get("generationConfig", {}))
        return "responseSchema" in config or "responseJsonSchema" in config
    return bool(body.get("response_format"))


@pytest.mark.parametrize("vendor", ["gemini", "openai", "gateway"])
async def test_a_refused_schema_steps_that_schema_down_only(vendor: str) -> None:
    refused = (gemini_error(400, STATES) if vendor == "gemini" else FakeError(
        400, [{"error": {"code": 400, "message": STATES, "status": "INVALID_ARGUMENT"}}])
        if vendor == "openai" else FakeError(400, orjson.loads(openai_envelope(RESPONSE_SCHEMA))))
    fake: GeminiFake | OpenAIFake = GeminiFake() if vendor == "gemini" else OpenAIFake()
    async with fake:
        fake.add(refused,  # user A's form: refused, then by the output tool
                 FakeReply(tool_calls=[FakeCall("generate_response", FORM)]),
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'),  # user B: native
                 FakeReply(tool_calls=[FakeCall("generate_response", FORM)]),  # A again
                 FakeReply(text='{"name": "Louvre", "country": "FR"}'))  # B again
        model: ChatModel = (
            GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k", settings=FAST)
            if vendor == "gemini" else
            OpenAIChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k", settings=FAST))
        agent = ReActAgent("shared", model)
        try:
            assert (await agent.call("Read the form", Form)).output == Form(**FORM)
            assert (await agent.call("Where is the Louvre?", City)).output == City(**CITY)
            assert (await agent.call("Read the form", Form)).output == Form(**FORM)
            assert (await agent.call("Where is the Louvre?", City)).output == City(**CITY)
        finally:
            await model.aclose()  # type: ignore[attr-defined]
    native = [_native(b, vendor) for b in fake.bodies]
    # A: refused native, tool; B: native; A: straight to the tool; B: native
    assert native == [True, False, True, False, True]
