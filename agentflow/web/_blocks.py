"""Messages the UI protocols' histories become (shared by the adapters)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agentflow._clean_text import json_bytes
from agentflow.errors import InvalidInputError
from agentflow.messages import Msg, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["add_tool_result", "discarded", "is_discarded", "text_of", "tool_result_msg",
           "tool_use_msg"]


def discarded(reason: str) -> dict[str, Any]:
    """The metadata that flags a message (AG-UI) or part (AI SDK) as an
    abandoned attempt's: its text is void (the stream was cut and sent again)."""
    return {"agentflow": {"discarded": reason}}


def is_discarded(metadata: Any) -> bool:
    """Whether ``metadata`` (a message's or part's, as a client sends it back)
    flags it as an abandoned attempt's (``discarded``): it is no history."""
    mark = metadata.get("agentflow") if isinstance(metadata, Mapping) else None
    return isinstance(mark, Mapping) and bool(mark.get("discarded"))


def text_of(content: Any) -> str:
    """The text of a protocol's message content (a str, or parts with ``text``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else getattr(p, "text", "") or ""
                       for p in content)
    return ""


def tool_use_msg(text: str, calls: Sequence[tuple[str, str, Any]]) -> Msg:
    """An assistant message: ``text`` and tool calls ``(id, name, input)``;
    ``input`` is an object or its JSON text.

    Raises:
        InvalidInputError: an input that is not a JSON object.
    """
    blocks: list[Any] = [TextBlock(text)] if text else []
    for call_id, name, arguments in calls:
        value = arguments
        if isinstance(arguments, str):
            try:
                value = orjson.loads(arguments or "{}")
            except orjson.JSONDecodeError:
                value = None
        if not isinstance(value, dict):
            raise InvalidInputError(f"tool call {call_id!r}: its input is not a JSON object")
        blocks.append(ToolUseBlock(call_id, name, value))
    return Msg("assistant", blocks or [TextBlock("")])


def tool_result_msg(call_id: str, output: Any, *, is_error: bool = False,
                    name: str = "") -> Msg:
    """A tool message with one result of the call ``call_id`` (of the tool
    ``name``, when known); non-str outputs as JSON text (``is_json``: the
    value a client tool gave, a number too, is shown as that value again).

    Raises:
        InvalidInputError: ``call_id`` is not a non-empty string.
    """
    if not isinstance(call_id, str) or not call_id:
        raise InvalidInputError("a tool result needs the id of its tool call")
    if isinstance(output, str):
        return Msg("tool", [ToolResultBlock(call_id, output, is_error, name)])
    return Msg("tool", [ToolResultBlock(call_id, json_bytes(output).decode(), is_error, name,
                                        is_json=not is_error)])


def add_tool_result(messages: list[Msg], names: Mapping[str, str], call_id: Any, output: Any,
                    *, is_error: bool = False) -> None:
    """Append the result of the call ``call_id`` to ``messages``: to the tool
    message that ends them (the results of one step share one message, as
    the agent's own steps do), else as a new one. ``names`` maps the ids of
    the calls made so far to their tools' names.

    Raises:
        InvalidInputError: ``call_id`` answers no call made so far.
    """
    if not isinstance(call_id, str) or call_id not in names:
        raise InvalidInputError(f"a tool result answers the tool call {call_id!r}, which no "
                                "earlier assistant message made")
    result = tool_result_msg(call_id, output, is_error=is_error, name=names[call_id])
    if messages and messages[-1].role == "tool":
        last = messages[-1]
        messages[-1] = Msg("tool", [*last.content, *result.content], metadata=last.metadata)
    else:
        messages.append(result)
