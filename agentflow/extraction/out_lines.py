"""An ``--out`` file's lines read back: each line bounded (``MAX_LINE``), the
records among them, which lines are agentflow's and which record of an id is
the newest, and the settings the records were made with. ``OutFile``
(``agentflow.extraction.outfile``, which re-exports these) resumes and
compacts with them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentflow.documents.names import loads_record
from agentflow.documents.seen import SeenIds

__all__ = ["MAX_LINE", "count_settings", "is_newest", "is_ours", "iter_lines", "read_records"]

MAX_LINE = 64 * 1024 * 1024
"""Longest record line read back, in bytes (longer lines are skipped)."""

_CHUNK = 1024 * 1024


def iter_lines(path: Path, max_line: int = MAX_LINE) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line of ``path`` (without its newline); a
    line longer than ``max_line`` bytes is skipped whole, never held."""
    with path.open("rb") as f:
        offset = 0
        buffer = b""
        skipping = False
        while chunk := f.read(_CHUNK):
            pos, scan = 0, len(buffer)  # (the buffer held no newline before this chunk)
            buffer += chunk
            while True:  # (no slice of the rest per line: that is quadratic in the chunk)
                newline = buffer.find(b"\n", scan)
                if newline < 0:
                    break
                if not skipping and newline - pos <= max_line:
                    yield offset, buffer[pos:newline]
                skipping = False
                offset += newline + 1 - pos
                pos = scan = newline + 1
            buffer = buffer[pos:]
            if len(buffer) > max_line:  # an over-long line: drop what we have of it
                offset += len(buffer)
                buffer = b""
                skipping = True
        if buffer and not skipping:
            yield offset, buffer


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(offset, record)`` for each JSON object line with a string ``id``
    (torn or foreign lines are skipped)."""
    for offset, line in iter_lines(path):
        try:
            record = loads_record(line)
        except orjson.JSONDecodeError:
            continue  # a torn last line from an interrupted run
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            yield offset, record


def is_newest(line: bytes, offset: int, newest: SeenIds) -> bool:
    """Whether ``line`` (at ``offset``) is the newest record of its id."""
    try:
        record = loads_record(line)
    except orjson.JSONDecodeError:
        return False
    return (isinstance(record, dict) and isinstance(record.get("id"), str)
            and newest.get(record["id"]) == offset)


def is_ours(line: bytes) -> bool:
    """Whether ``line`` is blank, a record, or a record cut short by an
    interrupted run (a torn JSON object): anything else is a foreign line
    that agentflow never wrote. NUL bytes are ours too: the blocks of an
    interrupted write that a crash left zeroed."""
    text = line.strip().strip(b"\0")
    if not text:
        return True
    try:
        value = loads_record(text)
    except orjson.JSONDecodeError:
        return text.startswith(b'{"id"')  # records start with their id
    return isinstance(value, dict) and isinstance(value.get("id"), str)


def count_settings(record: dict[str, Any], seen: dict[str, tuple[dict[str, str], int]],
                   last: list[Any] | None = None) -> bool:
    """Count ``record``'s ``"settings"`` (``agentflow.extraction.settings_fingerprint``)
    in ``seen``: its canonical JSON -> ``(settings, records)``; whether it has
    them (a record without them, written before agentflow kept them, is not counted).
    ``last``: ``[settings, key]`` counted last, kept: that same object is not serialised again."""
    settings = record.get("settings")
    if not isinstance(settings, dict):
        return False
    key = last[1] if last is not None and last[0] is settings else orjson.dumps(
        settings, option=orjson.OPT_SORT_KEYS).decode()
    if last is not None:
        last[:] = settings, key
    held = seen.get(key)
    seen[key] = (held[0] if held else settings, (held[1] if held else 0) + 1)
    return True
