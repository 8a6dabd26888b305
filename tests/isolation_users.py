"""The users and the vendor of the isolation tests (``test_isolation_calls``,
``test_isolation_web``): fifty users, each with a marker in their text, and
an OpenAI fake that answers each request from the marker it holds (a tool
round, then the output) and holds every run's first request until all
fifty came, so the runs overlap by construction (no sleeps)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import orjson
from aiohttp import web
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.providers.registry import get_model
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake

USERS = 50
MARK = re.compile(r"\bU\d{3}[a-z]\b")


class Note(BaseModel):
    user: str
    secret: str


def note_tool(user: str) -> str:
    """Look up a user's note."""
    return f"note-of-{user}"


def marks(value: Any) -> set[str]:
    return set(MARK.findall(orjson.dumps(value).decode()))


WARM_UP = "warm up"


def is_warm_up(body: Any) -> bool:
    return body["messages"][-1].get("content") == WARM_UP


def usage_of(mark: str) -> tuple[int, int]:
    """Each user's requests report their own token counts (input, output)."""
    n = int(mark[1:4])
    return 1000 + n, n + 1


class Vendor:
    """The fake's answers: a tool round, then the output, both naming the
    marker of the user whose text the request holds (the first user message)."""

    def __init__(self, fake: OpenAIFake, expected: int) -> None:
        self.fake = fake
        self.expected = expected
        self.first = 0
        self.everyone_in = asyncio.Event()
        fake.default = self.answer

    def answer(self, body: Any) -> FakeReply:
        if is_warm_up(body):
            return FakeReply(text="ready")
        user = next(m for m in body["messages"] if m["role"] == "user")
        content = user["content"]
        text = content if isinstance(content, str) else " ".join(
            p.get("text", "") for p in content)
        mark = MARK.findall(text)[0]
        usage = usage_of(mark)
        last = body["messages"][-1]
        if last["role"] != "tool":
            return FakeReply(tool_calls=[FakeCall("note_tool", {"user": mark},
                                                  id=f"call_{mark}")], usage=usage)
        if body.get("response_format"):
            return FakeReply(text=orjson.dumps({"user": mark,
                                                "secret": last["content"]}).decode(),
                             usage=usage)
        return FakeReply(tool_calls=[FakeCall("generate_response",
                                              {"user": mark, "secret": last["content"]},
                                              id=f"out_{mark}")], usage=usage)

    async def hold_first(self) -> None:
        """Every first request waits until all users sent theirs."""
        self.first += 1
        if self.first == self.expected:
            self.everyone_in.set()
        await self.everyone_in.wait()

    def check(self) -> None:
        bodies = [b for b in self.fake.bodies if not is_warm_up(b)]
        assert len(bodies) == 2 * self.expected
        for body in bodies:
            user = next(m for m in body["messages"] if m["role"] == "user")
            own = marks(user)
            assert len(own) == 1
            assert marks(body) == own, body  # no other user's text, call or result


class HeldFake(OpenAIFake):
    """The OpenAI fake, holding the first request of each run (a user's
    message last) until every user's first request came."""

    vendor_state: Vendor

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read())  # (read once, kept by aiohttp)
        if body["messages"][-1]["role"] != "tool" and not is_warm_up(body):
            await self.vendor_state.hold_first()
        return await super()._handle(request)


@contextlib.asynccontextmanager
async def held_vendor() -> AsyncIterator[Vendor]:
    """A ``Vendor`` on a running ``HeldFake`` (a test's ``vendor`` fixture)."""
    async with HeldFake() as fake:
        fake.vendor_state = vendor = Vendor(fake, USERS)
        # the rate governor's slow start sends one request at a time until a
        # reply came: one reply first, so that the users' requests overlap
        async with get_model("openai:gpt-4o-mini", base_url=fake.url,
                             api_key="sk-test") as model:
            await ReActAgent("warm", model).call(WARM_UP)
        yield vendor
        assert vendor.first == USERS  # every run's first request was held


def shared_agent(vendor: Vendor) -> ReActAgent:
    model = get_model("openai:gpt-4o-mini", base_url=vendor.fake.url, api_key="sk-test")
    return ReActAgent("shared", model, tools=[note_tool])


def marker(n: int) -> str:
    return f"U{n:03d}x"
