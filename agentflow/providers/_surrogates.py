"""Stream payloads whose JSON holds a lone UTF-16 surrogate escape.

A gateway that re-chunks text by UTF-16 code units (JavaScript strings) can
end one stream event with the first half of an emoji's surrogate pair and
start the next with the second, each escaped on its own (``"Hi \\ud83d"``,
then ``"\\ude00 there"``; ``JSON.stringify`` writes a lone surrogate so).
orjson refuses such a payload; ``loads_lone`` reads it with the standard
library, and ``SurrogateJoiner`` mends the text of the chunks made from it:
a high surrogate at the end of a fragment waits for the next fragment of the
same text (reply text, thinking, one call's arguments), a pair becomes its
character, and a half left alone becomes U+FFFD. No chunk downstream holds
a lone surrogate (it cannot be encoded, printed or parsed as JSON there).
``ReplyGuard`` uses both only once a payload needed them.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from agentflow._clean_text import clean_text
from agentflow.model import ModelChunk, TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["SurrogateJoiner", "loads_lone"]

_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate (``\\ud800``-``\\udfff``)."""


def loads_lone(raw: str | bytes) -> tuple[bool, Any]:
    """``(True, value)`` for JSON ``raw`` that orjson refused for a lone
    surrogate escape, read by the standard library; ``(False, None)`` when
    ``raw`` holds no such escape or is not JSON anyway."""
    text = raw if isinstance(raw, str) else raw.decode(errors="replace")
    if not _ESCAPE.search(text):
        return False, None
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


class SurrogateJoiner:
    """Mends the text of one reply's chunks (see the module docstring).

    Args:
        hold: hold a trailing high surrogate for the next fragment (a
            stream); a whole reply has no next fragment (it becomes U+FFFD).
    """

    __slots__ = ("_held", "_hold")

    def __init__(self, *, hold: bool) -> None:
        self._hold = hold
        self._held: dict[Any, str] = {}

    def join(self, chunks: list[ModelChunk]) -> list[ModelChunk]:
        """``chunks`` with their text mended (a fragment left empty is dropped)."""
        out: list[ModelChunk] = []
        for chunk in chunks:
            if isinstance(chunk, TextDelta):
                text = self._mend("text", chunk.text)
                if text:
                    out.append(replace(chunk, text=text))
            elif isinstance(chunk, ThinkingDelta) and chunk.text:
                text = self._mend("thinking", chunk.text)
                if text or chunk.signature or chunk.provider_data:
                    out.append(replace(chunk, text=text))
            elif isinstance(chunk, ToolCallDelta) and isinstance(chunk.arguments, str):
                out.append(replace(chunk, arguments=self._mend(chunk.index, chunk.arguments)))
            else:
                out.append(chunk)
        return out

    def _mend(self, key: Any, text: str) -> str:
        text = self._held.pop(key, "") + text
        if self._hold and text and "\ud800" <= text[-1] <= "\udbff":
            self._held[key], text = text[-1], text[:-1]
        return clean_text(text)
