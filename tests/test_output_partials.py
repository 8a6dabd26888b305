"""Partial-output events of a streamed call (agentflow/middleware/output_partials.py)."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import AgentState
from agentflow._logging import get_logger
from agentflow.events import AttemptDiscarded, OutputPartial
from agentflow.execution import CallExecution
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.output_partials import partial_event
from agentflow.model import TextDelta, ToolCallDelta
from agentflow.output.partial import PartialOutput
from agentflow.output.schema import OutputSpec
from agentflow.reply import ReplyBuilder
from agentflow.testing import ScriptedModel


class Point(BaseModel):
    x: int
    y: int = 0


def _call(kind: str) -> tuple[CallExecution, OutputRun, ReplyBuilder]:
    ex = CallExecution(model=ScriptedModel(), state=AgentState(), agent_name="a",
                       agent_id="i", base_log=get_logger(), output_type=Point)
    spec = OutputSpec.of(Point)
    run = OutputRun(spec, kind, False, PartialOutput(spec.wrapped))  # type: ignore[arg-type]
    return ex, run, ReplyBuilder()


def _feed(ex: CallExecution, run: OutputRun, reply: ReplyBuilder, chunk: object) -> object:
    reply.add(chunk)  # type: ignore[arg-type]
    return partial_event(ex, run, chunk, reply)  # type: ignore[arg-type]


def test_text_partials_grow_and_a_later_value_supersedes_the_first() -> None:
    ex, run, reply = _call("native")
    assert _feed(ex, run, reply, TextDelta("Sure: ")) is None
    assert _feed(ex, run, reply, TextDelta('{"x": 1')) is None  # 1 may be the start of 12
    event = _feed(ex, run, reply, TextDelta(' '))
    assert isinstance(event, OutputPartial) and event.data == {"x": 1}
    grown = _feed(ex, run, reply, TextDelta(', "y": 2} or rather '))
    assert grown == OutputPartial({"x": 1, "y": 2})
    superseded = _feed(ex, run, reply, TextDelta('{"x": 5'))
    assert isinstance(superseded, AttemptDiscarded) and superseded.reason == "superseded"
    assert ex.discarded == 1
    assert _feed(ex, run, reply, TextDelta("}")) == OutputPartial({"x": 5})


def test_tool_path_partials_come_from_the_output_call_only() -> None:
    ex, run, reply = _call("tool")
    assert _feed(ex, run, reply, ToolCallDelta(0, "c0", "lookup", '{"x": 9')) is None
    assert _feed(ex, run, reply, TextDelta('{"x": 8}')) is None  # text is not the output here
    event = _feed(ex, run, reply, ToolCallDelta(1, "c1", "generate_response", '{"x": 3,'))
    assert event == OutputPartial({"x": 3})
