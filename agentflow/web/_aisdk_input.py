"""Reading the body ``useChat``'s default transport posts (``{"id",
"messages": [UIMessage...], "trigger", ...}``) as a ``RunInput``: the
request side of ``agentflow.web.aisdk`` (which re-exports
``read_chat_request``). Source of the shapes: the ``ai`` package's
``UIMessage`` parts (ai 6.0)."""

from __future__ import annotations

from typing import Any

from agentflow.approvals import Approve, Decision, Refuse
from agentflow.errors import InvalidInputError
from agentflow.messages import Msg
from agentflow.web._blocks import add_tool_result, is_discarded, tool_use_msg
from agentflow.web.run_input import ClientTool, RunInput, split_run

__all__ = ["read_chat_request"]


def _ui_message(index: int, message: Any, names: dict[str, str]) -> list[Msg]:
    """One UI message as ``Msg``s: a system or user message; an assistant
    message as one assistant message per step (``step-start`` parts divide
    them) holding its text and the tool calls that have an outcome, each
    followed by one tool message with their results. ``names`` collects the
    calls' tool names by id."""
    if not isinstance(message, dict) or message.get("role") not in ("system", "user",
                                                                    "assistant"):
        raise InvalidInputError(f"messages[{index}] is not a UI message with a role of "
                                "system, user or assistant")
    parts = message.get("parts")
    if not isinstance(parts, list) and "parts" not in message and "content" in message:
        raise InvalidInputError(
            f"messages[{index}] has content but no parts: a UI message (the ai package 5 "
            "or later, useChat's default transport) holds its text in parts, "
            "[{\"type\": \"text\", \"text\": ...}]; content is the message of ai 4 (whose "
            "data stream protocol this route does not speak) or of an AG-UI run "
            "(agentflow.web.agui's route reads those)")
    if not isinstance(parts, list):
        raise InvalidInputError(f"messages[{index}].parts must be a list")
    role = message["role"]
    if role != "assistant":
        text = "".join(p["text"] for p in parts
                       if isinstance(p, dict) and p.get("type") == "text"
                       and isinstance(p.get("text"), str))
        return [Msg.system(text) if role == "system" else Msg.user(text)]
    steps: list[list[Any]] = [[]]
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "step-start":
            steps.append([])
        else:
            steps[-1].append(part)
    out: list[Msg] = []
    for step in steps:
        out.extend(_ui_step(index, step, names))
    return out or [Msg.assistant("")]


def _ui_step(index: int, parts: list[Any], names: dict[str, str]) -> list[Msg]:
    text = "".join(p["text"] for p in parts  # (an abandoned attempt's text: no history)
                   if isinstance(p, dict) and p.get("type") == "text"
                   and isinstance(p.get("text"), str)
                   and not is_discarded(p.get("providerMetadata")))
    calls: list[tuple[str, str, Any]] = []
    results: list[tuple[str, Any, bool]] = []
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            continue
        kind = part["type"]
        if not (kind.startswith("tool-") or kind == "dynamic-tool"):
            continue
        name = part.get("toolName") if kind == "dynamic-tool" else kind[5:]
        call_id = part.get("toolCallId")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str):
            raise InvalidInputError(f"messages[{index}]: a tool part without toolCallId")
        state = part.get("state")
        if state == "output-available":
            results.append((call_id, part.get("output"), False))
        elif state == "output-error":
            results.append((call_id, str(part.get("errorText", "")), True))
        elif state == "output-denied":  # a refused approval: the model read the refusal
            results.append((call_id, _refusal(part).result_text, True))
        else:
            continue  # a call without its outcome is not history yet
        calls.append((call_id, name, part.get("input") or {}))
    if not text and not calls:
        return []
    out = [tool_use_msg(text, calls)]
    names.update((c[0], c[1]) for c in calls)
    for call_id, output, is_error in results:
        add_tool_result(out, names, call_id, output, is_error=is_error)
    return out


