"""Reasoning in a reply's text, removed before an answer is read: blocks
tagged ``<think>``, ``<thinking>``, ``<reasoning>`` or ``<reflection>`` (any
case, with attributes), text before an orphan closing tag (templates that
open the block themselves), and an unclosed block (``strip_thinking`` keeps
the first JSON value after it; ``visible_text``, reading a reply as it
streams, waits for it to close). ``agentflow.output.parsing`` reads answers
through it: drafts inside reasoning never count.
"""

from __future__ import annotations

import re

__all__ = ["REASONING_TAGS", "strip_thinking", "visible_text"]

REASONING_TAGS = ("think", "thinking", "reasoning", "reflection")
"""Tag names whose blocks hold reasoning, never the answer."""

_TAGS = "|".join(REASONING_TAGS)
_BLOCK = re.compile(rf"<({_TAGS})(?:\s[^<>]*)?>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(rf"<({_TAGS})(?:\s[^<>]*)?>", re.IGNORECASE)
_CLOSE = re.compile(rf"</({_TAGS})\s*>", re.IGNORECASE)


def visible_text(text: str) -> str | None:
    """``text`` without its reasoning, for reading an answer as it streams:
    closed blocks and text before an orphan closing tag removed; ``None``
    while a reasoning block is still open (what follows is a draft until the
    block closes)."""
    if "<" not in text:
        return text
    body = _BLOCK.sub("", text)
    close = _CLOSE.search(body)
    if close is not None and not _OPEN.search(body, 0, close.start()):
        body = body[close.end():]  # the template opened the block itself
    if _OPEN.search(body):
        return None
    return body


def strip_thinking(text: str) -> str:
    """``text`` without reasoning (see the module docstring), stripped.

    An unclosed opening tag keeps what follows from its first ``{``/``[``
    (a model that forgot to close the block before answering), or nothing.
    """
    if "<" not in text:
        return text.strip()
    body = _BLOCK.sub("", text)
    close = _CLOSE.search(body)
    if close is not None and not _OPEN.search(body, 0, close.start()):
        body = body[close.end():]
    opened = _OPEN.search(body)
    if opened is not None:
        rest = body[opened.end():]
        starts = [p for p in (rest.find("{"), rest.find("[")) if p >= 0]
        body = body[: opened.start()] + (rest[min(starts):] if starts else "")
    return body.strip()
