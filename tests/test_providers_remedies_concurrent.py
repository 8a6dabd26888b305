"""A remedy one request applies to a model (``providers._openai_remedies``:
nine-character call ids, no ``strict``, a field sent no more...) while another
request of the same model, built the old way, is in flight: that request's
refusal is the same one, already remedied, and it is sent again the new way,
never raised as "refused for another reason". Two users of one shared agent
whose conversations both need the remedy both get their answers.

Served by the Mistral-like fake (refuses tool-call ids that are not nine
letters and digits); the fake holds both first attempts until both came, so
both are built before either is refused (no timing).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiohttp import web

from agentflow import AgentState, ReActAgent
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.model import GenerateOptions
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

from .test_fault_mistral_call_ids import MistralFake, get_weather
from .test_fault_refused_parameters import ReasoningDeployment

USERS = 2


def held(base: type[OpenAIFake]) -> type[OpenAIFake]:
    """``base``, holding each request it refuses until ``USERS`` such
    requests came (so both are built the old way before either is refused)."""

    class Held(base):  # type: ignore[valid-type,misc]
        refused = 0
        all_in: asyncio.Event | None = None

        async def _handle(self, request: web.Request) -> web.StreamResponse:
            body = orjson.loads(await request.read())
            if self.validate(body) is not None and self.refused < USERS:
                self.refused += 1
                self.all_in = self.all_in or asyncio.Event()
                if self.refused == USERS:
                    self.all_in.set()
                await self.all_in.wait()
            return await super()._handle(request)

    return Held


def _history(user: str) -> AgentState:
    call_id = f"call_{user}_PTLP8xhu3uwZk4l3nlnr"
    return AgentState([
        Msg.user(f"{user}: weather in Paris?"),
        Msg("assistant", [ToolUseBlock(call_id, "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock(call_id, "18C", name="get_weather")]),
        Msg.assistant("It is 18C."),
    ])


def _answer(body: Any) -> FakeReply:
    first = body["messages"][0]["content"]
    return FakeReply(text="answer for " + first.split(":")[0])


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("refusal", ["call_ids", "temperature"])
async def test_two_requests_refused_for_one_remedy_both_go_through(
        stream: bool, refusal: str) -> None:
    """Nine-character call ids (a setting of the model) and a sampling field
    a reasoning deployment refuses (a field sent no more)."""
    fake_class = held(MistralFake if refusal == "call_ids" else ReasoningDeployment)
    options = GenerateOptions(temperature=0.2) if refusal == "temperature" else None
    name = "mistral-large-latest" if refusal == "call_ids" else "gpt-5-mini"
    async with fake_class() as fake:
        fake.default = _answer
        async with OpenAIChatModel(name, base_url=fake.url, api_key="k", stream=stream,
                                   settings=FAST) as model:
            # the rate governor's slow start: one reply first, so the users overlap
            await ReActAgent("warm", model).call("warm: up")
            agent = ReActAgent("shared", model, tools=[get_weather], options=options)

            async def user(name: str) -> str:
                return (await agent.call("And now?", state=_history(name))).text

            async with asyncio.timeout(20):
                replies = await asyncio.gather(user("ann"), user("bob"))
    assert replies == ["answer for ann", "answer for bob"]
    assert fake.refused == USERS  # both were refused: each sent once more, the new way
    sent = fake.bodies[1:]
    assert len(sent) == 2 * USERS
    assert sum(fake.validate(b) is None for b in sent) == USERS
