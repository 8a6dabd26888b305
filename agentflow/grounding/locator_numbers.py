"""Locators for number fields: a number written after a key (``max-line-length
= 100``) is pinned as a string after its key is (newcomer24 probe: every
``max_line_length`` was flagged, right or not).

A number field once got no rule: grounding checks a number by value against
the numbers a document writes (``agentflow.grounding.typed_values``: the
model normalises ``1,200`` to 1200), which says the value is there, not that
it is the one meant. Here a single number field (``int``, ``float``,
``Decimal``, or ``| None``; never a ``bool`` nor an enum, nor ``Derived()``)
learns the rule its examples' values teach as the text they write them with
(``number_fields``, ``numbers_as_written``: ``88`` of ``max-line-length =
88``), kept only where it reads after a key (``Locator.labelled``: no
argument, item or bare-punctuation rule). Its values are compared by value,
and only where written plainly (``number_text``): a rule that reads a
number in another convention (``1,200``, ``1.2e3``, ``12%``) or a text that
is no number says nothing (the value is scored by grounding alone, as
before), so the model's normalising is never taken for the rule's value,
nor a rounded float (``3.14`` for ``3.14159``: the rule disagrees) for the
written one. The grammar never offers a number rule's values (its field
keeps its ordinary number grounding: ``agentflow.grounding.locator_offer``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any, get_args

from pydantic import BaseModel

from agentflow.grounding.locator_places import example_value
from agentflow.grounding.marked_types import is_derived, is_union, object_fields, unwrap_annotated
from agentflow.grounding.typed_values import written_at
from agentflow.output.examples import CheckedExample

__all__ = ["PLAIN_NUMBER", "number_fields", "number_text", "numbers_as_written"]

PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)\Z")
"""A number written plainly: digits, perhaps a sign and a decimal point; no
grouping, exponent, unit or percent sign."""


def number_fields(output_type: Any) -> list[str]:
    """The top-level single number fields of ``output_type`` (see the module
    docstring), in order."""
    fields = object_fields(output_type)
    if fields is None:
        return []
    infos = output_type.model_fields if isinstance(output_type, type) and issubclass(
        output_type, BaseModel) else {}
    return [name for name, ann, _marks in fields if _is_number(ann) and not (
        name in infos and is_derived(infos[name].annotation, infos[name].metadata))]


def _is_number(tp: Any) -> bool:
    """Whether ``tp`` (less ``Annotated`` and ``| None``) is a number type."""
    tp, _ = unwrap_annotated(tp)
    if is_union(tp):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) != 1:
            return False
        tp, _ = unwrap_annotated(args[0])
    return isinstance(tp, type) and issubclass(tp, int | float | Decimal) and not issubclass(
        tp, bool | Enum)


def numbers_as_written(examples: Sequence[CheckedExample],
                       name: str) -> list[CheckedExample] | None:
    """``examples`` with field ``name``'s number as the text each writes it
    with (``_written``: its first place, with its sign), null kept; ``None``
    where an example's value is no number, is not written there plainly
    (``PLAIN_NUMBER``), or its value is neither a model nor a mapping."""
    out = []
    for example in examples:
        number = example_value(example, name)
        if number is None:
            out.append(example)
            continue
        if isinstance(number, bool) or not isinstance(number, int | float | Decimal):
            return None
        text = _written(number, example.text)
        if not PLAIN_NUMBER.match(text):
            return None
        value = example.value
        if isinstance(value, BaseModel):
            value = value.model_copy(update={name: text})
        elif isinstance(value, Mapping):
            value = {**value, name: text}
        else:
            return None
        out.append(CheckedExample(example.text, value))
    return out


def _written(number: int | float | Decimal, text: str) -> str:
    """The text ``text`` first writes ``number`` with (``typed_values.
    written_at``), with the sign written before it where the value read has
    it (``-5`` of ``offset = -5``: ``written_at`` places the digits alone, and
    a rule learned after ``offset = -`` read ``7`` of ``offset = -7``, so a
    model's 7 held), else ``""``: also where that text, read plainly, is
    another number (``1.200`` for 1200, its point a grouping one: a rule
    learned there compared ``1.500`` as 1.5)."""
    span = written_at(number, text)
    if span is None:
        return ""
    start, end = span
    if start > 0 and text[start - 1] in "+-" and not (
            start > 1 and (text[start - 2].isalnum() or text[start - 2] in "._+-")) and (
            _decimal(text[start - 1:end]) == _decimal(number)):
        start -= 1  # (not the ``-`` of a range ``1-5``)
    written = text[start:end]  # ``1.200`` for 1200 (a grouping point): no plain number
    return written if _decimal(written) == _decimal(number) else ""


def number_text(found: Sequence[str], value: Any) -> str | None:
    """The text of ``found`` (a number rule's values in a document) that
    writes number ``value``, else ``str(value)`` (the rule reads another
    number, or none); ``None`` where a value it reads is not written plainly
    (``PLAIN_NUMBER``: ``1,200``, ``80%``, a word): the rule cannot compare
    it by value, so it says nothing."""
    if any(not PLAIN_NUMBER.match(f.strip()) for f in found):
        return None
    target = _decimal(value)
    for text in found:
        if target is not None and _decimal(text.strip()) == target:
            return text
    return str(value)


def _decimal(value: Any) -> Decimal | None:
    """``value`` (a number or its plain text) as a finite ``Decimal``, or ``None``."""
    if isinstance(value, bool):
        return None
    try:
        number = Decimal(value) if isinstance(value, int | str) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None
