"""Confidence per field, and which fields of an ``ok`` record need review.

Every top-level field of an extracted output gets a confidence in ``[0, 1]``
(``field_confidence``), from what the framework can check, never from the
model's say-so:

* **a learned locator** (``agentflow.grounding.locators``) that held: the
  value is the one the locator finds where the examples write the field
  (``HELD``); a null the locator agrees with (it finds nothing, and the
  document writes the field's key nowhere the locator could have missed a
  value: ``ABSENT``; ``Locator.mentioned``, ``locator_absence.mentioned_apart``:
  a label with nothing after it, ``Requires:``, or closed empty on its line,
  a gettext header's ``"Language: \\n"``, or only a longer key such as
  ``Requires.private:``, is evidence for the null, not against it; the key
  elsewhere, in prose or with another separator: ``UNLOCATED_NULL``) only
  where the document shows the field empty (``agentflow.grounding.
  locator_absence.absence_confirmed``: its label with nothing after it, or,
  where an example leaves the field out, the examples' layout, their other
  keys, without the field's label; for a rule read inside an INI group, the
  group written with nothing but the examples' keys, ``grouped_layout``),
  else ``UNLOCATED_NULL``: a document may hold the value where no rule
  looks (in prose, ``travels with FedEx``; under another label,
  ``Courier:``; in another layout, ``Based in Boston MA``); a value the
  locator does not find, or a null where it finds one (``DISAGREES``),
  except where the locator finds nothing and the document does not show
  the field empty, or where it finds several different values (the label
  written twice: two records in one document, unless the first of the
  sibling records its examples write it in holds one, ``agentflow.grounding.
  locator_siblings``; a rule without a label,
  inside lines, finding more than one) and the output is one of them, or
  where the value holds a clause no example's value shows, or several words
  where every example's is one, or begins with a marker line no example's
  does (``Locator.pins``), or where the document writes the field's label
  only at a nesting depth, under parent keys or in a ``---`` document no
  example writes it at (``Locator.off_depth``: a nested key, ``bugs.url``
  for ``repository.url``, a later Service's ``namespace:``), or where the
  examples also write the value after another key that here holds another
  value (``Locator.echoes``), or where it runs across continuation lines and no
  example's value does (``Locator.shown_across``: a vCard's ``FN:`` folded
  mid-word), or where the document writes it escaped (``agentflow.grounding.
  escapes.written_escaped``: ``&amp;`` in XML, ``\\"`` in a JSON string: the
  text read is not the value a parser gives), or where it reads a template
  variable's definition the document renders as a key's value through a
  filter that changes it (``agentflow.grounding.template_uses``: ``name: {{
  name|lower }}`` of ``{% set name = "Flask-Cors" %}``), or where it is the
  located value only in its clean form (``agentflow.grounding.edges``: a
  ``:`` or ``;`` the rule reads as the value's own, ``TODO list for 2.0:``
  to the line's end, cut off), or where the rule finds it only in a later
  record than every example writes it in (a second stanza's ``Signed-By:``,
  a second service's ``image:``; its null then is ``UNLOCATED_NULL``):
  the value is then scored as if the field had no locator; a list likewise
  (its label's blocks differing, its key written where the rule does not
  read it, an item's comment: ``agentflow.grounding.locator_records``). A
  locator never reads a block or line the document marks
  cancelled, superseded or struck out (``agentflow.grounding.void_blocks``;
  such text may lower a field's confidence, never make it confident: a
  value beside a void one under the same label is scored as if the field
  had no locator), nor a list without a label of its own outside the heading the examples
  write it under (``agentflow.grounding.list_heading``);
* **a hand rule** that held, for a field without a locator: the schema's own
  place rules (``Grounded(line=..., after=..., whole_items=True)``, its
  ``pattern``) leave the document only the output's value, or the list's
  items cover every item they allow (``agentflow.extraction.hand_rules``):
  as strong as a locator that held (``HELD``);
* **grounding** without a locator: a string copied from the document (its
  span known) is ``GROUNDED``; a number or date found written in the
  document (the same number, the same date: ``agentflow.grounding.
  typed_values``) too; a choice whose label the document writes is
  ``GROUNDED``;
* **nothing to check**: a value grounding could not look at (a ``Derived()``
  field, a run with ``ground=False``, a boolean, a choice the document does
  not write) is ``UNCHECKED`` and listed as *ungrounded*; a null without a
  locator is ``UNLOCATED_NULL``. A number or date the document does not
  write never gets here in a grounded run: grounding refuses it
  (``agentflow.grounding.output_checks``), so its record is not ``ok``.

**Token probabilities**, where the model gave them (``agentflow.output.
token_confidence``: the probability of the least likely token that wrote
the value), only for a value no locator or hand rule pinned down: written
with a token below ``DOUBT_BELOW``, it is ``DOUBTED`` (the model itself was
unsure: it ranks first on the review page). They never make a value
confident: on the embedded model, unpinned grounded values written with
every token at least 0.9 likely were right 6 times in 7 (first tokens: 12
in 13), short of the 98% a confident field must reach, and pinned values
were right 150 times in 150 however unlikely their tokens (down to 0.001;
benchmarks/RESULTS.md).

A field on which a long document's chunks (or passes) disagreed
(``ExtractResult.conflicts``: the merge rule kept one of their values, the
first or the most frequent) is at most ``CONFLICTED``, however well the
kept value checks: another part of the document reads otherwise.

A list kept at its ``max_length`` while the document lists more items is
``LIST_CUT`` where it would be ``HELD`` (``agentflow.extraction.list_cuts``:
the first items, not the whole list). A list field takes the lowest
confidence of its items. ``needs_review``
names the fields below ``REVIEW_BELOW``: the CLI summary, the progress line
and the review page count an ``ok`` record with such a field as *needs
review*. The threshold is the benchmark's: on the tuning kinds of
``benchmarks/bench_generalize.py`` fields reported confident (at or above
it) were right at least 98% of the time (benchmarks/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, get_args

from pydantic import BaseModel

from agentflow.grounding.edges import cuts_edges
from agentflow.grounding.escapes import written_escaped
from agentflow.grounding.folding import same_text
from agentflow.grounding.locator_absence import (
    absence_confirmed,
    absence_shown,
    element_absent,
    mentioned_apart,
)
from agentflow.grounding.locator_numbers import number_text
from agentflow.grounding.locator_records import (
    differing_blocks,
    later_record_only,
    same_block,
    unread_labels,
)
from agentflow.grounding.locator_siblings import first_sibling_alone
from agentflow.grounding.locators import Locator
from agentflow.grounding.template_uses import rendered_otherwise
from agentflow.grounding.typed_values import found_in
from agentflow.grounding.void_blocks import void_spans
from agentflow.output.list_bounds import field_max_items

__all__ = ["ABSENT", "CONFLICTED", "DISAGREES", "DOUBTED", "DOUBT_BELOW", "GROUNDED", "HELD",
           "LIST_CUT", "REVIEW_BELOW", "UNCHECKED", "UNLOCATED_NULL", "field_confidence",
           "needs_review", "top_fields"]

HELD = 0.99
"""The value is the one the field's locator finds."""
ABSENT = 0.97
"""Null, and the field's locator finds nothing either (nor does the document
write the field's key with a value the locator could have missed), in a
document that shows the field empty (``locator_absence.absence_shown``)."""
LIST_CUT = 0.75
"""A list of ``max_length`` items, the first ones its locator or hand rule
finds, while the document lists more (``agentflow.extraction.list_cuts``):
right as far as it goes, not the document's list."""
GROUNDED = 0.8
"""Copied from the document (or written there), with no locator to say it is the right place."""
UNLOCATED_NULL = 0.7
"""Null, with no locator to say the document lacks it."""
UNCHECKED = 0.5
"""Nothing checked the value against the document (it is *ungrounded*)."""
CONFLICTED = 0.65
"""At most this for a field the document's chunks (or passes) gave different
values for (``ExtractResult.conflicts``): the value kept is one reading."""
DISAGREES = 0.2
"""The field's locator finds another value (or none, or one where the output has null)."""

