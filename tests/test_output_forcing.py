"""The forcing rule (agentflow/middleware/output_forcing.py): a turn without
the output tool is read as the output, else forced, else given up."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import AgentState
from agentflow._logging import get_logger
from agentflow.errors import OutputTruncatedError, StructuredOutputError
from agentflow.events import OutputRetry
from agentflow.execution import CallExecution
from agentflow.messages import STRUCTURED_OUTPUT_REMINDER, Msg
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.base import Finish, ReasonAgain
from agentflow.middleware.output_forcing import missed_output
from agentflow.model import ModelProfile
from agentflow.output.config import OutputConfig
from agentflow.output.partial import PartialOutput
from agentflow.output.reminders import TOOL_NAME
from agentflow.output.schema import OutputSpec
from agentflow.testing import ScriptedModel

FORCES = ModelProfile(tool_choice_modes=frozenset({"auto", "required", "specific"}))
CANNOT_FORCE = ModelProfile(tool_choice_modes=frozenset({"auto"}))


class Point(BaseModel):
    x: int


def _call(reply: Msg) -> tuple[CallExecution, OutputRun]:
    ex = CallExecution(model=ScriptedModel(), state=AgentState(), agent_name="a",
                       agent_id="i", base_log=get_logger(), output_type=Point)
    ex.memory.append(reply)
    spec = OutputSpec.of(Point)
    return ex, OutputRun(spec, "tool", True, PartialOutput(spec.wrapped))


def test_text_that_is_the_output_is_accepted_without_forcing() -> None:
    reply = Msg.assistant('{"x": 2}')
    ex, run = _call(reply)
    decision = missed_output(OutputConfig(), ex, run, reply, FORCES)
    assert isinstance(decision, Finish) and ex.completed and ex.output == Point(x=2)
    assert ex.force_count == 0


def test_prose_is_forced_with_tool_choice_where_the_vendor_enforces_it() -> None:
    reply = Msg.assistant("Let me think about it.")
    ex, run = _call(reply)
    decision = missed_output(OutputConfig(), ex, run, reply, FORCES)
    assert isinstance(decision, ReasonAgain) and ex.force_count == 1
    assert ex.tool_choice is not None and ex.tool_choice.name == TOOL_NAME
    (nudge,) = decision.messages
    assert nudge.role == "user"  # the request never ends on the assistant's turn
    (retry,) = ex.pending_events
    assert isinstance(retry, OutputRetry) and retry.reason == "forcing"


def test_prose_gets_a_reminder_where_the_vendor_cannot_force() -> None:
    reply = Msg.assistant("Let me think about it.")
    ex, run = _call(reply)
    decision = missed_output(OutputConfig(), ex, run, reply, CANNOT_FORCE)
    assert isinstance(decision, ReasonAgain) and ex.tool_choice is None
    (reminder,) = decision.messages
    assert reminder.role == "system" and reminder.metadata[STRUCTURED_OUTPUT_REMINDER]


def test_past_max_forcing_the_call_gives_up_with_the_raw_text() -> None:
    reply = Msg.assistant("No.")
    ex, run = _call(reply)
    ex.force_count = 2
    decision = missed_output(OutputConfig(max_forcing=2), ex, run, reply, FORCES)
    assert decision == Finish("output_failed")
    assert isinstance(ex.output_error, StructuredOutputError)
    assert ex.output_error.raw_text == "No."


def test_cut_text_is_never_read_as_the_output() -> None:
    reply = Msg.assistant('{"x": 2, "y": ')
    ex, run = _call(reply)
    ex.last_finish_reason = "length"
    decision = missed_output(OutputConfig(), ex, run, reply, FORCES)
    assert decision == Finish("output_failed")
    assert isinstance(ex.output_error, OutputTruncatedError) and not ex.completed
