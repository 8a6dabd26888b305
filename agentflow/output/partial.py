"""Partial structured output while it streams.

``PartialOutput`` turns the text received so far (tool-call arguments or a
native JSON reply) into the object parsed so far, with pydantic-core's
partial JSON parser, and reports it only when it grew: at most one per
chunk, and never a regression of fields already seen.
"""

from __future__ import annotations

from typing import Any

import pydantic_core

from agentflow._clean_text import clean_text
from agentflow.output.parsing import ScanState, _scan, scan_brackets
from agentflow.output.schema import WRAP_FIELD

__all__ = ["PartialOutput", "ValueStarts", "json_start", "last_value_start",
           "without_open_number"]


def json_start(text: str) -> str | None:
    """``text`` from its first ``{`` or ``[`` (prose before JSON skipped), or ``None``."""
    start = min((p for p in (text.find("{"), text.find("[")) if p >= 0), default=-1)
    return text[start:] if start >= 0 else None


def last_value_start(text: str, opening: str = "{[") -> int | None:
    """Where the latest top-level JSON value of ``text`` starts (the one still
    streaming, or the last closed one), considering values that open with a
    character of ``opening``; ``None`` when there is none. Several values in
    prose: the last one is the answer (``agentflow.output.parsing``)."""
    found: int | None = None
    i = 0
    while i < len(text):
        starts = [p for p in (text.find(ch, i) for ch in opening) if p >= 0]
        if not starts:
            break
        start = min(starts)
        end, closed = _scan(text, start)
        found = start
        if not closed:
            break
        i = end + 1
    return found


class ValueStarts:
    """``last_value_start`` over a text that grows (a reply as it streams),
    scanning each character once: calling it with the text so far costs the
    new characters, not the whole text again. A text that does not extend
    the one seen last (a new attempt, reasoning removed) is scanned afresh,
    so the answer is always ``last_value_start(text, opening)``.

    Args:
        opening: the characters a value may open with (``"{"``, ``"[{"``).
    """

    __slots__ = ("_found", "_inside", "_opening", "_pos", "_seen", "_state")

    def __init__(self, opening: str = "{[") -> None:
        self._opening = opening
        self._restart()

    def _restart(self) -> None:
        self._seen = ""
        self._found: int | None = None
        self._pos = 0
        self._inside = False
        self._state: ScanState = (0, "", False)

    def __call__(self, text: str) -> int | None:
        """Where the latest top-level value of ``text`` starts, or ``None``."""
        if not text.startswith(self._seen):
            self._restart()
        n, i = len(text), self._pos
        state = self._state
        while i < n:
            if not self._inside:
                starts = [p for p in (text.find(ch, i) for ch in self._opening) if p >= 0]
                if not starts:
                    i = n
                    break
                i = self._found = min(starts)
                self._inside, state = True, (0, "", False)
            end, closed, state = scan_brackets(text, i, state)
            if closed:
                self._inside = False
            i = end + 1 if closed else n
        self._pos, self._seen = i, text
        self._state = state
        return self._found


_NUMBER_CHARS = frozenset("0123456789.eE+-")


def without_open_number(text: str) -> str:
    """``text`` without the number it ends in, when one does: the next chunk
    may extend it (``"fahrenheit": 6`` is the start of ``64.4``), so a partial
    output shows a number only once something follows it. A number inside a
    string is left alone unless it follows ``:``, ``,`` or ``[`` (cut then, it
    only holds back a string's last characters for a chunk)."""
    i = len(text)
    while i > 0 and text[i - 1] in _NUMBER_CHARS:
        i -= 1
    if i == len(text) or not (text[i] == "-" or text[i].isdigit()):
        return text
    before = text[:i].rstrip()
    return before if before[-1:] in ("", ":", ",", "[") else text


class PartialOutput:
    """Tracks one output's partial value.

    Args:
        wrapped: the output travels as ``{"result": ...}`` (unwrap it).
    """

    __slots__ = ("last", "start", "wrapped")

    def __init__(self, wrapped: bool) -> None:
        self.wrapped = wrapped
        self.last: Any = None
        self.start: int | None = None
        """Where in the reply text the value followed so far starts (text outputs)."""

    def reset(self) -> None:
        """Forget the value so far: the next partial starts from nothing (after
        an ``AttemptDiscarded`` or an output retry)."""
        self.last = None
        self.start = None

    def from_text(self, text: str) -> Any | None:
        """The new partial value of JSON ``text`` (incomplete), or ``None``.
        Text holding a lone UTF-16 surrogate (which pydantic-core refuses with
        a ``TypeError``: a model that cut an emoji's pair) is read mended."""
        text = without_open_number(text)
        try:
            data = pydantic_core.from_json(text, allow_partial="trailing-strings")
        except ValueError:
            return None
        except TypeError:
            try:
                data = pydantic_core.from_json(clean_text(text), allow_partial="trailing-strings")
            except (ValueError, TypeError):
                return None
        return self.update(data)

    def update(self, data: Any) -> Any | None:
        """Record ``data``; return it when it is new and not a regression."""
        if self.wrapped and isinstance(data, dict):
            if WRAP_FIELD not in data:
                return None
            data = data[WRAP_FIELD]
        last = self.last
        if data == last or data in (None, {}, []):
            return None
        if isinstance(last, dict) and not (isinstance(data, dict) and last.keys() <= data.keys()):
            return None  # never regress: fields already seen stay
        self.last = data
        return data