DOUBTED = 0.6
"""An unpinned value written with a token less likely than ``DOUBT_BELOW``."""
DOUBT_BELOW = 0.05
"""Token probability below which an unpinned value is ``DOUBTED``. Tuned on
the tuning kinds without examples (dpkg, pymeta; 114 unpinned fields, 50%
right): those below it were right 4 times in 24 (benchmarks/RESULTS.md)."""

REVIEW_BELOW = 0.9
"""Fields whose confidence is below this need review."""


def top_fields(output: Any) -> Mapping[str, Any]:
    """Top-level field name -> value of ``output`` (a pydantic model or a
    mapping); ``{}`` for anything else."""
    if isinstance(output, BaseModel):
        return {name: getattr(output, name) for name in type(output).model_fields}
    return output if isinstance(output, Mapping) else {}


def field_confidence(
    output: Any, source: str, spans: Mapping[str, Any],
    locators: Mapping[str, Locator] | None = None, held: Collection[str] = (),
    token_probs: Mapping[str, float] | None = None, cut: Collection[str] = (),
    conflicted: Collection[str] = (), fields: Mapping[str, Any] | None = None,
) -> tuple[dict[str, float], list[str]]:
    """The confidence of each top-level field of ``output`` (see the module
    docstring), and the fields nothing checked (*ungrounded*), in order.

    Args:
        output: the validated output (a pydantic model or a mapping).
        source: the document the output was extracted from.
        spans: the grounded spans of the output (field path -> spans).
        locators: the locators learned from the run's examples.
        held: the fields whose own hand rules held
            (``agentflow.extraction.hand_rules.held_fields``).
        token_probs: each field's least likely token's probability, where
            the model gave token log-probabilities.
        cut: the list fields kept at their ``max_length`` while the
            document lists more items (``agentflow.extraction.list_cuts``):
            ``LIST_CUT`` where they would be ``HELD``.
        conflicted: the fields the document's chunks (or passes) gave
            different values for: at most ``CONFLICTED``.
        fields: ``top_fields(output)``, when the caller has them.
    """
    found: dict[str, float] = {}
    ungrounded: list[str] = []
    rules = locators or {}
    infos = type(output).model_fields if rules and isinstance(output, BaseModel) else {}
    for name, value in (top_fields(output) if fields is None else fields).items():
        rule = rules.get(name) if rules else None
        if rule is not None:
            info = infos.get(name)
            score = _located(rule, value, source, field_max_items(info),
                             required=info is not None and not rule.many and (
                                 type(None) not in get_args(info.annotation)))
            if score is not None:
                found[name] = score
                continue
        if name in held:
            found[name] = HELD
            continue
        if value is None or value == [] or value == {}:
            found[name] = UNLOCATED_NULL
            continue
        if isinstance(value, str):
            if name in spans:
                found[name] = GROUNDED
            else:
                found[name], _ = _checked(value, source, name, ungrounded)
            continue
        if isinstance(value, list | tuple):
            scores = [GROUNDED if f"{name}[{i}]" in spans else
                      _checked(item, source, f"{name}[{i}]", ungrounded)[0]
                      for i, item in enumerate(value)]
            found[name] = min(scores) if scores else UNLOCATED_NULL
            continue
        found[name], _ = _checked(value, source, name, ungrounded)
    for name in cut:
        if found.get(name) == HELD:
            found[name] = LIST_CUT
    for name, p in (token_probs or {}).items():
        if p < DOUBT_BELOW and name in found:  # (a likelier token leaves every score as it is)
            found[name] = _with_tokens(found[name], p)
    for name in conflicted:
        if name in found:
            found[name] = min(found[name], CONFLICTED)
    return found, ungrounded


