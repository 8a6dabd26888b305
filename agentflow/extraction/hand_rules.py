"""Which fields a schema's own place rules pin down: hand rules that held.

A field marked ``Grounded(line=..., after=..., whole_items=True,
longest=True)`` (with its ``pattern``) says where its value is written, as
a learned locator (``agentflow.grounding.locators``) does. Grounding already
checked that the value obeys those rules; this module asks the stronger
question a locator answers: do the rules leave the document **one** value
for the field (or, for a list of whole items, do the items the output took
cover **every** item the rules allow)? When they do, the value is the one
the rules find, and ``agentflow.extraction.confidence`` rates the field as
a locator that held (``HELD``); a value among several the rules allow stays
merely grounded.

* a choice (``Literal`` / ``str`` enum) on its ``line``: the only label of
  the choice that occurs where the rules allow (letter case ignored);
* a string: the only distinct value ``agentflow.output.grammar_values.
  places`` lists under its ``line`` and ``pattern`` (whole tokens when the
  marker says so; only the maximal ones under ``longest``), starting at or
  after the end of its ``after`` field's value;
* a list of whole items: every item the rules allow (``item_places``) is
  one the output took or lies inside one it took (a nested item), the
  items in document order, none inside another (its text taken twice); a
  list at its ``max_length`` holds when every item left out comes after the
  last one taken (the first ones, in order); ``lists_left`` names such a
  list with the number of items the document lists, so that confidence
  rates it ``LIST_CUT`` (not the document's whole list: it needs review).

The rules read the document's live text (``agentflow.grounding.void_blocks``):
a value in a block or line the document marks cancelled, superseded or
struck out is never one the rules pin down, and a list that took an item
there does not hold. Void text may only lower what holds, never make a
field hold: each rule must hold on the whole text too (a value beside a
void one the rules also allow is not the only one).

The same rules the grammar of the embedded model applies, so a field the
rules pin down is one the model could not get wrong there; on a vendor
model it is verification. Top-level fields of a pydantic output only.
"""

from __future__ import annotations

import bisect
import itertools
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from agentflow._lru import LRU, per_type
from agentflow.grounding import Grounded
from agentflow.grounding.locate import occurrences
from agentflow.grounding.longest import maximal
from agentflow.grounding.marked_types import (
    annotated_pattern,
    is_choice,
    is_text,
    is_union,
    pattern_in,
    sequence_item,
    unwrap_annotated,
)
from agentflow.grounding.spans import outside
from agentflow.grounding.tokens import pieces
from agentflow.grounding.void_blocks import live_text, void_spans
from agentflow.output.grammar_values import item_places, places
from agentflow.output.list_bounds import field_max_items

__all__ = ["has_hand_rules", "held_fields", "lists_left"]

_CHUNK = re.compile(r"\w+|\s|[^\w\s]")
"""Chunks of a source a grounded string may begin and end at without
``whole_tokens`` (the grammar's own: ``agentflow.output.grammar_marks``)."""

Span = tuple[int, int]


def _cuts(source: str, whole_tokens: bool) -> list[int]:
    parts = pieces(source) if whole_tokens else _CHUNK.findall(source)
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    return offsets


def _place_rule(marker: Grounded | None) -> bool:
    """Whether ``marker`` says where the value is (a hand rule), not only
    what a copy looks like."""
    return marker is not None and bool(
        marker.line or marker.after or marker.whole_items or marker.longest)


def _labels(tp: Any) -> list[str] | None:
    if get_origin(tp) is Literal:
        return [a for a in get_args(tp) if isinstance(a, str)]
    if isinstance(tp, type) and issubclass(tp, Enum):
        return [str(m.value) for m in tp]
    return None


def _bare(tp: Any) -> tuple[Any, list[Grounded]]:
    """``tp`` without ``Annotated`` and ``| None``, with its markers."""
    tp, marks = unwrap_annotated(tp)
    if is_union(tp):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            inner, more = unwrap_annotated(args[0])
            return inner, marks + more
    return tp, marks


@dataclass(frozen=True, slots=True)
class _Shape:
    """One top-level field as the hand rules read it: ``tp`` without
    ``Annotated`` and ``| None``, its markers (the field's own last);
    ``item``/``item_tp``/``item_marks``: a list field's item type as written,
    bare, and its markers (``None``: not a list of a known item type)."""

    name: str
    info: FieldInfo
    tp: Any
    marks: tuple[Grounded, ...]
    item: Any
    item_tp: Any
    item_marks: tuple[Grounded, ...]


