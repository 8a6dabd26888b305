"""Degenerate output: the shapes a looping or stalled model leaves in a valid
record, which must never count as a result.

``check_degenerate(output, source)`` lists, per field path:

* **repetition loop** – a string holding a unit of 1–16 characters repeated
  at least 6 times in a row over at least 12 characters (``d/d/d/d/d/d/``,
  ``debian-10.10.10.10.10.10``), when that run does not occur in the source
  (a ``----------`` rule copied from the document is not a loop; runs of
  whitespace never are);
* **repeated items** – a list holding one string ``MIN_REPEATED_ITEMS``
  (6) times or more, more often than the source holds it: a runaway list.
  Fewer repeats are no reason to lose the record's other fields:
  ``agentflow.extraction.list_repeats`` keeps the record and flags the list
  for review (from two copies up).

Empty grounded text and values not found in the source are the other
degenerate shapes; ``agentflow.grounding`` reports those. The
structured-output engine runs both checks after validation and feeds their
messages back to the model within the ``output_retries`` budget; a final
failure is ``DegenerateOutputError``.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any

from pydantic import BaseModel

__all__ = ["MIN_LOOP_CHARS", "MIN_LOOP_REPEATS", "MIN_REPEATED_ITEMS", "check_degenerate"]

MIN_LOOP_REPEATS = 6
"""Repetitions of a unit that make a loop."""
MIN_LOOP_CHARS = 12
"""Characters a loop must cover."""
MIN_REPEATED_ITEMS = MIN_LOOP_REPEATS
"""Copies of one item that make a list loop (when the source holds fewer): as
many as make a string loop. At 3 the embedded model's retries lost whole
records whose every other field was right (a recipe listing ``eggs`` 3 times,
a bug report ``Settings`` 3 times, each after 2 retries); two to five copies
are flagged on the field instead (``agentflow.extraction.list_repeats``)."""

_LOOP = re.compile(r"(.{1,16}?)\1{" + str(MIN_LOOP_REPEATS - 1) + ",}", re.DOTALL)


_SEQUENCES = (list, tuple)
_CONTAINERS = (str, list, tuple, dict)
"""What ``_leaves`` reads before it asks whether a value is a model."""
_SCALARS = frozenset({type(None), bool, int, float})
"""Leaf types that hold no string (no walk into them, no test of each kind)."""


def _leaves(value: Any, path: str, out: list[tuple[str, Any]]) -> None:
    """Append ``(path, value)`` of every string that may hold a loop (of at
    least ``MIN_LOOP_CHARS`` characters) and every list inside ``value`` to
    ``out``, in order (one list for the whole walk: no generator per node)."""
    kind = type(value)
    if kind in _SCALARS:
        return
    if kind is str or isinstance(value, str):
        if len(value) >= MIN_LOOP_CHARS:  # a shorter one holds no loop: not listed
            out.append((path, value))
    elif isinstance(value, _SEQUENCES):
        out.append((path, value))
        for i, item in enumerate(value):
            _leaves(item, f"{path}[{i}]", out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _leaves(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, BaseModel):
        for name in kind.model_fields:
            _leaves(getattr(value, name), f"{path}.{name}" if path else name, out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _leaves(getattr(value, f.name), f"{path}.{f.name}" if path else f.name, out)


def _loop(text: str, source: str) -> str | None:
    for m in _LOOP.finditer(text):
        run, unit = m.group(0), m.group(1)
        if len(run) >= MIN_LOOP_CHARS and unit.strip() and run not in source:
            return run
    return None


def check_degenerate(output: Any, source: str) -> list[tuple[str, str]]:
    """``(path, reason)`` for every degenerate value in ``output`` (a validated
    output: model, dataclass, dict, list or scalar); ``[]`` when there is none."""
    found: list[tuple[str, str]] = []
    leaves: list[tuple[str, Any]] = []
    if isinstance(output, BaseModel) and not isinstance(output, _CONTAINERS):
        # a model's own fields walked here: no call per null, number or short string
        for name in output.__class__.__pydantic_fields__:  # (model_fields: 2 more calls)
            value = getattr(output, name)
            kind = type(value)
            if kind is str:
                if len(value) >= MIN_LOOP_CHARS:
                    leaves.append((name, value))
            elif kind not in _SCALARS:
                _leaves(value, name, leaves)
    else:
        _leaves(output, "", leaves)
    for path, value in leaves:
        where = path or "result"
        if isinstance(value, str):
            run = _loop(value, source)
            if run is not None:
                shown = run if len(run) <= 40 else run[:37] + "..."
                found.append((where, f"repetition loop {shown!r}, not in the document"))
            continue
        counts = Counter(v for v in value if isinstance(v, str) and v.strip())
        for item, n in counts.items():
            if n >= MIN_REPEATED_ITEMS and n > source.count(item):
                shown = item if len(item) <= 40 else item[:37] + "..."
                found.append((where, f"the item {shown!r} is repeated {n} times"))
    return found
