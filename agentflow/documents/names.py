"""Document ids that hold any name a file system allows.

A POSIX file name is bytes; Python gives one that is not valid UTF-8 as a
``str`` with each undecodable byte as a lone surrogate (``U+DC80``-``U+DCFF``,
PEP 383 ``surrogateescape``). Such an id is a valid input, so:

* records are written by ``dumps_record`` as strict JSON (UTF-8, no lone
  surrogate, what every JSON parser reads): a lone surrogate becomes U+FFFD,
  and a record whose ``id`` held any also carries ``id_bytes``, the name's
  bytes in base64, so ``base64.b64decode(record["id_bytes"])`` gives the raw
  name back; ``loads_record`` restores the ``id`` as Python had it
  (``os.fsdecode`` of those bytes), so a rerun resumes it and the review page
  re-reads it. Lines that agentflow wrote before (the surrogates as
  ``\\udcXX`` escapes, which strict parsers refuse) are read as they were;
* anything shown on a terminal or quoted in a logged message (a name, a
  value a web client sent: ``agentflow.web``'s ``shown_input``) goes through
  ``printable``: control characters (C0, C1, DEL), bidirectional controls,
  line and paragraph separators and lone surrogates are written as
  ``\\xNN`` / ``\\uNNNN`` escapes, so a name cannot move the cursor, recolour
  the terminal, reorder what is shown or split a logged line.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from typing import Any

import orjson

from agentflow._clean_text import json_bytes, loads_exact

__all__ = ["BIDI_CONTROLS", "ID_BYTES", "dumps_record", "loads_record", "printable"]

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Unicode's bidirectional formatting characters (embeddings, overrides,
isolates and marks): they reorder the text around them when displayed."""

ID_BYTES = "id_bytes"
"""The record key of a non-UTF-8 id's bytes, in base64 (see the module docstring)."""

_SURROGATE = re.compile("[\ud800-\udfff]")

_SEPARATORS = "\u2028\u2029"
"""Unicode's line and paragraph separators: a terminal, a log viewer or a
browser breaks the line there, so one logged line reads as two."""

_UNPRINTABLE = re.compile(
    f"[\\x00-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}{_SEPARATORS}\\ud800-\\udfff]")
_UNPRINTABLE_IN_LINES = re.compile(
    f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}{_SEPARATORS}\\ud800-\\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` safe to write to a terminal or a log: controls, bidi
    controls, line and paragraph separators and lone surrogates escaped
    (``\\x1b``, ``\\u202e``, ``\\u2028``; a surrogate-escaped byte as
    ``\\xff``); everything else as it is. ``lines``: newlines and tabs are
    kept (a message of several lines), the other controls escaped."""
    return (_UNPRINTABLE_IN_LINES if lines else _UNPRINTABLE).sub(_escape, text)


def _strict(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) as U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_strict(k): _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    return value


def dumps_record(record: dict[str, Any]) -> bytes:
    """``record`` as one line of strict JSON (without the newline): ``orjson``'s
    output; when a string holds a lone surrogate (an id from a non-UTF-8 file
    name, a message naming the file), each one as U+FFFD, and the id's bytes
    under ``ID_BYTES`` (base64), just after the id.

    Raises:
        TypeError: a value JSON cannot hold.
    """
    try:
        return orjson.dumps(record)
    except TypeError:  # a lone surrogate ("str is not valid UTF-8"), an int beyond 64 bits
        pass
    strict = _strict(record)
    rid = record.get("id")
    if isinstance(rid, str) and _SURROGATE.search(rid):
        try:
            raw = os.fsencode(rid)  # the name's bytes, as the file system gave them
        except UnicodeError:  # a surrogate no file name gives: U+FFFD is all there is
            return json_bytes(strict)
        strict = {"id": strict["id"], ID_BYTES: base64.b64encode(raw).decode("ascii"),
                  **{k: v for k, v in strict.items() if k not in ("id", ID_BYTES)}}
    return json_bytes(strict)  # (an integer beyond 64 bits: its digits)


def _restored(value: Any) -> Any:
    """A record read back with its ``id`` as written from ``ID_BYTES`` (a value
    that is not base64 leaves the record as it is)."""
    if isinstance(value, dict) and isinstance(value.get(ID_BYTES), str):
        try:
            raw = base64.b64decode(value[ID_BYTES], validate=True)
        except (binascii.Error, ValueError):
            return value
        value = {k: v for k, v in value.items() if k != ID_BYTES}
        value["id"] = os.fsdecode(raw)
    return value


def loads_record(line: bytes | str) -> Any:
    """The JSON value of one line written by ``dumps_record``: a record's ``id``
    as it was (from ``ID_BYTES``, which is dropped); a line an older agentflow
    wrote with lone-surrogate escapes (``\\udcff``) comes back as the
    surrogates they were.

    Raises:
        orjson.JSONDecodeError: the line is not JSON.
    """
    try:
        return _restored(loads_exact(line))
    except orjson.JSONDecodeError:
        marked = b"\\ud" in line if isinstance(line, bytes) else "\\ud" in line
        if not marked:
            raise
        try:
            return json.loads(line)
        except ValueError:
            raise orjson.JSONDecodeError("not JSON", "", 0) from None
