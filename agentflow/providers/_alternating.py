"""A conversation in strict turns, for chat templates that refuse anything else.

Many open-weight chat templates (Mistral, Gemma, Llama 2, served by vLLM,
TGI or llama.cpp) take one optional system message first and then user and
assistant turns alternating; anything else is refused while the prompt is
built: 400 "After the optional system message, conversation roles must
alternate user/assistant/user/assistant/..." (vllm-project/vllm#6862,
microsoft/autogen#1037), the same for several system messages at the start
(Gemma 3 on vLLM, suitenumerique/conversations#197), "System role not
supported" (Gemma 2); Mistral's API and its tokenizer on vLLM check the
order too ("Unexpected role 'system' after role 'assistant'", "Unexpected role
'user' after role 'tool'": after tool results only the assistant may speak).
An agent's system prompt beside the structured-output mode message, or a
reminder after the model's reply, broke every request.

``alternating`` rewrites a chat-completions message list into that form:
the leading system messages as one, a later system message as user text,
consecutive messages of one role (user, or assistant) as one message, and a
short assistant turn (``AFTER_TOOLS``) between tool results and a user turn.
Tool calls, tool results and their ids are kept as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["AFTER_TOOLS", "alternating"]

AFTER_TOOLS = "OK."
"""The assistant turn put between tool results and a user turn that follows them."""


def alternating(messages: Sequence[dict[str, Any]], *, system: bool = True
                ) -> list[dict[str, Any]]:
    """``messages`` in strict turns (see the module docstring); a new list,
    the given messages unchanged. ``system=False``: no system message at all,
    the leading ones too go as user text (Gemma 2's "System role not
    supported", o1's "'messages[0].role' does not support 'system'")."""
    out: list[dict[str, Any]] = []
    started = not system  # a non-system message came (or none may be system)
    for message in messages:
        role = message.get("role")
        if role == "system" and started:
            message = {"role": "user", "content": message.get("content")}
            role = "user"
        started = started or role != "system"
        last = out[-1] if out else None
        if last is not None and last.get("role") == role and role in ("system", "user"):
            out[-1] = {**last, "content": _joined(last.get("content"), message.get("content"))}
        elif last is not None and last.get("role") == role == "assistant":
            out[-1] = _assistants(last, message)
        else:
            if role == "user" and last is not None and last.get("role") == "tool":
                out.append({"role": "assistant", "content": AFTER_TOOLS})
            out.append(dict(message))
    return out


def _joined(first: Any, second: Any) -> Any:
    """Two messages' contents as one: text joined by a blank line, or content
    parts in order when either has parts."""
    if isinstance(first, list) or isinstance(second, list):
        return [*_parts(first), *_parts(second)]
    texts = [t for t in (first, second) if isinstance(t, str) and t]
    return "\n\n".join(texts) if texts else first


def _parts(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if isinstance(content, str) and content else []


def _assistants(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two assistant turns as one: text joined, tool calls in order."""
    merged = {**first, **second, "content": _joined(first.get("content"),
                                                    second.get("content")) or None}
    calls = [*(first.get("tool_calls") or ()), *(second.get("tool_calls") or ())]
    if calls:
        merged["tool_calls"] = calls
    thinking = [t for t in (first.get("reasoning_content"), second.get("reasoning_content"))
                if isinstance(t, str) and t]
    if thinking:
        merged["reasoning_content"] = "\n".join(thinking)
    return merged
