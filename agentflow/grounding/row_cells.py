"""The cells every example's value line shares, where the examples cannot
tell which of them picks the record.

A table's row picked by its key (the Debian release whose series is
``bookworm``) is the same row in every example: its other cells are the
same too (``12,Bookworm,bookworm,2021-08-14``), and a rule learned there
keeps whichever of them its context happens to hold: the version's ``,``
before ``Bookworm`` (the codename cell, not the series), the codename's
``12,`` (the version cell). On a row that writes that cell but not the key
(``12,Bookworm,bookworm-backports,...``) it reads another record's value.
Where a rule's context holds a value another field takes in every example
(the same one), the examples cannot tell which cell is the key, and the rule
keeps the **row** (``Locator.row``, ``shared_row``): the text every example
writes before and after the value on its line. On a document whose line does
not write that whole row around the value the rule finds, the rule neither
narrows the grammar nor pins a value (``row_differs``, asked by
``Locator.twins_agree``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentflow.grounding.locator_places import common_end, common_start, example_value, seen_at
from agentflow.output.examples import CheckedExample

__all__ = ["row_differs", "shared_row"]

_TOKEN = re.compile(r"\w+(?:[.-]\w+)*")
_TOKEN_CHAR = re.compile(r"[\w.-]")


def _shared(name: str, examples: Sequence[CheckedExample]) -> str | None:
    """The single value every example that fills field ``name`` gives it
    (letter case folded), two examples or more; else ``None``."""
    values = [v.strip().casefold() for e in examples
              if isinstance(v := example_value(e, name), str) and v.strip()]
    return values[0] if len(values) > 1 and len(set(values)) == 1 else None


def shared_row(field: str, context: str, fields: Sequence[str],
               examples: Sequence[CheckedExample]) -> tuple[str, ...]:
    """The text every example writes before and after field ``field``'s
    single value on its line (whole tokens at its outer ends), where the
    rule's ``context`` (its label and the word after its end) holds, as a
    whole token, the value another of ``fields`` takes in every example;
    else ``()``."""
    words = {m.group(0).casefold() for m in _TOKEN.finditer(context)}
    if not any((v := _shared(g, examples)) is not None and v in words
               for g in fields if g != field):
        return ()
    befores, afters = [], []
    for example in examples:
        value = example_value(example, field)
        if not isinstance(value, str) or not value.strip():
            continue
        seen = seen_at(value.strip(), example.text)
        if seen is None:
            return ()
        befores.append(seen.before)
        afters.append(seen.after.split("\n", 1)[0])
    if len(befores) < 2:
        return ()
    before, after = common_end(befores), common_start(afters)
    if before and any(len(b) > len(before) and _TOKEN_CHAR.match(b[-len(before) - 1])
                      for b in befores):
        before = re.sub(r"\A[\w.-]*", "", before)  # a token each example begins otherwise
    if after and any(len(a) > len(after) and _TOKEN_CHAR.match(a[len(after)]) for a in afters):
        after = re.sub(r"[\w.-]*\Z", "", after)  # a token each example ends otherwise
    return (before, after)


def row_differs(row: Sequence[str], value: str, text: str) -> bool:
    """Whether no line of ``text`` writes ``value`` inside the whole ``row``
    (its text before and after, whole tokens)."""
    if not row:
        return False
    before, after = row
    pattern = re.compile((r"(?<![\w.-])" if before[:1].isalnum() or not before else "")
                         + re.escape(before + value + after)
                         + (r"(?![\w.-])" if after[-1:].isalnum() else ""))
    return not any(pattern.search(line) for line in text.splitlines())
