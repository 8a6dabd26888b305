"""Messages the UI protocols' histories become (shared by the adapters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from agentflow.errors import InvalidInputError
from agentflow.messages import Msg, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["text_of", "tool_result_msg", "tool_use_msg"]


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


def tool_result_msg(call_id: str, output: Any, *, is_error: bool = False) -> Msg:
    """A tool message with one result (non-str outputs as JSON text)."""
    text = output if isinstance(output, str) else orjson.dumps(output).decode()
    return Msg("tool", [ToolResultBlock(call_id, text, is_error)])
