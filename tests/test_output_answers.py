"""Checking an output and answering it (agentflow/middleware/output_answers.py):
the retry budget, the text path's accept/ask-again, and the give-up errors."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import AgentState
from agentflow._logging import get_logger
from agentflow.errors import OutputTruncatedError, StructuredOutputError
from agentflow.events import OutputRetry
from agentflow.execution import CallExecution
from agentflow.messages import Msg, ToolUseBlock
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.base import Finish, ReasonAgain
from agentflow.middleware.output_answers import (
    error_result,
    filtered,
    spend_retry,
    text_reply,
    truncated,
)
from agentflow.output.config import OutputConfig
from agentflow.output.partial import PartialOutput
from agentflow.output.schema import OutputSpec
from agentflow.testing import ScriptedModel


class Point(BaseModel):
    x: int


def _call(reply: Msg | None = None) -> tuple[CallExecution, OutputRun]:
    ex = CallExecution(model=ScriptedModel(), state=AgentState(), agent_name="a",
                       agent_id="i", base_log=get_logger(), output_type=Point)
    if reply is not None:
        ex.memory.append(reply)
    spec = OutputSpec.of(Point)
    return ex, OutputRun(spec, "native", False, PartialOutput(spec.wrapped))


def test_spend_retry_emits_each_retry_and_gives_up_past_the_budget() -> None:
    ex, run = _call()
    config = OutputConfig(output_retries=1)
    assert spend_retry(config, ex, run, "validation", "x: field required")
    assert [type(e) for e in ex.pending_events] == [OutputRetry]
    assert not spend_retry(config, ex, run, "validation", "again") and run.give_up
    assert ex.validation_retries == 1


def test_a_valid_text_reply_completes_and_leaves_memory_to_compression() -> None:
    reply = Msg.assistant('{"x": 3}')
    ex, run = _call(reply)
    decision = text_reply(OutputConfig(), ex, run, reply)
    assert isinstance(decision, Finish) and ex.completed and ex.output == Point(x=3)
    assert run.accepted is reply and ex.memory[-1] is reply  # no tagged copy made


def test_an_invalid_text_reply_is_asked_again_with_the_errors() -> None:
    reply = Msg.assistant('{"x": "three"}')
    ex, run = _call(reply)
    decision = text_reply(OutputConfig(), ex, run, reply)
    assert isinstance(decision, ReasonAgain) and not ex.completed
    assert "x" in decision.messages[0].text
    assert ex.memory[-1].metadata.get("structured_output_attempt") is True


def test_give_up_errors_carry_the_raw_text() -> None:
    ex, run = _call()
    truncated(ex, run, '{"x": 1')
    assert isinstance(ex.output_error, OutputTruncatedError) and run.give_up
    assert ex.output_error.raw_text == '{"x": 1'
    ex, run = _call()
    ex.last_finish_reason = "content_filter"
    assert filtered(ex, run, Msg.assistant("no")).stop_reason == "output_failed"
    assert isinstance(ex.output_error, StructuredOutputError)
    assert ex.output_error.raw_text == "no"
    result = error_result(ToolUseBlock("c1", "generate_response", {}), "bad")
    assert result.is_error and result.name == "generate_response" and result.tool_use_id == "c1"


def test_an_output_call_is_validated_from_the_argument_text_the_model_sent() -> None:
    from agentflow.middleware.output_answers import check_call
    from agentflow.output.reminders import TOOL_NAME

    ex, run = _call()
    kept = ToolUseBlock("c1", TOOL_NAME, {"x": 1}, arguments='{"x": 2}')
    assert not check_call(OutputConfig(), ex, run, kept).is_error
    assert ex.output == Point(x=2)  # the text, read as it is, not ``input`` encoded again
    ex, run = _call()
    lax = ToolUseBlock("c2", TOOL_NAME, {"x": "5"}, arguments='{"x": "5"}')
    assert not check_call(OutputConfig(), ex, run, lax).is_error  # strict refuses: lax path
    assert ex.output == Point(x=5)
    ex, run = _call()
    bad = ToolUseBlock("c3", TOOL_NAME, {"x": "five"}, arguments='{"x": "five"}')
    result = check_call(OutputConfig(), ex, run, bad)
    assert result.is_error and "x" in result.output and not ex.completed
