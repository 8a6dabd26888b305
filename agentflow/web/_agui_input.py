"""Reading an AG-UI ``RunAgentInput`` request body as a ``RunInput``: the
request side of ``agentflow.web.agui`` (which re-exports ``read_run_input``).
Source of the shapes: the ``ag-ui-protocol`` package's ``ag_ui.core``
(``RunAgentInput``, its messages and ``resume`` entries)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ag_ui.core import AssistantMessage, RunAgentInput, ToolMessage, UserMessage
from pydantic import ValidationError

from agentflow.approvals import Approve, Decision, Refuse
from agentflow.errors import InvalidInputError
from agentflow.messages import Msg
from agentflow.web._blocks import add_tool_result, is_discarded, text_of, tool_use_msg
from agentflow.web._frame_caps import shown_input
from agentflow.web.run_input import ClientTool, RunInput, split_run

__all__ = ["APPROVAL_RESPONSE_SCHEMA", "read_run_input"]

#: The answer a tool approval's interrupt takes (its ``responseSchema``, so a
#: generic AG-UI frontend can render it): the resume entry's ``payload`` when
#: its status is ``resolved`` (``cancelled`` refuses, with no payload).
APPROVAL_RESPONSE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "run the call (true) or refuse it"},
        "reason": {"type": "string", "description": "why it was refused; the model reads it"},
        "input": {"type": "object", "description": "the call's input, edited, to run instead"},
    },
    "required": ["approved"],
}


def read_run_input(body: Any) -> RunInput:
    """A ``RunAgentInput`` request body (parsed JSON) as a ``RunInput``.

    Messages: ``system``/``developer`` -> system messages, ``user`` -> user
    messages (their text parts), ``assistant`` -> text and tool calls (an
    abandoned attempt's text, flagged ``discarded`` by ``AGUIEncoder``, left out),
    ``tool`` -> tool results (one tool message per run of them, each with the
    id and name of its call); other roles (``activity``, ``reasoning``) are
    the client's own and are skipped. Messages that end with tool results
    (a frontend tool answered) make a run without ``message``. ``tools``
    become ``ClientTool``s (checked when offered: ``agui_response``).

    Raises:
        InvalidInputError: the body is not a valid ``RunAgentInput`` (the
            message names the field), a tool message answers no earlier tool
            call, its messages end with neither the user's nor tool results,
            or a ``resolved`` resume entry's payload is not an object with a
            boolean ``approved`` (``APPROVAL_RESPONSE_SCHEMA``; a typo such as
            ``{"approve": true}`` refused the call without a word).
    """
    try:
        run = RunAgentInput.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInputError(f"not an AG-UI RunAgentInput: {where}: {first['msg']}") from None
    messages: list[Msg] = []
    names: dict[str, str] = {}  # tool call id -> tool name, of the calls so far
    for message in run.messages:
        if isinstance(message, UserMessage):
            messages.append(Msg.user(text_of(message.content)))
        elif isinstance(message, AssistantMessage):
            calls = [(c.id, c.function.name, c.function.arguments)
                     for c in message.tool_calls or ()]
            names.update((c[0], c[1]) for c in calls)
            void = is_discarded(message.metadata)  # an abandoned attempt's: AGUIEncoder
            if not (void and not calls):
                messages.append(tool_use_msg("" if void else message.content or "", calls))
        elif isinstance(message, ToolMessage):
            add_tool_result(messages, names, message.tool_call_id,
                            message.error or text_of(message.content),
                            is_error=message.error is not None)
        elif message.role in ("system", "developer"):
            messages.append(Msg.system(text_of(getattr(message, "content", ""))))
    tools = tuple(ClientTool(t.name, t.description, t.parameters) for t in run.tools or ())
    extra = {"context": [c.model_dump() for c in run.context or ()],
             "forwarded_props": run.forwarded_props}
    if run.resume:  # a run resumed with the person's answers to its interrupts
        return RunInput(tuple(messages), None, tools, run.state, run.thread_id, run.run_id,
                        extra, decisions={e.interrupt_id: _decision(e.interrupt_id, e.status,
                                                                     e.payload)
                                          for e in run.resume})
    history, last = split_run(messages)
    return RunInput(history, last, tools, run.state, run.thread_id, run.run_id, extra)


def _decision(interrupt_id: str, status: str, payload: Any) -> Decision:
    """A resume entry as an approval decision: ``resolved`` with ``payload``
    ``{"approved": true, "input"?: {...}}`` approves (edited when ``input``
    is given), ``{"approved": false, "reason"?: str}`` refuses; ``cancelled``
    refuses. A ``resolved`` payload of another shape is an ``InvalidInputError``:
    nothing is decided, and the person may answer again."""
    answer = payload if isinstance(payload, Mapping) else {}
    if status == "resolved" and not isinstance(answer.get("approved"), bool):
        raise InvalidInputError(
            f"the resume entry for interrupt {shown_input(interrupt_id)} is resolved with the "
            f"payload {shown_input(payload)}: send {{\"approved\": true}} to run the call, or "
            f"{{\"approved\": false, \"reason\": \"...\"}} to refuse it (the interrupt's "
            "responseSchema; \"status\": \"cancelled\" refuses too)")
    if status == "resolved" and answer.get("approved") is True:
        edited = answer.get("input")
        if edited is not None and not isinstance(edited, Mapping):
            raise InvalidInputError("a resume payload's input must be a JSON object")
        return Approve(edited)
    reason = answer.get("reason")
    return Refuse(reason if isinstance(reason, str) and reason else "the user refused this call")
