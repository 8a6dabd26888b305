"""Document ids that hold any name a file system allows.

A POSIX file name is bytes; Python gives one that is not valid UTF-8 as a
``str`` with each undecodable byte as a lone surrogate (``U+DC80``-``U+DCFF``,
PEP 383 ``surrogateescape``). Such an id is a valid input, so:

* records are written by ``dumps_record``: JSON with the surrogates as
  ``\\udcXX`` escapes, so ``os.fsencode(loads_record(line)["id"])`` gives the
  raw name back (a line without such characters is what ``orjson`` writes);
* anything shown on a terminal goes through ``printable``: control
  characters (C0, C1, DEL), bidirectional controls and lone surrogates are
  written as ``\\xNN`` / ``\\uNNNN`` escapes, so a name cannot move the cursor,
  recolour the terminal or reorder what is shown.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["BIDI_CONTROLS", "dumps_record", "loads_record", "printable"]

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Unicode's bidirectional formatting characters (embeddings, overrides,
isolates and marks): they reorder the text around them when displayed."""

_UNPRINTABLE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}\\ud800-\\udfff]")
_UNPRINTABLE_IN_LINES = re.compile(
    f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}\\ud800-\\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` safe to write to a terminal: controls, bidi controls and lone
    surrogates escaped (``\\x1b``, ``\\u202e``; a surrogate-escaped byte as
    ``\\xff``); everything else as it is. ``lines``: newlines and tabs are kept
    (a message of several lines), the other controls escaped."""
    return (_UNPRINTABLE_IN_LINES if lines else _UNPRINTABLE).sub(_escape, text)


def dumps_record(record: dict[str, Any]) -> bytes:
    """``record`` as one JSON line (without the newline): ``orjson``'s output,
    or, when a string holds a lone surrogate (an id from a non-UTF-8 file
    name), JSON with every non-ASCII character escaped (``\\udcff``)."""
    try:
        return orjson.dumps(record)
    except TypeError:  # "str is not valid UTF-8: surrogates not allowed"
        return json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode()


def loads_record(line: bytes | str) -> Any:
    """The JSON value of one line written by ``dumps_record`` (lone surrogate
    escapes come back as the surrogates they were).

    Raises:
        orjson.JSONDecodeError: the line is not JSON.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        marked = b"\\ud" in line if isinstance(line, bytes) else "\\ud" in line
        if not marked:
            raise
        try:
            return json.loads(line)
        except ValueError:
            raise orjson.JSONDecodeError("not JSON", "", 0) from None
