"""A second clause in a located value: where a rule read past the value.

A learned locator (``agentflow.grounding.locators``) that reads a field to
its line's end takes whatever the line goes on with: ``Date: 20 May 2024
(rescheduled from 13 May)``, ``Chair: Dana Wells. Also present: Ben
Carter``. Where no worked example's value holds such a break, the rule
does not pin a value that does (``Locator.pins``): the field is scored as
if it had no rule (``agentflow.extraction.confidence``: merely grounded, so
it needs review). The grammar still offers it (the value may be whole).

A **clause break** (``clause_break``) is an opening bracket (``(``, ``[``,
``{``) after some text, a clause end (``;``, ``!``, ``?``) followed by
whitespace and more text, a sentence end (``.`` after a word of at least
``SENTENCE_WORD`` characters, so that ``Dr. Lee`` and ``Corp. Ltd`` are no
break) followed by whitespace and more text. (A key inside a value, ``GNU C
Library: shared libraries``, is often the whole value: no break.)
"""

from __future__ import annotations

import re

__all__ = ["SENTENCE_WORD", "clause_break"]

SENTENCE_WORD = 5
"""Shortest word whose ``.`` ends a sentence (shorter: an abbreviation, ``Prof.``)."""

_BREAK = re.compile(r"\S\s*[(\[{]|[;!?]\s+\S")
_SENTENCE = re.compile(r"(\w+)\.\s+\S")


def clause_break(value: str) -> bool:
    """Whether ``value`` (stripped) holds a clause break (see the module docstring)."""
    text = value.strip()
    return _BREAK.search(text) is not None or any(
        len(m.group(1)) >= SENTENCE_WORD for m in _SENTENCE.finditer(text))
