"""The AG-UI protocol (CopilotKit and other AG-UI frontends) over
``agent.stream``: ``AGUIEncoder`` turns agentflow's events into AG-UI
events (the ``ag-ui-protocol`` package's own types and SSE encoder), and
``read_run_input`` (``_agui_input``, re-exported here) reads a
``RunAgentInput`` request body. The encoder lives in ``_agui_encoder``
(re-exported here), the caps in ``_agui_caps``.

    @app.post("/agui")
    async def run(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        return agui_response(agent, run, Contact)

Event mapping (AG-UI event types as in the protocol's ``ag_ui.core``):

* ``call_started`` -> ``RUN_STARTED`` (the request's ``threadId``/``runId``)
* ``thinking_chunk`` -> ``REASONING_START``, ``REASONING_MESSAGE_START``,
  ``REASONING_MESSAGE_CONTENT``... (ended by ``REASONING_MESSAGE_END``,
  ``REASONING_END`` when something else comes)
* ``reasoning_chunk`` (the reply text) -> ``TEXT_MESSAGE_START``,
  ``TEXT_MESSAGE_CONTENT``..., ``TEXT_MESSAGE_END``; one assistant message per
  reasoning step, ``messageId`` ``"<call_id>-<step>"``
* ``tool_use`` -> ``TOOL_CALL_START`` (``parentMessageId``: the step's text
  message, or one id for a step of calls only, so a client keeps one
  assistant message per step), ``TOOL_CALL_ARGS`` (the whole JSON input),
  ``TOOL_CALL_END``; ``tool_result`` -> ``TOOL_CALL_RESULT`` (unless the call
  waits: ``ToolResult.waiting``). The
  structured-output engine's own tool (``generate_response``) is not shown.
* ``output_partial`` -> the client's state with ``"output"`` (``output_key``)
  set to the partial object (a frontend renders ``agent.state.output`` as it
  grows): a ``STATE_SNAPSHOT`` first, then ``STATE_DELTA``s (JSON Patch);
  the validated output comes in a last update too; an update over
  ``MAX_SHOWN_STATE`` bytes is not sent, a ``CUSTOM``
  ``agentflow.state_not_shown`` event says so (``_agui_state``). The client's
  other state keys are sent back unchanged; an app whose state already uses
  ``"output"`` names another key
* ``tool_progress`` -> a ``CUSTOM`` event ``agentflow.tool_progress`` (value:
  the wire's JSON of the event: ``id``, the tool call's, ``progress``...)
* ``output_retry`` / ``attempt_discarded`` -> ``CUSTOM`` events named
  ``agentflow.output_retry`` / ``agentflow.attempt_discarded`` (value: the
  wire's JSON of the event); a discarded attempt's open messages are ended.
  An attempt whose text is void (a stream cut and sent again:
  ``stream_error``, ``degradation``) is retracted: its open messages end
  with ``metadata`` ``{"agentflow": {"discarded": <reason>}}`` (the client
  keeps it on the message), the event's value names every message of the
  attempt (``message_ids``), and the retry's messages take new ids
  (``<call>-<step>-retry<n>``), so a client never appends the retry's text
  to the abandoned one; ``read_run_input`` leaves such messages out of the
  history a client sends back. A message once ended cannot be flagged, so a
  step's text message stays open until its attempt cannot be discarded (its
  tool calls, the next step, the end): a thought between two pieces of text
  is a reasoning message beside it, and the text after continues it; a
  ``superseded`` partial output (a later JSON value in the text) voids the
  output so far only, and the text message stays open through it
* ``complete`` -> ``RUN_FINISHED`` with ``result`` ``{"output", "text",
  "stop_reason", "usage", "error"}`` (as in ``agentflow.web.wire``; ``error``
  is ``null``: a ``complete`` made without the output it asked for, from
  ``events`` of the app's own, is a failed run, its ``RUN_ERROR`` names the
  error, as ``agent.stream``'s raised one is), plus
  ``"pending_tool_call_ids"`` when frontend tool calls wait for the client;
  ``outcome`` absent (a success) unless the run waits (below), or was cut
  short without failing (``stop_reason`` ``stopped``: a middleware stopped
  it; ``max_iters``: the loop's limit): ``{"type": "cancelled"}`` (AG-UI 1.0:
  "stopped before it completed, by whoever was running it, and did not
  fail"; a consumer reads an outcome it does not know as a success);
  and the protocol's own ``usage`` (``[{"inputTokens", "outputTokens",
  "totalTokens", ...}]``; ``_agui_usage``), also on a ``RUN_ERROR`` whose
  error knows the call's usage
* ``approval_requested`` -> the run ends with an interrupt: ``RUN_FINISHED``'s
  ``outcome`` ``{"type": "interrupt", "interrupts": [{"id": <tool call id>,
  "reason": "tool_approval", "toolCallId", "message", "responseSchema",
  "metadata": {"name", "input"}}]}`` (the calls' placeholder results are not
  shown). The client resumes with ``resume: [{"interruptId", "status":
  "resolved", "payload": {"approved": bool, "input"?: object, "reason"?:
  str}}]`` (``cancelled``: refused; ``responseSchema`` is that payload's JSON
  Schema, ``APPROVAL_RESPONSE_SCHEMA``), which ``read_run_input`` reads as
  ``decisions`` (a ``resolved`` payload of another shape: ``InvalidInputError``).
* a failed call -> ``RUN_ERROR`` (``code``: the error's class name; only
  agentflow's own errors carry their message, through ``mask_secrets``), the
  run's last event (AG-UI 1.0 lifecycle: a run ends with ``RUN_FINISHED`` or
  ``RUN_ERROR``; a run that fails before it starts sends ``RUN_ERROR``
  first); the open text or reasoning message is ended first, so the client
  completes it. Every failure ends so: a provider error before or after chunks, a
  tool past its retries, an output the model never got valid, an exception
  in middleware. A client that goes away gets nothing more: the call is
  cancelled.

No event is larger than the official client reads (it fails a run on one
event over 10 MB): a tool result is shown cut, a tool call's input split
across ``TOOL_CALL_ARGS`` deltas, a state update or a ``RUN_FINISHED``
value over ``MAX_SHOWN_STATE`` bytes left out and named, and an error's
text (the run's last event, a retry's message) cut with a marker to fit
(``_agui_caps``).

Frontend tools (``RunAgentInput.tools``: CopilotKit's ``useFrontendTool``,
``useCopilotAction``) are offered to the model beside the server's tools
(``agui_response(..., client_tools=True)``, the default;
``agentflow.client_tools``). A call of one goes out as ``TOOL_CALL_START``,
``TOOL_CALL_ARGS``, ``TOOL_CALL_END`` and the run finishes there
(``RUN_FINISHED`` with ``outcome`` ``{"type": "success", "pendingToolCallIds":
[...]}`` and ``result.stop_reason`` ``"client_tool_calls"``); the
frontend runs the tool and starts the next run with the messages ending in
the ``tool`` message (``toolCallId``, ``content``), which ``read_run_input``
reads as a run with no new user message: the model continues.

A step that calls both (a call waiting for approval, a frontend tool's call)
ends with the interrupt outcome (AG-UI 1.0: a run that stopped to ask is
never reported as a success, and that outcome has no ``pendingToolCallIds``):
the frontend calls are the ones streamed without a ``TOOL_CALL_RESULT`` and
bound to no interrupt, named in ``result["pending_tool_call_ids"]``. The
client resumes with both at once: ``resume`` answering the interrupts and
the messages ending with the frontend tools' ``tool`` messages (a stored
conversation, ``store``/``key``, takes both; a run missing either is refused
with ``InvalidInputError``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping
from typing import Any

from agentflow.agent import ReActAgent
from agentflow.client_tool_checks import DEFAULT_CLIENT_TOOL_LIMITS
from agentflow.client_tools import ClientToolLimits, with_client_tools
from agentflow.events import Event
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.web._agui_caps import MAX_SHOWN_RESULT
from agentflow.web._agui_encoder import AGUIEncoder
from agentflow.web._agui_input import APPROVAL_RESPONSE_SCHEMA, read_run_input
from agentflow.web._agui_state import MAX_SHOWN_STATE
from agentflow.web.run_input import ClientTool, RunInput, check_stateless, offered_tools
from agentflow.web.sse import EventStreamResponse, Outcome
from agentflow.web.store import StateStore, stream_with_store

__all__ = ["APPROVAL_RESPONSE_SCHEMA", "MAX_SHOWN_RESULT", "MAX_SHOWN_STATE", "AGUIEncoder",
           "agui_response", "read_run_input"]


def agui_response(
    agent: ReActAgent,
    run: RunInput,
    output: Any = None,
    *,
    strategy: OutputStrategy | StrategyName | None = None,
    store: StateStore | None = None,
    key: str | None = None,
    events: AsyncIterable[Event] | None = None,
    ping_interval: float = 15.0,
    headers: Mapping[str, str] | None = None,
    on_close: Callable[[Outcome], Awaitable[None]] | None = None,
    output_key: str = "output",
    client_tools: bool | Iterable[ClientTool] = True,
    client_tool_limits: ClientToolLimits = DEFAULT_CLIENT_TOOL_LIMITS,
) -> EventStreamResponse:
    """``agent.stream(run.message, output, state=run.agent_state())`` as an
    AG-UI event stream (or ``events``, e.g. ``stream_with_store(...)``, in its
    place). With ``store`` and ``key`` the call runs on that stored
    conversation and is saved when it completes (``stream_with_store``; a run
    that resumes approvals applies ``run.decisions`` first, one that brings a
    frontend tool's result puts it in place). A client that goes away cancels
    the call (``EventStreamResponse``). The structured output is set in the
    client's state under ``output_key``.

    ``client_tools``: ``True`` (default) offers the frontend's tools
    (``run.tools``) to the model, as AG-UI frontends expect; ``False`` offers
    none; ``ClientTool``s offer those instead (``agentflow.client_tools``),
    within ``client_tool_limits`` (``ClientToolLimits``: how many tools, how
    large and deep their schemas, checked before anything else).

    Raises:
        InvalidInputError: a frontend tool has the name of a server tool, or
            a bad name or parameters JSON Schema (naming the tool), or the
            tools pass one of ``client_tool_limits`` (naming it); a run
            that resumes approvals (``run.decisions``) without ``store`` and
            ``key`` (``check_stateless``).
    """
    offered = offered_tools(run, client_tools)
    agent = with_client_tools(agent, offered, limits=client_tool_limits)
    if store is not None and key is not None:
        events = stream_with_store(agent, store, key, run.message, output, strategy=strategy,
                                   decisions=run.decisions, client_results=run.tool_results())
    elif events is None:
        check_stateless(run)
        events = agent.stream(run.message, output, state=run.agent_state(), strategy=strategy)
    return EventStreamResponse(events, encoder=AGUIEncoder(
                                   run.thread_id, run.run_id, state=run.state,
                                   output_key=output_key),
                               ping_interval=ping_interval, headers=headers,
                               on_close=on_close)
