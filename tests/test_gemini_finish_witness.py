"""Every ``finishReason`` google-genai knows (3.3 ``types.FinishReason``, the
witness) is read as what it means: a filter, a cut reply, a failed
generation or a normal stop. ``CONTINUATION`` ("reached the per-request
token limit, but generation is not yet complete") was ``other``, so a cut
reply passed for a whole one; ``ESCALATION``, ``MODEL_ARMOR`` and
``PUP_LIMITED_DISABLED`` were ``other`` too, where a filter stops a reply.
A value the SDK adds later fails here until it is placed.

Served by the Gemini fake on 127.0.0.1, through the public API."""

from __future__ import annotations

import pytest
from google.genai import types

from agentflow.messages import Msg
from agentflow.providers._openai_finish import finish_reason
from agentflow.providers.gemini import GeminiChatModel
from agentflow.reply import generate
from tests.fakes.base import FakeReply
from tests.fakes.gemini import GeminiFake
from tests.provider_scenarios import FAST

EXPECTED = {
    "STOP": "stop", "MAX_TOKENS": "length", "CONTINUATION": "length",
    "MALFORMED_FUNCTION_CALL": "error", "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error", "MALFORMED_RESPONSE": "error",
    "FINISH_REASON_UNSPECIFIED": "other", "OTHER": "other",
    "IMAGE_OTHER": "other", "NO_IMAGE": "other",  # image generation: not asked for here
}
"""Each value that is not a filter. Every other value is ``content_filter``,
but ``MISSING_THOUGHT_SIGNATURE`` (a fault of the request's history: a
``BadRequestError``, tests/test_providers_gemini.py) and
``HARM_PROBABILITY_UNSPECIFIED`` (an enum member the SDK's generator leaked
into ``FinishReason``; no finish reason)."""
NOT_FINISHES = {"MISSING_THOUGHT_SIGNATURE", "HARM_PROBABILITY_UNSPECIFIED"}


@pytest.mark.parametrize("raw", sorted(m.value for m in types.FinishReason
                                       if m.value not in NOT_FINISHES))
async def test_every_sdk_finish_reason_is_placed(raw: str) -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text='{"partial": "an', finish_reason=raw))
        model = GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                settings=FAST)
        try:
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert reply.finish_reason == EXPECTED.get(raw, "content_filter")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_continuation_is_a_cut_reply(stream: bool) -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply(text='{"partial": "an', finish_reason="CONTINUATION"))
        model = GeminiChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                stream=stream, settings=FAST)
        try:
            reply = await generate(model, [Msg.user("hi")])
        finally:
            await model.aclose()
    assert (reply.finish_reason, reply.message.text) == ("length", '{"partial": "an')


@pytest.mark.parametrize("raw", sorted(m.value for m in types.FinishReason
                                       if m.value not in NOT_FINISHES | {"STOP"}))
def test_a_gateway_relaying_gemini_words_reads_them_alike(raw: str) -> None:
    """OpenAI-compatible gateways relay Gemini's words unmapped (``_openai_finish``)."""
    assert finish_reason(raw) == EXPECTED.get(raw, "content_filter")
