"""Faults of streams, on every adapter (issue 12): parallel tool calls keyed
by (index, id) (rule 3), a truncated stream is a typed partial error
(rule 8), abandoned attempts are announced (rule 9), and a total deadline
stops a server that trickles keep-alives (rule 10)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.errors import (
    DeadlineExceededError,
    ProviderConnectionError,
    ProviderError,
    TruncatedStreamError,
    UnsupportedFeatureError,
)
from agentflow.events import AttemptDiscarded, Complete, OutputPartial, ReasoningChunk
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelProfile, ToolCallDelta
from agentflow.output.strategies import choose_strategy
from agentflow.providers import HttpSettings
from agentflow.providers.registry import get_model
from agentflow.reply import ToolCallAssembler, generate
from agentflow.testing import Call, Reply, ScriptedModel
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.provider_scenarios import close_models, tracked
from tests.test_conformance import KITS, Kit

OPENAI_STYLE = {"openai", "deepseek", "dashscope", "glm", "minimax"}


@pytest.fixture(params=KITS)
async def vendor(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Kit, FakeServer]]:
    kit: Kit = request.param
    async with kit.fake() as server:
        yield kit, server
    await close_models()


# ----------------------------------------------------------------------------- rule 3


def test_a_new_id_at_an_occupied_index_starts_a_new_call() -> None:
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(0, id="a", name="lookup", arguments='{"q": '))
    asm.add(ToolCallDelta(0, arguments='"x"}'))
    asm.add(ToolCallDelta(0, id="b", name="lookup", arguments='{"q": "y"}'))
    asm.add(ToolCallDelta(0, id="b", arguments=""))  # the same id repeated continues
    asm.add(ToolCallDelta(1, id="c", name="other", arguments="{}"))
    calls = asm.finish()
    assert [(c.id, c.name, dict(c.input)) for c in calls] == [
        ("a", "lookup", {"q": "x"}), ("b", "lookup", {"q": "y"}), ("c", "other", {})]


def test_an_id_arriving_late_names_the_open_call() -> None:
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(0, name="lookup", arguments='{"q": "x"'))
    asm.add(ToolCallDelta(0, id="late", arguments="}"))
    asm.add(ToolCallDelta(0, id="next", name="lookup", arguments=b'{"q": "\xc3\xa9"}'))
    assert [(c.id, dict(c.input)) for c in asm.finish()] == [("late", {"q": "x"}),
                                                               ("next", {"q": "é"})]


looked: list[str] = []


def lookup(query: str) -> str:
    """Look something up."""
    looked.append(query)
    return f"found {query}"


@pytest.mark.parametrize("same_index", [False, True], ids=["own-index", "same-index"])
@pytest.mark.parametrize("queries", [("alpha", "beta"), ("x", "y", "z")])
async def test_parallel_calls_are_never_concatenated(vendor: tuple[Kit, FakeServer],
                                                     same_index: bool,
                                                     queries: tuple[str, ...]) -> None:
    kit, fake = vendor
    if same_index and kit.vendor not in OPENAI_STYLE:
        pytest.skip("only the OpenAI wire keys streamed calls by index")
    looked.clear()
    calls = [FakeCall("lookup", {"query": q}, id=f"call_{q}") for q in queries]
    fake.add(FakeReply(tool_calls=calls, chunk_size=3, extra={"same_index": same_index}),
             FakeReply(text="done"))
    reply = await ReActAgent("t", tracked(kit.build(fake, True)), tools=[lookup]).call("go")
    assert reply.text == "done"
    assert sorted(looked) == sorted(queries)


# ----------------------------------------------------------------------------- rule 8


class Contact(BaseModel):
    name: str
    email: str


async def test_a_cut_stream_is_a_typed_partial_error(vendor: tuple[Kit, FakeServer]) -> None:
    kit, fake = vendor
    fake.add(FakeReply(text='{"name": "Ann", "email": "ann@example.org"}', chunk_size=3,
                       cut_after=3))
    with pytest.raises(ProviderError) as info:
        await generate(tracked(kit.build(fake, True)), [Msg.user("hi")])
    assert info.value.partial and isinstance(info.value, ProviderConnectionError)


@pytest.mark.parametrize("reply", [
    FakeReply(text="Hello there, all of it.", chunk_size=4, extra={"no_finish": True}),
    FakeReply(tool_calls=[FakeCall("lookup", {"query": "q"})], extra={"no_finish": True}),
], ids=["text", "tool-call"])
async def test_a_stream_without_its_finish_reason_is_truncated(
        vendor: tuple[Kit, FakeServer], reply: FakeReply) -> None:
    kit, fake = vendor
    if kit.vendor == "ollama":
        pytest.skip("Ollama's final frame is the done line: the cut test covers it")
    fake.add(reply)
    with pytest.raises(TruncatedStreamError) as info:
        await generate(tracked(kit.build(fake, True)), [Msg.user("hi")])
    assert info.value.partial


async def test_a_truncated_stream_never_completes_a_call(vendor: tuple[Kit, FakeServer]) -> None:
    kit, fake = vendor
    if kit.vendor == "ollama":
        pytest.skip("Ollama's final frame is the done line: the cut test covers it")
    fake.add(FakeReply(text='{"name": "Ann", "email": "ann@example.org"}',
                       tool_calls=[FakeCall("generate_response", {"name": "Ann",
                                                                  "email": "ann@example.org"})],
                       extra={"no_finish": True}))
    streaming = GenerateOptions(stream=True)  # call() asks for whole replies otherwise
    with pytest.raises(TruncatedStreamError):
        await ReActAgent("t", tracked(kit.build(fake, True)), options=streaming).call(
            "extract", Contact)


# ----------------------------------------------------------------------------- rule 9

ANN = '{"name": "Ann", "email": "ann@example.org"}'


@pytest.mark.parametrize("cut", [6, 9])
async def test_a_retried_stream_announces_the_void_attempt(vendor: tuple[Kit, FakeServer],
                                                            cut: int) -> None:
    kit, fake = vendor
    model = tracked(kit.build(fake, True))
    data = {"name": "Ann", "email": "ann@example.org"}
    if choose_strategy(model.profile, has_tools=False) == "tool":
        first = FakeReply(text="Let me read this record carefully. " * 2,
                          tool_calls=[FakeCall("generate_response", data)], chunk_size=4,
                          cut_after=cut)
    else:
        first = FakeReply(text=ANN, chunk_size=4, cut_after=cut)
    fake.add(first, replace(first, cut_after=None))
    agent = ReActAgent("t", model, stream_retries=1)
    events = [e async for e in agent.stream("extract", Contact)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Contact(**data)
    discarded = [e for e in events if isinstance(e, AttemptDiscarded)]
    assert [d.reason for d in discarded] == ["stream_error"]
    after = [e.data for e in events[events.index(discarded[0]):] if isinstance(e, OutputPartial)]
    assert after and after[-1] == data
    assert len(fake.requests) == 2


async def test_without_stream_retries_the_cut_is_raised() -> None:
    model = ScriptedModel([Reply(text=ANN, chunk_size=3, error=ProviderConnectionError(
        "cut", partial=True), error_after=4), Reply(text=ANN)])
    with pytest.raises(ProviderConnectionError):
        await ReActAgent("t", model).call("extract", Contact)


@pytest.mark.parametrize("error_after", [4, 7])
async def test_partials_restart_only_after_the_discard_event(error_after: int) -> None:
    model = ScriptedModel([
        Reply(text='{"name": "Bob", "email": "bob@', chunk_size=3,
              error=ProviderConnectionError("cut", partial=True), error_after=error_after),
        Reply(text=ANN, chunk_size=3),
    ], profile=ModelProfile(native_output="json_schema"))
    events = [e async for e in ReActAgent("t", model, stream_retries=2).stream("x", Contact)]
    at = next(i for i, e in enumerate(events) if isinstance(e, AttemptDiscarded))
    before = [e.data for e in events[:at] if isinstance(e, OutputPartial)]
    after = [e.data for e in events[at:] if isinstance(e, OutputPartial)]
    assert before and all(p["name"] in "Bob" for p in before)
    assert after and all(p["name"] in "Ann" for p in after)  # restarted, no "Bob" left
    assert after[-1] == {"name": "Ann", "email": "ann@example.org"}
    texts = [e for e in events[at:] if isinstance(e, ReasoningChunk)]
    assert "".join(t.text for t in texts) == ANN


async def test_a_degradation_mid_stream_is_announced() -> None:
    refused = UnsupportedFeatureError("response_format is not supported",
                                      feature="native_output")
    model = ScriptedModel([
        Reply(text='{"name": "Bo', chunk_size=3, error=refused, error_after=3),
        Reply(tool_calls=[Call("generate_response", {"name": "Ann",
                                                      "email": "ann@example.org"})]),
    ], profile=ModelProfile(native_output="json_schema"))
    events = [e async for e in ReActAgent("t", model).stream("x", Contact)]
    discarded = [e for e in events if isinstance(e, AttemptDiscarded)]
    assert [d.reason for d in discarded] == ["degradation"]
    assert isinstance(events[-1], Complete) and events[-1].output.name == "Ann"


# ----------------------------------------------------------------------------- rule 10


class Trickle:
    """A server that answers 200 and then sends keep-alives forever: SSE
    comments (streams), blank NDJSON lines or JSON whitespace (whole replies)."""

    def __init__(self) -> None:
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def __aenter__(self) -> Trickle:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body: Any = await request.json()
        streaming = bool(body.get("stream")) or "alt=sse" in request.query_string or (
            "api/chat" in request.path and body.get("stream", True))
        response = web.StreamResponse(status=200)
        response.content_type = ("application/x-ndjson" if "api/chat" in request.path
                                 else "text/event-stream" if streaming else "application/json")
        await response.prepare(request)
        keep_alive = b": keep-alive\n\n" if response.content_type == "text/event-stream" \
            else b"\n" if "api/chat" in request.path else b" "
        try:
            while True:
                await response.write(keep_alive)
                await asyncio.sleep(0.05)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        return response


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("deadline", [0.3, 0.6])
async def test_the_deadline_stops_a_trickling_server(vendor: tuple[Kit, FakeServer],
                                                     stream: bool, deadline: float) -> None:
    kit, fake = vendor
    async with Trickle() as trickle:
        settings = HttpSettings(deadline=deadline, read_timeout=30, max_retries=2)
        model = tracked(get_model(f"{kit.vendor}:{kit.model}", api_key="k",
                                  base_url=fake.base_url(trickle.url), settings=settings,
                                  stream=stream, **kit.kwargs))
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError) as info:
            await ReActAgent("t", model).call("hi")
        elapsed = time.monotonic() - start
    assert deadline <= elapsed < 15  # the deadline stopped it: the read timeout is 30 s
    assert not info.value.retryable and info.value.deadline == deadline


def test_the_deadline_has_a_documented_default() -> None:
    assert HttpSettings().deadline == 600.0
    assert "deadline" in (HttpSettings.__doc__ or "")


def test_every_event_type_crosses_the_web_wire() -> None:
    import typing

    from agentflow.events import Event
    from agentflow.web.wire import event_to_dict

    assert AttemptDiscarded in typing.get_args(Event)
    data = event_to_dict(AttemptDiscarded(2, "stream_error", "the stream broke"))
    assert data == {"type": "attempt_discarded", "iteration": 2, "reason": "stream_error",
                    "message": "the stream broke"}


@pytest.mark.parametrize("deltas", [
    # whole calls at one index, without ids (servers that omit them)
    [ToolCallDelta(0, name="lookup", arguments='{"q": "x"}'),
     ToolCallDelta(0, name="lookup", arguments='{"q": "y"}')],
    [ToolCallDelta(0, name="lookup", arguments_obj={"q": "x"}),
     ToolCallDelta(0, name="other", arguments_obj={"q": "y"})],
])
def test_calls_without_ids_at_one_index_stay_apart(deltas: list[ToolCallDelta]) -> None:
    asm = ToolCallAssembler()
    for delta in deltas:
        asm.add(delta)
    assert [dict(c.input) for c in asm.finish()] == [{"q": "x"}, {"q": "y"}]


def test_a_name_repeated_on_every_fragment_continues_the_call() -> None:
    asm = ToolCallAssembler()
    for piece in ('{"q"', ': "x', '"}'):
        asm.add(ToolCallDelta(0, name="lookup", arguments=piece))
    assert [(c.name, dict(c.input)) for c in asm.finish()] == [("lookup", {"q": "x"})]
