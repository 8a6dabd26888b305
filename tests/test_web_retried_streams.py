"""A reply whose stream is cut and sent again (``stream_retries``), read by
the protocols' real clients (``tests/js/retried_stream.mjs``): the abandoned
attempt's text was ended and the retry's text sent under the same id, so
``@ag-ui/client`` appended it to the abandoned message ("Hello woHello
world.") and the AI SDK showed both parts. Now the retry's messages and
parts take new ids, the abandoned ones are flagged ``discarded`` where the
client keeps it, and the history a client sends back leaves them out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.errors import ProviderConnectionError
from agentflow.messages import Msg
from agentflow.model import (
    FinishChunk,
    GenerateOptions,
    ModelChunk,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
    UsageChunk,
)
from agentflow.output.strategies import StrategyName
from agentflow.testing import FunctionModel, RecordedRequest, Reply
from agentflow.usage import Usage
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import read_json

from .test_web_adapters import node, node_ready, served

FLAG = {"agentflow": {"discarded": "stream_error"}}


class Model:
    """Thinks, then says hello; the first attempt's stream is cut after
    "Hello wo". Records the history each request carried."""

    def __init__(self) -> None:
        self.cut = False
        self.seen: list[list[tuple[str, str]]] = []

    def answer(self, request: RecordedRequest) -> Reply:
        self.seen.append([(m.role, m.text) for m in request.messages])
        if sum(m.role == "user" for m in request.messages) > 1:
            return Reply(text="Hello again.")
        if not self.cut:
            self.cut = True
            return Reply(thinking="Thinking.", text="Hello world.", chunk_size=4,
                         error=ProviderConnectionError("cut", partial=True), error_after=5)
        return Reply(thinking="Thinking.", text="Hello world.", chunk_size=4)


async def run(protocol: str) -> tuple[dict[str, Any], Model]:
    node_ready()
    model = Model()
    agent = ReActAgent("ui", FunctionModel(model.answer), stream_retries=1)
    return await _through_client(protocol, agent), model


def check_history(model: Model) -> None:
    """The second run's model read the retry's text only."""
    assert model.seen[-1][1:3] == [("assistant", "Hello world."), ("user", "Again?")]


async def test_agui_a_retried_stream_retracts_the_abandoned_text() -> None:
    got, model = await run("agui")
    [discard] = [e for e in got["first"] if e["type"] == "CUSTOM"]
    assert discard["name"] == "agentflow.attempt_discarded"
    assert discard["value"]["reason"] == "stream_error"
    messages = {m["id"]: m for m in got["afterFirst"]}
    abandoned = [messages[i] for i in discard["value"]["message_ids"]]
    assert [m["role"] for m in abandoned] == ["reasoning", "assistant"]
    assert abandoned[1]["content"] == "Hello wo" and abandoned[1]["metadata"] == FLAG
    kept = [m for m in got["afterFirst"] if m["role"] == "assistant" and m not in abandoned]
    assert [m["content"] for m in kept] == ["Hello world."]  # not "Hello woHello world."
    assert "metadata" not in kept[0]
    check_history(model)


async def test_ai_sdk_a_retried_stream_retracts_the_abandoned_text() -> None:
    got, model = await run("ai")
    [discard] = [c for c in got["first"] if c["type"] == "data-attempt-discarded"]
    assert discard["data"]["reason"] == "stream_error"
    [assistant] = [m for m in got["afterFirst"] if m["role"] == "assistant"]
    texts = [(p["text"], p.get("providerMetadata")) for p in assistant["parts"]
             if p["type"] == "text"]
    assert texts == [("Hello wo", FLAG), ("Hello world.", None)]
    reasoning = [p for p in assistant["parts"] if p["type"] == "reasoning"]
    assert [p["id"] in discard["data"]["part_ids"] for p in reasoning] == [True, False]
    check_history(model)


@pytest.mark.parametrize("protocol", ["agui", "ai"])
async def test_a_superseded_output_keeps_its_text(protocol: str) -> None:
    """Only a void attempt is retracted: ``superseded`` (a later JSON value
    replaces the partial output) leaves the text as it is (no flag)."""
    from agentflow.events import AttemptDiscarded, ReasoningChunk
    from agentflow.web.agui import AGUIEncoder
    from agentflow.web.aisdk import UIMessageEncoder

    encoder: Any = AGUIEncoder("t", "r") if protocol == "agui" else UIMessageEncoder()
    body = b"".join(encoder.encode(e) for e in (
        ReasoningChunk("Hi", 1), AttemptDiscarded(1, "superseded", "a new value"),
        ReasoningChunk(" there", 1)))
    assert b"discarded\":\"superseded" not in body and b"retry" not in body


class Interleaved(FunctionModel):
    """Thinks, says "Hello", thinks again, says " world." (interleaved
    thinking, as Anthropic's models stream it); the first attempt's stream is
    cut after the second thought, when the text part "Hello" was already
    ended by the thought that followed it."""

    def __init__(self) -> None:
        super().__init__(self.answer)
        self.cut = False
        self.seen: list[list[tuple[str, str]]] = []

    def answer(self, request: RecordedRequest) -> Reply:
        return Reply(text="Hello again.")

    async def stream(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                     options: GenerateOptions) -> AsyncIterator[ModelChunk]:
        self.seen.append([(m.role, m.text) for m in messages])
        if sum(m.role == "user" for m in messages) > 1:
            async for chunk in super().stream(messages, tools, options):
                yield chunk
            return
        yield ThinkingDelta("Plan.")
        yield TextDelta("Hello")
        yield ThinkingDelta("More.")
        if not self.cut:
            self.cut = True
            raise ProviderConnectionError("cut", partial=True)
        yield TextDelta(" world.")
        yield UsageChunk(Usage(10, 5))
        yield FinishChunk("stop", "stop")


async def run_interleaved(protocol: str) -> tuple[dict[str, Any], Interleaved]:
    node_ready()
    model = Interleaved()
    agent = ReActAgent("ui", model, stream_retries=1)
    return await _through_client(protocol, agent), model


async def _through_client(protocol: str, agent: ReActAgent, output: Any = None,
                          strategy: StrategyName | None = None) -> dict[str, Any]:
    """What the real npm client of ``protocol`` (``agui`` or the AI SDK's
    ``chat``) saw of ``agent``'s run (asked for ``output``), served on 127.0.0.1."""

    async def agui(request: Request) -> Response:
        return agui_response(agent, read_run_input(await read_json(request)), output,
                             strategy=strategy)

    async def chat(request: Request) -> Response:
        return ui_message_stream_response(agent, read_chat_request(await read_json(request)),
                                          output, strategy=strategy)

    app = Starlette(routes=[Route("/agui", agui, methods=["POST"]),
                            Route("/chat", chat, methods=["POST"])])
    async with served(app) as url:
        got = await node("retried_stream.mjs", protocol,
                         f"{url}/{'agui' if protocol == 'agui' else 'chat'}")
    assert got["error"] is None, got
    return got


async def test_agui_text_ended_before_the_cut_is_retracted_too() -> None:
    """A text message the attempt's next thought interrupted stays open (a
    message once ended cannot be flagged) until the attempt cannot be
    discarded; so it ends flagged with the rest, and the history sent back
    leaves it out (it came back: "Hello", then "Hello world.")."""
    got, model = await run_interleaved("agui")
    [discard] = [e for e in got["first"] if e["type"] == "CUSTOM"]
    messages = {m["id"]: m for m in got["afterFirst"]}
    abandoned = [messages[i] for i in discard["value"]["message_ids"]]
    assert [(m["role"], m["content"], m.get("metadata")) for m in abandoned] == [
        ("reasoning", "Plan.More.", FLAG), ("assistant", "Hello", FLAG)]
    kept = [m for m in got["afterFirst"] if m["role"] == "assistant" and m not in abandoned]
    assert [(m["content"], m.get("metadata")) for m in kept] == [("Hello world.", None)]
    assert model.seen[-1][1:3] == [("assistant", "Hello world."), ("user", "Again?")]


async def test_ai_sdk_text_ended_before_the_cut_is_retracted_too() -> None:
    """A text part the attempt's next thought interrupted stays open (the
    client cannot flag a part once ended: ``text-end`` on it is an error, and
    text parts keep no id) until the attempt cannot be discarded; so it ends
    flagged with the rest, and the history sent back leaves it out (it came
    back: "HelloHello world.")."""
    got, model = await run_interleaved("ai")
    [assistant] = [m for m in got["afterFirst"] if m["role"] == "assistant"]
    texts = [(p["text"], p.get("providerMetadata")) for p in assistant["parts"]
             if p["type"] == "text"]
    assert texts == [("Hello", FLAG), ("Hello", None), (" world.", None)], texts
    # reasoning parts keep their ids: one ended before the cut is named in part_ids
    [discard] = [c for c in got["first"] if c["type"] == "data-attempt-discarded"]
    reasoning = [(p["text"], p.get("providerMetadata"), p["id"] in discard["data"]["part_ids"])
                 for p in assistant["parts"] if p["type"] == "reasoning"]
    assert reasoning == [("Plan.", None, True), ("More.", FLAG, True), ("Plan.", None, False),
                         ("More.", None, False)]
    assert model.seen[-1][1:3] == [("assistant", "Hello world."), ("user", "Again?")]


class Value(BaseModel):
    a: int


class TwoValues(Interleaved):
    """Its reply text holds a JSON value, then a later one (the output so far
    is superseded), and the first attempt's stream is cut in the second."""

    def answer(self, request: RecordedRequest) -> Reply:
        return Reply(text='{"a": 3}')

    async def stream(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                     options: GenerateOptions) -> AsyncIterator[ModelChunk]:
        self.seen.append([(m.role, m.text) for m in messages])
        if sum(m.role == "user" for m in messages) > 1:
            async for chunk in FunctionModel.stream(self, messages, tools, options):
                yield chunk
            return
        if not self.cut:
            self.cut = True
            yield TextDelta('{"a": 1} ')
            yield TextDelta('{"a": 2')
            raise ProviderConnectionError("cut", partial=True)
        yield TextDelta('{"a": 2}')
        yield UsageChunk(Usage(10, 5))
        yield FinishChunk("stop", "stop")


@pytest.mark.parametrize("protocol", ["agui", "ai"])
async def test_text_held_past_a_superseded_output_is_retracted_by_the_cut(protocol: str) -> None:
    """A superseded partial output (a later JSON value in the text) voids the
    output so far, not the text: the text stays held, so the cut that follows
    retracts all of it (it was ended unflagged at the superseded value, and
    came back in the history: '{"a": 1} {"a": 2{"a": 2}')."""
    node_ready()
    model = TwoValues()
    agent = ReActAgent("ui", model, stream_retries=1)
    got = await _through_client(protocol, agent, Value, "prompt")
    if protocol == "agui":
        kept = [m for m in got["afterFirst"] if m["role"] == "assistant"
                and not (m.get("metadata") or {}).get("agentflow")]
        assert [m["content"] for m in kept] == ['{"a": 2}']
    else:
        [assistant] = [m for m in got["afterFirst"] if m["role"] == "assistant"]
        texts = [(p["text"], p.get("providerMetadata")) for p in assistant["parts"]
                 if p["type"] == "text"]
        assert texts == [('{"a": 1} {"a": 2', FLAG), ('{"a": 2}', None)], texts
    assert [m for m in model.seen[-1] if m[0] != "system"] == [
        ("user", "Say hello"), ("assistant", '{"a": 2}'), ("user", "Again?")]
