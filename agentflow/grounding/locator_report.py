"""Which locators a run learned from its worked examples, in words: one line
per top-level field (``learned_lines``), for the CLI to say before the first
request (``agentflow extract``) and for anyone who wants to see why a field
is or is not pinned down (``agentflow.grounding.locators`` learns them)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, get_args

from pydantic import BaseModel

from agentflow.grounding.locator_places import example_value, places_at
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.locators import is_loose, learn_locator, locator_fields
from agentflow.grounding.marked_types import is_derived, is_union, object_fields, unwrap_annotated
from agentflow.output.examples import CheckedExample

__all__ = ["learned_lines"]


def _filled(name: str, examples: Sequence[CheckedExample]) -> int:
    """How many examples give field ``name`` a value (not null, not empty)."""
    count = 0
    for example in examples:
        value = example.value
        got = value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)
        count += got not in (None, "", [], ())
    return count


def _why_not_located(tp: Any) -> str:
    """Why a field of type ``tp`` gets no locator (it is not text)."""
    tp, _ = unwrap_annotated(tp)
    if is_union(tp):
        args = [a for a in get_args(tp) if a is not type(None)]
        tp = unwrap_annotated(args[0])[0] if len(args) == 1 else tp
    if isinstance(tp, type) and issubclass(tp, bool):
        return "a boolean: nothing in the document checks it"
    if isinstance(tp, type) and issubclass(tp, int | float | Decimal):
        return ("a number the examples write after no key a rule held on: checked against "
                "the numbers the document writes")
    if isinstance(tp, type) and issubclass(tp, dt.date):
        return "a date: checked against the dates the document writes"
    return "locators are learned for text fields and lists of text only"


def learned_lines(locators: Mapping[str, Locator], examples: Sequence[CheckedExample],
                  output_type: Any) -> list[str]:
    """One line per top-level field of ``output_type``, in order: ``learned:
    <the rule> (from N of M examples)`` for a field with a locator (``N``:
    the examples that fill it; ``; also <rule>`` for each of its ``twins``, and
    where the rule's place may agree by chance, ``Locator.beside``),
    else ``no rule: <field> (<why>)``: no
    example fills it, the examples write it in no common place that held
    leave-one-out (where each first writes it said: ``_no_place``), or only
    after punctuation they write elsewhere too (``agentflow.grounding.
    locators.is_loose``), it is ``Derived()``, or it is not text. ``[]`` without
    examples (nothing is learned, and nothing is said)."""
    if not examples:
        return []
    fields = object_fields(output_type) or []
    many = dict(locator_fields(output_type))
    text_fields = set(many)
    infos = output_type.model_fields if isinstance(output_type, type) and issubclass(
        output_type, BaseModel) else {}
    total = len(examples)
    out = []
    for name, ann, _marks in fields:
        rule = locators.get(name)
        filled = _filled(name, examples)
        if rule is not None:
            also = "".join(f"; also {twin.describe()}" for twin in rule.twins)
            if also:
                also += " (the examples write it in both places: where they differ, unpinned)"
            if rule.beside is not None:  # ``agentflow.grounding.chance_places``
                also += ("; the examples write it " + (f"after {rule.beside!r} " if rule.beside
                                                       else "") + "elsewhere too: pinned only "
                         "where a document does as well")
            out.append(f"learned: {rule.describe()} (from {filled} of {total} examples){also}")
        elif name in infos and is_derived(infos[name].annotation, infos[name].metadata):
            out.append(f"no rule: {name} (Derived(): not copied from the document)")
        elif name not in text_fields:
            out.append(f"no rule: {name} ({_why_not_located(ann)})")
        elif not filled:
            out.append(f"no rule: {name} (no example fills it)")
        elif (loose := learn_locator(name, many[name], examples)) is not None and is_loose(loose):
            around = (f"only {loose.left!r} before it" if loose.left else
                      f"only {loose.right!r} after it" if loose.right else "nothing around it")
            out.append(f"no rule: {name} ({around}, which the examples write elsewhere too)")
        else:
            out.append(f"no rule: {name} ({_no_place(name, many[name], examples, filled)})")
    return out


def _no_place(name: str, many: bool, examples: Sequence[CheckedExample], filled: int) -> str:
    """Why no rule of field ``name`` held, with where each example that fills
    it first writes its value (its first item): the text before it on its
    line (``locator_places.seen_at``, the place a rule is learned from;
    ``_place``: none is "at the start of a line").
    Several places: the examples write it in no common place (an example may
    write the value first elsewhere, ``# Polish translations`` above
    ``Language-Team: Polish``); one: no rule read there held on each (its end,
    leave-one-out); one example: it alone teaches a rule only after a key."""
    if filled == 1:  # every place the one example writes it (not only a twin's first)
        shown = list(dict.fromkeys(_place(b) for b in _befores(name, many, examples, every=True)))
        where = f", {' and '.join(shown[:_PLACES])}" if shown else ""
        return (f"only 1 example fills it{where}: one example teaches a rule only after a key "
                f"such as 'Key: ' or 'key = ' that holds")
    places = [_place(before) for before in dict.fromkeys(_befores(name, many, examples))]
    if len(places) > 1:
        return (f"the {filled} examples filling it write it first {' and '.join(places)}: "
                f"no common place that held on each")
    where = f" {places[0]}" if places else ""
    return f"the {filled} examples filling it write it{where}, but no rule read there held on each"


def _befores(name: str, many: bool, examples: Sequence[CheckedExample], *,
             every: bool = False) -> list[str]:
    """The text before the place where each example writes field ``name``'s
    value (its first item) first, on its line (``locator_places.seen_at``, the
    place a rule is learned from), in order; with ``every``, before each place
    (``places_at``): an example that writes it twice
    (``<AssemblyName>Ledger.Cli`` and ``<RootNamespace>Ledger.Cli``) is shown
    both, not only the first."""
    befores: list[str] = []
    for example in examples:
        value = example_value(example, name)
        items = [v for v in (value if many and isinstance(value, list) else [value])
                 if isinstance(v, str) and v.strip()]
        places = places_at(items[0].strip(), example.text) if items else []
        for seen in places if every else places[:1]:  # (the first: ``seen_at``'s)
            before = seen.before[len(seen.lead):]
            befores.append(before[-_SHOWN:] if len(before) > _SHOWN else before)
    return befores


def _place(before: str) -> str:
    """Where a value is written, in words: ``after '<before>'``, or ``at the
    start of a line`` when nothing but indentation comes before it on its
    line (``''`` read as "after nothing" to a reader)."""
    return f"after {before!r}" if before else "at the start of a line"


_SHOWN = 30
"""The most characters of the text before a value a ``no rule:`` line quotes."""

_PLACES = 3
"""The most places a ``no rule:`` line names for a value one example writes."""