def _with_tokens(score: float, p: float) -> float:
    """``score`` with the model's own token probability ``p`` weighed in, for
    a value no rule pinned down (``GROUNDED``, ``UNLOCATED_NULL``): a
    locator or hand rule that held (or its sure null) leaves the document
    that value only, so what the model would rather have written says
    nothing about it (on the embedded model the grammar offered nothing
    else), and a disagreeing locator or an unchecked value stays as low as
    it is."""
    if score in (GROUNDED, UNLOCATED_NULL) and p < DOUBT_BELOW:
        return DOUBTED
    return score


def _located(rule: Locator, value: Any, source: str, max_items: int | None = None,
             required: bool = False) -> float | None:
    """``HELD`` when ``rule`` finds ``value`` (``Locator.holds``: whitespace
    folded, since a document wraps a long value over lines a model writes
    as one, and a list item's clean form counts, as clean edges make a
    model write it: ``Acme Ltd.,`` one a line); a null the rule agrees with: ``ABSENT`` where the
    document shows the field empty (``agentflow.grounding.locator_absence.
    absence_confirmed``: its label with nothing after it, or, where an
    example leaves the field out, the examples' layout without the label), else
    ``UNLOCATED_NULL`` (also where the document writes the field's key with
    a value the rule does not read: ``Locator.mentioned``); a value where
    the rule finds nothing and the document does not show the field empty
    (for a single value the schema does not let be null, ``required``: only
    its empty label does): ``None`` (the rule says nothing here: the caller
    scores the value as if there were no rule, as the grammar then offers
    the field's ordinary grounding); a single value where the rule finds
    several different values (its label, ``Locator.labelled``, written
    twice; a rule without a label, inside lines, finding more than one):
    ``None`` when it is one of them (the rule cannot say which is meant),
    else ``DISAGREES``; a value with a clause no example's value shows, or
    of several words where every example's is one (``Locator.pins``: a
    bracketed note, a second sentence, ``builtin 0.006``, an inline comment
    ``# ...``), or read below its label alone where no example's value is
    (``Locator.shown_below``), or read across continuation lines where no
    example's value is (``Locator.shown_across``), or read where the document writes the label
    only at a depth no example does (``Locator.off_depth``): ``None``; a
    single value that is the rule's value only in its clean form (``agentflow.
    grounding.edges.clean_edges`` cut a ``:`` or ``;`` the rule's own extent
    holds: ``TODO list for 2.0:`` read to the line's end): ``None``;
    anything else ``DISAGREES``. A list of ``max_items`` items (its bound)
    holds when it is the first ones the rule finds. A list is checked as a
    single value is (``agentflow.grounding.locator_records``): where its
    continued label's blocks differ (two records) and no example shows the
    first is meant, ``None`` when it is one of them, else ``DISAGREES``;
    where the document writes its key on lines the rule does not read
    (``url = `` beside ``url: ``), or an item holds a comment no example's
    item shows: ``None``. A value the rule finds only in a later record of
    the document, where every example writes it in the first
    (``Locator.first_record``): ``None``. A rule whose ``twins``
    (other places every example writes the value at as well) read other
    values here (``Locator.twins_agree``): ``None``.

    The rule reads the live text (``agentflow.grounding.void_blocks``), and
    void text may lower the result, never make it confident: a ``HELD`` or
    ``ABSENT`` stands only where the rule reading the whole text gives the
    same, else ``None`` (a value beside a block the document voids, under
    the same label: read whole, the rule cannot say which is meant)."""
    if not rule.twins_agree(source):
        return None  # the examples write the value in two places, which read otherwise here
    found = rule.values(source)
    if rule.number and value is not None:  # compared by value, where written plainly
        value = number_text(found, value)
        if value is None:
            return None
    score = _read(rule, value, source, found, max_items, required)
    if score is None or score < REVIEW_BELOW or not void_spans(source):
        return score
    whole = rule.values(source, live=False)
    if whole == found or _read(rule, value, source, whole, max_items, required) == score:
        return score
    return None


