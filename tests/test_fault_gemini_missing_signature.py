"""Vendor fault: a Gemini request refused for a function call without its
thought signature was retried as it was, or read as a failed generation.

A model that validates signatures refuses history whose first
``functionCall`` of a step has none ("Request has at least one thought
signature missing": finish reason ``MISSING_THOUGHT_SIGNATURE``, google-genai
``FinishReason``; or the 400 "Function call is missing a thought_signature in
functionCall parts", ai.google.dev/gemini-api/docs/thought-signatures). The
adapter signs calls the model did not make with Google's documented stand-in
only for names it knows validate them (``gemini-3*``); under an alias
(``gemini-pro-latest``) a conversation begun on another model failed: the
finish reason became a retryable ``ServerError`` that failed the same on
every retry. Now the request is sent again with the stand-in, and the model
instance signs such calls from then on.

Served by the Gemini fake (an alias that validates as Gemini 3 does, refusing
by 400 or by finish reason), streamed and whole, through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from agentflow import AgentState, ReActAgent
from agentflow.providers._gemini_request import FOREIGN_SIGNATURE
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply, sse
from tests.fakes.gemini import BYPASSES, MISSING_SIGNATURE, GeminiFake, gemini_error
from tests.provider_scenarios import FAST

ALIAS = "gemini-pro-latest"
"""A name the adapter cannot tell validates signatures; the fake's alias for Gemini 3."""


def _unsigned(body: Any, signatures: set[str]) -> bool:
    """Whether a step's first ``functionCall`` in ``body`` lacks a valid signature."""
    for turn in body.get("contents", []):
        calls = [p for p in turn.get("parts", []) if "functionCall" in p]
        signed = calls[0].get("thoughtSignature") if calls else None
        if calls and signed not in signatures and signed not in BYPASSES:
            return True
    return False


class Aliased(GeminiFake):
    """Serves ``ALIAS`` as Gemini 3: unsigned history is refused by a 400
    (``by_finish`` False) or by a candidate ended ``MISSING_THOUGHT_SIGNATURE``."""

    def __init__(self, by_finish: bool) -> None:
        super().__init__()
        self.by_finish = by_finish

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        refused = super().check(request, body)
        if (refused is None and not self.by_finish and self._model(request.path) == ALIAS
                and _unsigned(body, set(self.signatures))):
            return gemini_error(400, MISSING_SIGNATURE)
        return refused

    def _refused(self, body: Any) -> dict[str, Any] | None:
        if not (self.by_finish and self._current_model == ALIAS
                and _unsigned(body, set(self.signatures))):
            return None
        return {"candidates": [{"finishReason": "MISSING_THOUGHT_SIGNATURE", "index": 0}],
                "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
                "modelVersion": ALIAS}

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return self._refused(body) or super().render_json(reply, body)

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        refused = self._refused(body)
        return [sse(refused)] if refused else super().render_events(reply, body)


async def lookup(query: str) -> str:
    """Look a contact up."""
    return f"{query}: ann@example.org"


@pytest.mark.parametrize("by_finish", [True, False], ids=["finish", "400"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_foreign_call_refused_unsigned_is_sent_again_signed(
        by_finish: bool, stream: bool) -> None:
    async with Aliased(by_finish) as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]),
                 FakeReply(text="ok"))
        if by_finish:  # a reply the refusal takes the place of (a 400 takes none)
            fake.add(FakeReply(text="refused"))
        fake.add(FakeReply(text="done"), FakeReply(text="again"))
        state = AgentState()
        async with GeminiChatModel("gemini-2.0-flash", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as old:
            await ReActAgent("g", old, tools=[lookup]).call("Find Ann", state=state)
        async with GeminiChatModel(ALIAS, base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as new:
            agent = ReActAgent("g", new, tools=[lookup])
            assert (await agent.call("And Bob?", state=state)).text == "done"
            assert (await agent.call("And Cy?", state=state)).text == "again"
    called = [[t for t in b["contents"] if any("functionCall" in p for p in t["parts"])]
              for b in fake.bodies]
    assert "thoughtSignature" not in called[2][0]["parts"][0]  # the refused request
    assert called[3][0]["parts"][0]["thoughtSignature"] == FOREIGN_SIGNATURE  # sent again
    assert len(fake.bodies) == 5  # the instance signs from then on: no refusal
    assert called[4][0]["parts"][0]["thoughtSignature"] == FOREIGN_SIGNATURE