_SHAPES: LRU[type[BaseModel], tuple[Any, tuple[_Shape, ...]]] = LRU(256)
"""``_shapes`` per model, with the ``model_fields`` mapping they were read
from (a rebuilt model reads them again): every output of a run has the same."""


def _shapes(output_type: type[BaseModel]) -> tuple[_Shape, ...]:
    """The shape of each top-level field of ``output_type`` that a hand rule
    may hold (``_ruled``), in order (kept per type): a schema without hand
    rules has none, and pays nothing per output."""
    return per_type(_SHAPES, output_type, _read_shapes)


def _ruled(shape: _Shape) -> bool:
    """Whether a hand rule may hold ``shape``'s field: a list of text items
    whose marker takes whole items, or a field whose own marker says where
    its value is (``_place_rule``)."""
    if shape.item is not None:
        own = shape.item_marks or shape.marks
        return bool(own and own[-1].whole_items and is_text(shape.item_tp))
    return _place_rule(shape.marks[-1] if shape.marks else None)


def _read_shapes(output_type: type[BaseModel]) -> tuple[_Shape, ...]:
    shapes = []
    for name, info in output_type.model_fields.items():
        tp, marks = _bare(info.annotation)
        marks = marks + [m for m in info.metadata if isinstance(m, Grounded)]
        item = sequence_item(tp)
        item_tp, item_marks = _bare(item) if item is not None and item is not typing.Any else (
            None, [])
        shapes.append(_Shape(name, info, tp, tuple(marks), item if item_tp is not None else None,
                             item_tp, tuple(item_marks)))
    return tuple(shape for shape in shapes if _ruled(shape))


def has_hand_rules(output_type: Any) -> bool:
    """Whether a hand rule may hold a top-level field of ``output_type`` (a
    pydantic model; any other type: never): without one, ``held_fields``
    and ``lists_left`` find nothing in any output of it (read once per type)."""
    return (isinstance(output_type, type) and issubclass(output_type, BaseModel)
            and bool(_shapes(output_type)))


def held_fields(output_type: Any, output: Any, source: str,
                spans: Mapping[str, Sequence[Span]]) -> frozenset[str]:
    """The top-level fields of ``output`` (an instance of the pydantic model
    ``output_type``) whose own place rules leave ``source`` exactly the
    value the output has (see the module docstring). ``spans``: where
    grounding found each value (field path -> ``[start, end)`` spans).
    Any other output type: none."""
    if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)
            and isinstance(output, BaseModel)):
        return frozenset()
    shapes = _shapes(output_type)
    if not shapes:  # no hand rules: nothing to read
        return frozenset()
    held = set()
    void = void_spans(source)
    # the live text and the whole text: a rule holds on both (offsets kept: the spans hold)
    texts = (live_text(source), source) if void else (source,)
    for shape in shapes:
        name, info, tp, marks = shape.name, shape.info, shape.tp, shape.marks
        value = getattr(output, name, None)
        if value is None or value == []:
            continue
        if shape.item is not None:
            own = shape.item_marks or marks
            if (own and own[-1].whole_items and is_text(shape.item_tp)
                    and isinstance(value, list | tuple)):
                cap = field_max_items(info)
                pattern = annotated_pattern(shape.item) or None
                if not _in_void(name, len(value), spans, void) and all(_all_items(
                        name, value, own[-1], pattern, cap, text, spans) for text in texts):
                    held.add(name)
            continue
        marker = marks[-1] if marks else None
        if marker is None or not _place_rule(marker) or not spans.get(name):
            continue
        bound = _after_end(marker, spans)
        if is_choice(tp) and isinstance(value, str):
            label = value.value if isinstance(value, Enum) else value
            if all(_only_label(_labels(tp) or [], label, marker, bound, t) for t in texts):
                held.add(name)
        elif is_text(tp) and isinstance(value, str):
            pattern = pattern_in(info.metadata) or annotated_pattern(info.annotation)
            if all(_only_value(value, marker, pattern, bound, t) for t in texts):
                held.add(name)
    return frozenset(held)


