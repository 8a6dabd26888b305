"""The Vercel AI SDK's UI message stream protocol (``useChat``,
``readUIMessageStream``) over ``agent.stream``: ``UIMessageEncoder`` turns
agentflow's events into UI message chunks, and ``read_chat_request`` reads
the body ``useChat``'s default transport posts (``{"id", "messages":
[UIMessage...], "trigger", ...}``).

    @app.post("/api/chat")
    async def chat(request: Request) -> Response:
        run = read_chat_request(await read_json(request))
        return ui_message_stream_response(agent, run, Contact)

The wire (source: the ``ai`` package's ``uiMessageChunkSchema`` and
``UI_MESSAGE_STREAM_HEADERS``, ai 6.0): SSE frames ``data: <chunk JSON>``,
ended by ``data: [DONE]``, with the header ``x-vercel-ai-ui-message-stream:
v1``. Mapping:

* ``call_started`` -> ``start`` (``messageId``: the call id)
* each reasoning step -> ``start-step`` ... ``finish-step``
* ``thinking_chunk`` -> ``reasoning-start``/``reasoning-delta``/``reasoning-end``
* ``reasoning_chunk`` (the reply text) -> ``text-start``/``text-delta``/``text-end``
* ``tool_use`` -> ``tool-input-start`` + ``tool-input-available``;
  ``tool_result`` -> ``tool-output-available`` (``output``: the value the
  tool returned, ``ToolResult.is_json``, or the result text) or
  ``tool-output-error``. The structured-output engine's own tool is not shown.
* ``output_partial`` -> ``data-output`` with ``id`` ``"output"`` (the client
  replaces the part in place as it grows); the validated output comes last
  in the same part. An output that could not be had -> ``data-output-error``.
* ``approval_requested`` -> ``tool-approval-request`` per call (``approvalId``:
  the tool call id), in the step of its calls (it follows their results);
  the call's placeholder result (``ToolResult.waiting``) is not shown, and
  ``finish`` has ``finishReason`` ``tool-calls``. The client answers with the
  tool part in state ``approval-responded`` (``approval: {id, approved,
  reason}``), which ``read_chat_request`` reads as ``decisions``; the resumed
  stream answers a refused call with ``tool-output-denied`` (the part's
  state ``output-denied``, as the ``ai`` package's own ``streamText`` does),
  not with its result (the model reads ``Refused: <reason>``).
* ``tool_progress`` -> a transient ``data-tool-progress`` chunk (``data``: the
  wire's JSON of the event: ``id``, the tool call's, ``progress``...; read
  it in ``useChat``'s ``onData``: the message keeps no part of it)
* ``output_retry`` / ``attempt_discarded`` -> transient ``data-output-retry`` /
  ``data-attempt-discarded`` (the wire's JSON of the event). An attempt whose
  text is void (a stream cut and sent again: ``stream_error``,
  ``degradation``) is retracted as far as the protocol lets a server: its
  open text and reasoning parts end with ``providerMetadata``
  ``{"agentflow": {"discarded": <reason>}}`` (the client keeps it on the
  part), the event names every part of the attempt (``part_ids``; a
  reasoning part keeps its id in the message), and the retry's parts take
  new ids (``...-retry<n>``), so they are new parts, never appended to the
  abandoned ones; ``read_chat_request`` leaves flagged parts out of the
  history a client sends back. A part once ended cannot be flagged (the
  client refuses a second ``text-end``, and a text part keeps no id), so a
  step's text parts stay open until its attempt cannot be discarded (its
  tool calls, the next step, the end): a thought between two pieces of text
  leaves the first part open beside the next ones, not ended; a
  ``superseded`` partial output (a later JSON value in the text) voids the
  output so far only, and the text part stays open through it. (``ai`` 7's
  ``reset-step`` chunk, which drops the parts since the step's start, is not
  sent: ``ai`` 6's chunk schema fails the whole stream on a type it does not
  know.)
* client-side tools (``ui_message_stream_response(..., client_tools=...)``,
  ``agentflow.client_tools``): a call of one is ``tool-input-start`` +
  ``tool-input-available`` and the stream finishes (``finishReason``
  ``tool-calls``); the client runs it (``onToolCall``, ``addToolOutput``) and
  sends the messages again (``sendAutomaticallyWhen:
  lastAssistantMessageIsCompleteWithToolCalls``), the tool part in state
  ``output-available``; ``read_chat_request`` reads that as a run that
  continues the same assistant message.
* ``complete`` -> ``finish`` (``finishReason`` as ``finish_reason``
  decides: ``stop``, ``length`` for a text answer the token limit cut,
  ``content-filter`` for one the vendor's filter or the model's refusal
  stopped, ``tool-calls``, ``error`` for ``output_failed``, ``other`` for
  ``max_iters``/``stopped``; the ``messageMetadata`` holds ``stop_reason``
  and ``usage``)
* a failed call -> ``error`` (``errorText`` ``"<ErrorType>: <message>"``;
  only agentflow's own errors carry their message, through ``mask_secrets``),
  the last chunk before ``[DONE]``, with no ``finish``: the ``ai`` package's
  own ``createUIMessageStream`` ends a failed stream so, and its chat then
  has status ``error``. Every failure ends so: one before any event (no
  ``start`` then), a provider error mid-stream (the open text and reasoning
  parts are ended first), a tool past its retries, an output the model never
  got valid, an exception in middleware. A client that goes away gets
  nothing more: the call is cancelled.

A tool's result (``tool-output-available``'s ``output``,
``tool-output-error``'s ``errorText``) is shown cut at ``MAX_SHOWN_RESULT``
characters with a note saying how many more the model read, as AG-UI's
``TOOL_CALL_RESULT`` is (``_frame_caps.shown_result``; the value the tool
returned, a number too, or a text that is a JSON object or array, is sent as
that value, ``_frame_caps.shown_output``): the chat keeps every
part in memory and posts the whole history back with each message, so an
MCP server's file read of 100 MB would otherwise reach the page, and come
back, whole. A frame that carries an error (``error``, ``data-output-error``,
and the ``message`` of ``data-output-retry`` / ``data-attempt-discarded``)
is at most ``max_error_bytes`` of JSON: a longer error text is cut with a
marker saying how much is not shown (``_frame_caps``), the frame never left
out. A JSON value the chat keeps in a part, a tool's input
(``tool-input-available``'s ``input``) and the output (``data-output``'s
``data``, each partial and the validated one), is capped by the same
``MAX_SHOWN_RESULT`` characters and never cut: over it, the marker
``{"not_shown": {"characters": N, "limit": MAX_SHOWN_RESULT}}`` stands in
its place (``_frame_caps.shown_json``), and the last ``data-output`` is that
marker, so no partial is left standing for the output. A history the client
sends back holds the marker as the call's input; a stored conversation
(``store``/``key``) keeps the whole. A client-side tool's input is sent
whole (the client runs the tool on it: ``whole_inputs``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping
from typing import Any

from agentflow.agent import ReActAgent
from agentflow.approvals import Refuse
from agentflow.client_tool_checks import DEFAULT_CLIENT_TOOL_LIMITS
from agentflow.client_tools import ClientToolLimits, with_client_tools
from agentflow.events import Event
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.web._aisdk_encoder import UI_MESSAGE_STREAM_HEADERS, UIMessageEncoder
from agentflow.web._aisdk_input import read_chat_request
from agentflow.web.run_input import ClientTool, RunInput, check_stateless, offered_tools
from agentflow.web.sse import EventStreamResponse, Outcome
from agentflow.web.store import StateStore, stream_with_store

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "UIMessageEncoder", "read_chat_request",
           "ui_message_stream_response"]


def ui_message_stream_response(
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
    client_tools: bool | Iterable[ClientTool] = True,
    client_tool_limits: ClientToolLimits = DEFAULT_CLIENT_TOOL_LIMITS,
) -> EventStreamResponse:
    """``agent.stream(run.message, output, state=run.agent_state())`` as a UI
    message stream (or ``events``, e.g. ``stream_with_store(...)``, in its
    place). With ``store`` and ``key`` the call runs on that stored
    conversation and is saved when it completes (``stream_with_store``; a run
    that resumes approvals applies ``run.decisions`` first, one that brings a
    client-side tool's output puts it in place). A client that goes away
    cancels the call.

    ``client_tools``: the client-side tools offered to the model beside the
    agent's (``agentflow.client_tools``). ``True`` (default): the tools the
    request declared (``run.tools``; ``useChat``'s own body declares none);
    ``False``: none; ``ClientTool``s: those (the AI SDK's way: the server
    declares the tools the client runs with ``onToolCall``/``addToolOutput``).
    A call of one streams ``tool-input-start``/``tool-input-available`` and
    the stream finishes (``finishReason`` ``tool-calls``). The tools are
    checked within ``client_tool_limits`` (``ClientToolLimits``: how many,
    how large and deep their schemas, before anything else).

    Raises:
        InvalidInputError: a client tool has the name of a server tool, or a
            bad name or parameters JSON Schema (naming the tool), or the tools
            pass one of ``client_tool_limits`` (naming it); a run that resumes
            approvals (``run.decisions``) without ``store`` and ``key``
            (``check_stateless``).
    """
    offered = offered_tools(run, client_tools)
    agent = with_client_tools(agent, offered, limits=client_tool_limits)
    if store is not None and key is not None:
        events = stream_with_store(agent, store, key, run.message, output, strategy=strategy,
                                   decisions=run.decisions, client_results=run.tool_results())
    elif events is None:
        check_stateless(run)
        events = agent.stream(run.message, output, state=run.agent_state(), strategy=strategy)
    continued = (run.extra.get("message_id")
                 if run.decisions is not None or run.message is None else None)
    refused = [i for i, decision in (run.decisions or {}).items() if isinstance(decision, Refuse)]
    return EventStreamResponse(events, encoder=UIMessageEncoder(
                                   continued if isinstance(continued, str) else None,
                                   refused=refused,
                                   whole_inputs=[tool.name for tool in offered]),
                               ping_interval=ping_interval,
                               headers=headers, on_close=on_close)
