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
from agentflow.errors import BadRequestError
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.model import GenerateOptions
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake, openai_error
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


class RefusesBob(MistralFake):
    """The Mistral-like fake that also refuses any request of user "bob" with
    a 400 no remedy addresses (an image it cannot read), and holds that first
    refusal until ann's request came again remedied (nine-character ids): bob's
    refusal then reaches a model a concurrent request remedied meanwhile."""

    bob_sent = 0
    ann_refused: asyncio.Event | None = None
    remedied: asyncio.Event | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read())
        self.ann_refused = self.ann_refused or asyncio.Event()
        self.remedied = self.remedied or asyncio.Event()
        if "bob" in orjson.dumps(body["messages"]).decode():
            self.bob_sent += 1
            self.ann_refused.set()  # bob's request was built before ann's remedy
            if self.bob_sent == 1:
                await self.remedied.wait()
            return self.render_error(openai_error(400, "Invalid image: cannot be decoded."))
        if "ann" in orjson.dumps(body["messages"]).decode():
            if self.validate(body) is None:
                self.remedied.set()
            else:
                await self.ann_refused.wait()
        return await super()._handle(request)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_400_no_remedy_addresses_is_never_sent_again(stream: bool) -> None:
    """A concurrent request remedied the model while bob's request was in
    flight; bob's refusal is not one a remedy addresses: raised at once, sent
    once (it was sent again the new way before: any 400 went twice)."""
    async with RefusesBob() as fake:
        fake.default = _answer
        async with OpenAIChatModel("mistral-large-latest", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            await ReActAgent("warm", model).call("warm: up")
            agent = ReActAgent("shared", model, tools=[get_weather])
            async with asyncio.timeout(20):
                ann, bob = await asyncio.gather(
                    agent.call("And now?", state=_history("ann")),
                    agent.call("bob: what is in this picture?"), return_exceptions=True)
    assert isinstance(ann, Msg) and ann.text == "answer for ann"
    assert isinstance(bob, BadRequestError) and "cannot be decoded" in str(bob)
    assert fake.bob_sent == 1