def _in_void(name: str, count: int, spans: Mapping[str, Sequence[Span]],
             void: Sequence[Span]) -> bool:
    """Whether an item of the list ``name`` (``count`` items) was taken from a
    void span (``agentflow.grounding.void_blocks``: in order, not overlapping)."""
    ends = [ve for _, ve in void]
    for i in range(count):
        for s, e in spans.get(f"{name}[{i}]", ()):
            at = bisect.bisect_right(ends, s)  # the first void span that ends after s
            if at < len(void) and void[at][0] < e:
                return True
    return False


def _after_end(marker: Grounded, spans: Mapping[str, Sequence[Span]]) -> int:
    """Where the value of the field ``marker.after`` names ends (0: no bound)."""
    if not marker.after or not spans.get(marker.after):
        return 0
    return min(e for _, e in spans[marker.after])


def _only_label(labels: list[str], label: str, marker: Grounded, bound: int,
                source: str) -> bool:
    offered = {x.casefold() for x in labels
               if any(s >= bound for s, _ in occurrences(
                   x, source, case_sensitive=False, whole_tokens=marker.whole_tokens,
                   whole_lines=marker.whole_lines, line=marker.line))}
    return offered == {label.casefold()}


def _only_value(value: str, marker: Grounded, pattern: str | None, bound: int,
                source: str) -> bool:
    listed = places(source, _cuts(source, marker.whole_tokens or marker.whole_lines), pattern,
                    marker.line, whole_lines=marker.whole_lines)
    if listed is None:
        return False  # the rules do not narrow the value to a list
    listed = [p for p in listed if p[1] >= bound]
    if marker.longest:
        listed = maximal(listed)
    return {text for text, _, _ in listed} == {value}


def lists_left(output_type: Any, output: Any, source: str,
               spans: Mapping[str, Sequence[Span]]) -> dict[str, int]:
    """The lists of whole items that hold at their ``max_length`` with items
    of the document left out after them (``held_fields``: the first ones):
    field name -> the number of items the document lists (those taken and
    those left). A list its rules hold whole is not here."""
    if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)
            and isinstance(output, BaseModel)):
        return {}
    out: dict[str, int] = {}
    shapes = _shapes(output_type)
    if not shapes:  # no hand rules: no list they hold
        return out
    source = live_text(source)
    for shape in shapes:
        name, info = shape.name, shape.info
        value = getattr(output, name, None)
        if not value or not isinstance(value, list | tuple) or shape.item is None:
            continue
        own = shape.item_marks or shape.marks
        if not (own and own[-1].whole_items and is_text(shape.item_tp)):
            continue
        item = shape.item
        left = _left_out(name, value, own[-1], annotated_pattern(item) or None, source, spans)
        cap = field_max_items(info)
        if left and cap is not None and len(value) >= cap and _all_items(
                name, value, own[-1], annotated_pattern(item) or None, cap, source, spans):
            out[name] = len(value) + len(left)
    return out


def _left_out(name: str, value: Sequence[Any], marker: Grounded, pattern: str | None,
              source: str, spans: Mapping[str, Sequence[Span]]) -> list[Span]:
    """The items the rules allow that no item of ``value`` took (nor holds)."""
    taken = [(found[0][0], found[0][1]) for i in range(len(value))
             if (found := spans.get(f"{name}[{i}]"))]
    bound = _after_end(marker, spans)
    allowed = [(s, e) for _, s, e in item_places(source, pattern, marker.line) if s >= bound]
    return outside(allowed, taken)


def _all_items(name: str, value: Sequence[Any], marker: Grounded, pattern: str | None,
               cap: int | None, source: str, spans: Mapping[str, Sequence[Span]]) -> bool:
    taken: list[Span] = []
    for i in range(len(value)):
        found = spans.get(f"{name}[{i}]")
        if not found:
            return False  # an item grounding did not place
        taken.append(tuple(found[0]))  # type: ignore[arg-type]
    if taken != sorted(set(taken)):
        return False  # out of document order, or an item twice
    if any(a[1] >= b[1] for a, b in itertools.pairwise(taken)):
        return False  # an item inside the one before it: its text taken twice
    bound = _after_end(marker, spans)
    allowed = [(s, e) for _, s, e in item_places(source, pattern, marker.line) if s >= bound]
    left = outside(allowed, taken)
    if not left:
        return True
    return cap is not None and len(value) >= cap and all(s >= taken[-1][1] for s, _ in left)