def _client_tools(tools: Any) -> tuple[ClientTool, ...]:
    """The body's ``tools`` (a frontend's tool declarations, as assistant-ui's
    AI SDK transport sends them): a map ``{name: {description?, parameters |
    inputSchema}}`` or a list of ``{name, description?, parameters |
    inputSchema}``; absent: none."""
    if tools is None:
        return ()
    if isinstance(tools, dict):
        entries = [(name, entry) for name, entry in tools.items()]
    elif isinstance(tools, list):
        entries = [(e.get("name") if isinstance(e, dict) else None, e) for e in tools]
    else:
        raise InvalidInputError("tools must be a map of name -> {description, parameters} "
                                "or a list of {name, description, parameters}")
    out: list[ClientTool] = []
    for name, entry in entries:
        if not isinstance(entry, dict) or not isinstance(name, str):
            raise InvalidInputError(f"tools: the entry {name!r} is not a tool declaration "
                                    "({name, description, parameters})")
        description = entry.get("description") or ""
        schema = entry.get("parameters", entry.get("inputSchema"))
        out.append(ClientTool(name, description, schema))
    return tuple(out)


def read_chat_request(body: Any) -> RunInput:
    """The body of ``useChat``'s default transport as a ``RunInput``:
    ``{"id": chat id, "messages": [UIMessage...], "tools"?: ..., ...}``;
    ``text`` parts become message text (an abandoned attempt's, flagged
    ``discarded`` by ``UIMessageEncoder``, left out), tool parts with an
    outcome become tool calls and results (one assistant and one tool
    message per step), other
    parts (reasoning, data, files) are skipped. Messages that end with an
    assistant message whose last tool calls have their outcomes (a client-side
    tool answered with ``addToolOutput``) make a run without ``message`` that
    continues that assistant message (``extra["message_id"]``). A ``tools``
    field (frontend tools, e.g. assistant-ui's) becomes ``ClientTool``s.

    Raises:
        InvalidInputError: naming what is malformed; messages that end with
            neither the user's nor answered tool calls.
    """
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise InvalidInputError('send {"messages": [UIMessage, ...]} (the useChat body)')
    messages: list[Msg] = []
    names: dict[str, str] = {}
    for index, message in enumerate(body["messages"]):
        messages.extend(_ui_message(index, message, names))
    chat_id = body.get("id")
    thread = chat_id if isinstance(chat_id, str) else ""
    tools = _client_tools(body.get("tools"))
    extra = {k: v for k, v in body.items() if k not in ("id", "messages", "tools")}
    last_ui = body["messages"][-1] if body["messages"] else None
    decisions = _decisions(last_ui)
    if decisions:  # a run resumed with the person's answers: no new user message
        last_id = last_ui.get("id") if isinstance(last_ui, dict) else None
        if isinstance(last_id, str):
            extra["message_id"] = last_id  # the stream continues that message
        return RunInput(tuple(messages), None, tools, thread_id=thread, extra=extra,
                        decisions=decisions)
    history, last = split_run(messages)
    if last is None and isinstance(last_ui, dict) and isinstance(last_ui.get("id"), str):
        extra["message_id"] = last_ui["id"]  # the client's tool results: continue it
    return RunInput(history, last, tools, thread_id=thread, extra=extra)


def _decisions(message: Any) -> dict[str, Decision]:
    """The approval answers in the last (assistant) UI message: tool parts in
    state ``approval-responded`` with ``approval: {id, approved, reason?}``."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return {}
    decisions: dict[str, Decision] = {}
    for part in message.get("parts") or ():
        if not isinstance(part, dict) or part.get("state") != "approval-responded":
            continue
        call_id = part.get("toolCallId")
        if not isinstance(call_id, str):
            raise InvalidInputError("an approval-responded tool part needs toolCallId and "
                                    "approval {id, approved}")
        decisions[call_id] = _decision(part)
    return decisions


def _decision(part: dict[str, Any]) -> Decision:
    """A tool part's ``approval: {id, approved, reason?}`` as a decision.

    Raises:
        InvalidInputError: the part has no ``approval`` object.
    """
    return Approve() if _approval(part).get("approved") is True else _refusal(part)


def _refusal(part: dict[str, Any]) -> Refuse:
    """A refused tool part's refusal, with the ``approval``'s reason if any.

    Raises:
        InvalidInputError: the part has no ``approval`` object.
    """
    reason = _approval(part).get("reason")
    return Refuse(reason) if isinstance(reason, str) and reason else Refuse()


def _approval(part: dict[str, Any]) -> dict[str, Any]:
    approval = part.get("approval")
    if not isinstance(approval, dict):
        raise InvalidInputError(f"the tool part {part.get('toolCallId')!r} in state "
                                f"{part.get('state')!r} needs approval {{id, approved}}")
    return approval
