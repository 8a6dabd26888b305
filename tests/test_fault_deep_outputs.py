"""An output nested deeper than anything downstream can write is refused at
validation, where the model reads why and tries again.

pydantic validates a ``dict[str, Any]`` field of any depth JSON parsers read
(orjson: 1,024 levels), but writes one only to 254 levels: an accepted output
300 levels deep failed at the end of the call, when the reply was written
(``PydanticSerializationError``), and a web stream ended with an untyped
``InternalError`` for a call the model had answered validly. It is a
validation error now (``MAX_OUTPUT_DEPTH``): retried within the output budget,
else the typed ``StructuredOutputError`` every failed output ends with."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.errors import StructuredOutputError
from agentflow.events import Complete, OutputRetry
from agentflow.output.schema import MAX_OUTPUT_DEPTH
from agentflow.testing import Call, Reply, ScriptedModel
from agentflow.web.encoding import AgentflowEncoder
from agentflow.web.sse import EventStreamResponse


class Note(BaseModel):
    title: str
    extra: dict[str, Any]


def _deep(levels: int) -> str:
    return '{"title": "t", "extra": {"a": ' + "[" * levels + "1" + "]" * levels + "}}"


def _output(arguments: str) -> Reply:
    return Reply(tool_calls=[Call("generate_response", arguments)])


@pytest.mark.parametrize("levels", [300, 1000])
async def test_a_too_deep_output_is_retried_and_the_flat_one_kept(levels: int) -> None:
    model = ScriptedModel([_output(_deep(levels)), _output(_deep(3))])
    events = [e async for e in ReActAgent("n", model).stream("note it", Note)]
    retries = [e for e in events if isinstance(e, OutputRetry)]
    assert len(retries) == 1 and f"more than {MAX_OUTPUT_DEPTH} levels deep" in (
        retries[0].message)
    assert isinstance(events[-1], Complete) and events[-1].output == Note(
        title="t", extra={"a": [[[1]]]})


async def test_one_level_under_the_limit_is_kept() -> None:
    levels = MAX_OUTPUT_DEPTH - 3  # the output object, extra, and the list's own level
    model = ScriptedModel([_output(_deep(levels))])
    reply = await ReActAgent("n", model).call("note it", Note)
    assert reply.output.title == "t"
    assert '"extra"' in reply.text  # written: the reply holds the output's JSON


async def test_only_too_deep_outputs_end_with_the_typed_error_on_the_web() -> None:
    model = ScriptedModel([_output(_deep(300))] * 4)
    agent = ReActAgent("n", model)
    with pytest.raises(StructuredOutputError, match="levels deep"):
        async for _ in agent.stream("note it", Note):
            pass
    model = ScriptedModel([_output(_deep(300))] * 4)
    response = EventStreamResponse(ReActAgent("n", model).stream("note it", Note),
                                   encoder=AgentflowEncoder())
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client stays
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])

    await asyncio.wait_for(response({"type": "http"}, receive, send), 10)  # type: ignore[arg-type]
    assert isinstance(response.error, StructuredOutputError)
    last = [f for f in b"".join(sent).split(b"\n\n") if f.strip()][-1]
    assert b"event: error" in last and b"InternalError" not in last, last
