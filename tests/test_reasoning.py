"""The reason step's pieces (agentflow/reasoning.py): the request snapshot,
the stream-retry budget, recovery and folding a reply into the call."""

from __future__ import annotations

from agentflow import AgentState
from agentflow._logging import get_logger
from agentflow.errors import ProviderConnectionError, ServerError
from agentflow.events import AttemptDiscarded, OutputRetry
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware.base import Middleware, ModelRequest
from agentflow.model import FinishChunk, TextDelta, ToolChoice, ToolSpec, Usage, UsageChunk
from agentflow.reasoning import recover, snapshot, stream_retry, take_reply
from agentflow.reply import ReplyBuilder
from agentflow.testing import ScriptedModel


def _ex() -> CallExecution:
    return CallExecution(model=ScriptedModel(), state=AgentState(), agent_name="a",
                         agent_id="i", base_log=get_logger())


def test_snapshot_puts_the_system_prompt_first_and_uses_up_a_tool_choice() -> None:
    ex = _ex()
    ex.memory = [Msg.user("hi")]
    own = ToolSpec("generate_response", "out", {"type": "object"})
    ex.call_tools["generate_response"] = own
    ex.tool_choice = ToolChoice.specific("generate_response")
    request = snapshot(ex, "be brief", [])
    assert [m.role for m in request.messages] == ["system", "user"]
    assert request.messages[1] is ex.memory[0] and request.messages is not ex.memory
    assert request.tools == [own]
    assert request.options.tool_choice == ToolChoice.specific("generate_response")
    assert ex.tool_choice is None  # one request only
    assert snapshot(ex, None, []).options.tool_choice is None


def test_a_system_prompt_is_one_message_for_every_request() -> None:
    ex = _ex()
    first = snapshot(ex, "be brief", []).messages[0]
    assert snapshot(_ex(), "be brief", []).messages[0] is first  # made once per prompt
    other = snapshot(ex, "be terse", []).messages[0]
    assert other is not first and other.text == "be terse" and other.role == "system"


def test_stream_retry_spends_a_budget_on_broken_streams_only() -> None:
    ex = _ex()
    broken = ProviderConnectionError("cut", partial=True, vendor="t")
    assert stream_retry(ex, broken, 1) and ex.stream_retries == 1
    assert not stream_retry(ex, broken, 1)  # budget spent
    assert not stream_retry(_ex(), ServerError("500", vendor="t"), 5)  # not mid-stream


async def test_recover_announces_the_void_attempt_before_the_middleware_events() -> None:
    class Degrade(Middleware):
        async def on_model_error(self, ex, request, error):  # type: ignore[no-untyped-def]
            ex.emit(OutputRetry("degradation", 1, "stepped down"))
            return True

    ex = _ex()
    request = ModelRequest([], [], ex.options)
    error = ServerError("refused", vendor="t")
    assert await recover(ex, [Degrade()], request, error, True, 0)
    assert [type(e) for e in ex.pending_events] == [AttemptDiscarded, OutputRetry]
    assert ex.discarded == 1
    quiet = _ex()
    assert not await recover(quiet, [], request, error, True, 3)  # nothing recovers a 500
    assert quiet.pending_events == [] and quiet.discarded == 0


def test_take_reply_counts_one_request_and_appends_the_reply() -> None:
    ex = _ex()
    ex.usage = Usage(1, 1, requests=1)
    builder = ReplyBuilder()
    for chunk in (TextDelta("ok"), UsageChunk(Usage(10, 2)), FinishChunk("length", "length")):
        builder.add(chunk)
    reply = take_reply(ex, builder)
    assert ex.memory == [reply] and reply.text == "ok"
    assert (ex.usage.input_tokens, ex.usage.output_tokens, ex.usage.requests) == (11, 3, 2)
    assert ex.last_finish_reason == "length"
