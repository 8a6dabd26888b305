"""The Ollama ``/api/chat`` request's parts (used by ``providers.ollama``):
the conversation as wire messages, and tool forcing emulated, since the wire
has no ``tool_choice`` (shared/providers.md §6; github.com/ollama/ollama
docs/api.md, api/types.go).

Tool results are one ``{"role":"tool","content","tool_name","tool_call_id"}``
message each (the wire has no error flag: an error result's text starts
``Error: ``); tool-call ``arguments`` are JSON objects; images go as base64
in a message's ``images``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentflow.messages import Msg, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentflow.model import ToolChoice, ToolSpec
from agentflow.providers._adapter import result_name, tool_calls_by_id
from agentflow.providers._media import ollama_image

__all__ = ["FORCE_ANY", "FORCE_TOOL", "offer", "wire_messages"]

FORCE_TOOL = ("You must now call the `{name}` tool, the only tool available, exactly once. "
              "Reply with the tool call only, no text.")
FORCE_ANY = "You must now call one of the available tools. Reply with tool calls only, no text."


def offer(tools: Sequence[ToolSpec], choice: ToolChoice | None
           ) -> tuple[Sequence[ToolSpec], str | None]:
    """The tools to send and the reminder that emulates ``choice``.

    ========  ===========================  ==========================
    choice    tools sent                   reminder
    ========  ===========================  ==========================
    None/auto all                          none
    none      none                         none
    required  all                          call one of the tools
    specific  only the named tool          call that tool
    ========  ===========================  ==========================
    """
    if not tools or choice is None or choice.mode == "auto":
        return tools, None
    if choice.mode == "none":
        return (), None
    if choice.mode == "required":
        return tools, FORCE_ANY
    named = [t for t in tools if t.name == choice.name]
    return (named or tools), FORCE_TOOL.format(name=choice.name)


def wire_messages(messages: Sequence[Msg]) -> list[dict[str, Any]]:
    """``messages`` as ``/api/chat`` messages (a tool result as a ``tool``
    message of its own, before the rest of its message)."""
    calls = tool_calls_by_id(messages)
    wire: list[dict[str, Any]] = []
    for msg in messages:
        results = [b for b in msg.content if isinstance(b, ToolResultBlock)]
        for block in results:
            output = f"Error: {block.output}" if block.is_error else block.output  # no flag
            wire.append({"role": "tool", "content": output,
                         "tool_name": result_name(block, calls), "tool_call_id": block.tool_use_id})
        media = msg.media
        if results and not msg.text and not media:
            continue
        item: dict[str, Any] = {"role": "user" if msg.role == "tool" else msg.role,
                                "content": msg.text}
        if media:
            item["images"] = [ollama_image(b) for b in media]
        thinking = "".join(b.thinking for b in msg.content if isinstance(b, ThinkingBlock))
        if thinking and msg.role == "assistant":
            item["thinking"] = thinking
        uses = [b for b in msg.content if isinstance(b, ToolUseBlock)]
        if uses:
            item["tool_calls"] = [{"id": b.id, "function": {"index": i, "name": b.name,
                                                            "arguments": dict(b.input)}}
                                  for i, b in enumerate(uses)]
        if item["content"] or uses or media:
            wire.append(item)
    return wire