def _read(rule: Locator, value: Any, source: str, found: list[str], max_items: int | None,
          required: bool) -> float | None:
    """``_located`` as the rule's values ``found`` in ``source`` say."""
    absent = element_absent(rule, source)  # no such element where the examples write it
    if rule.off_depth(source) and not absent:
        return None  # its label written only at a depth no example writes it at: a nested
        # key may be another thing's (``version:`` under a CITATION.cff's ``references:``)
    empty = value is None or (rule.many and not value)
    if absent:
        return ABSENT if empty else DISAGREES
    if empty:
        if found:  # (found only in a later record: the first's may well be empty)
            return UNLOCATED_NULL if later_record_only(rule, source) else DISAGREES
        if rule.anchored and mentioned_apart(rule, source):
            return UNLOCATED_NULL
        return ABSENT if absence_confirmed(rule, source) else UNLOCATED_NULL
    if not found and not rule.writes_empty(source) and (
            required or not absence_shown(rule, source)):
        return None  # (a field the schema requires is never shown empty by a layout)
    if not rule.many and (rule.labelled or not rule.anchored) and len(
            {" ".join(f.split()) for f in found}) > 1 and not first_sibling_alone(rule, source):
        # its label written twice with different values (a second record), or a rule
        # inside lines without a label finding several (`` = '`` up to ``';``: every
        # assignment, the first by position only): it cannot say which is meant, so
        # it pins none (a rule at a line's start without a label reads the document's
        # first such line, as in every example: a changelog's header line); unless the
        # first of the sibling records the examples write it in holds one of them
        return None if any(same_text(f, str(value), clean=True) for f in found) else DISAGREES
    if rule.many and (blocks := differing_blocks(rule, source)):
        # its label's blocks differ (two records), and no example shows the first is meant
        items = [str(v) for v in value]
        return None if any(same_block(items, b) for b in blocks) else DISAGREES
    if rule.many and unread_labels(rule, source):
        return None  # its key written on lines the rule does not read (``url = `` beside the
        # examples' ``url: ``): the list it reads may miss items
    if not all(rule.pins(str(v)) for v in (value if rule.many else [value])):
        return None  # a clause or words no example's value (item) shows: it may have read past
    if any(written_escaped(f, source) for f in (found if rule.many else found[:1])):
        return None  # written escaped (``&amp;``, ``\"``): the text read is not the value
    if not rule.many and found and rendered_otherwise(rule.left, found[0], source):
        return None  # a template variable's definition the document renders changed
        # (``name: {{ name|lower }}`` of ``{% set name = "Flask-Cors" %}``)
    if later_record_only(rule, source):
        return None  # only in a later record, where every example writes it in the first
    if not rule.many and not rule.shown_below and rule.begins_below(source):
        return None  # a value below its label alone, as no example writes one: the
        # continuation lines may not be the field's (``Requires:`` over an indented line)
    if not rule.shown_across and found and "\n" in found[0] and rule.continued and not rule.many:
        return None  # a value across continuation lines, as no example's value runs: the
        # format's folding may not be the value's text (a vCard's ``FN:`` folded mid-word)
    if not rule.many and found and cuts_edges(found[0]) and same_text(
            found[0], str(value), clean=True) and not same_text(found[0], str(value)):
        return None  # only its clean form: clean edges cut what the rule reads as the value
        # (``TODO list for 2.0:`` to the line's end), so it cannot say the shorter one is meant
    if not rule.many and found and " ".join(str(value).split()).startswith(
            " ".join(found[0].split())) and rule.runs_on(source):
        return None  # its line goes on onto a plain line: the rule may have stopped short
    return HELD if rule.holds(value, source, clean=True, max_items=max_items,
                              found=found) else DISAGREES


def _checked(value: Any, source: str, path: str, ungrounded: list[str]) -> tuple[float, bool]:
    """A value grounding did not place: written in the document (the same
    number, date or label) or not; ``path`` goes into ``ungrounded`` then."""
    if found_in(value, source):
        return GROUNDED, True
    ungrounded.append(path)
    return UNCHECKED, False


def needs_review(confidence: Mapping[str, float], below: float = REVIEW_BELOW) -> list[str]:
    """The fields whose confidence is below ``below``, in order."""
    return [name for name, score in confidence.items() if score < below]
