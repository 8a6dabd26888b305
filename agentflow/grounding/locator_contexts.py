"""A locator learned from the text around a field's value in worked
examples (``learn_locator``): ``left`` and ``right`` contexts common to
them, the ``right_word`` after ``right``, a one-line list's ``split``,
whether the value runs on over continuation lines (``continued``) or its
paragraph (``paragraph``), or a numbered item ``marker``. The rule is not
yet checked: ``agentflow.grounding.locators`` keeps it only where it holds
(leave-one-out), and documents the rules.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.grounding.label_forms import agreed, closing_quote, same_label, tag_label
from agentflow.grounding.list_markers import marker_kind
from agentflow.grounding.locator_places import (
    Seen,
    block_of,
    common_start,
    example_value,
    is_gap,
    keys_apart,
    lead,
    next_word,
    one_line,
    over_key,
    seen_at,
    shared_label,
)
from agentflow.grounding.locator_rule import Locator
from agentflow.output.examples import CheckedExample

__all__ = ["MAX_CONTEXT", "learn_locator"]

MAX_CONTEXT = 40
"""Longest ``left`` / ``right`` context kept (characters)."""


def learn_locator(name: str, many: bool, examples: Sequence[CheckedExample],
                  like: Seen | None = None) -> Locator | None:
    """The locator of field ``name`` from ``examples`` (``None``: no rule fits),
    each value (item) taken at its first place in its example's text, or,
    with ``like``, at the place whose line reads most like ``like``'s
    (``agentflow.grounding.locator_places.closest``: a value an example
    writes twice, the rule learned from its other place)."""
    seen: list[Seen] = []
    split: str | None = None
    continued = False
    keyed = False  # a value runs on over a sibling key's line (``Locator.keyed``)
    once = True  # each example writes the field in one place (a label once)
    for example in examples:
        value = example_value(example, name)
        items = [v for v in (value or []) if isinstance(v, str)] if many else (
            [value] if isinstance(value, str) else [])
        items = [v.strip() for v in items if v.strip()]
        if not items:
            continue
        placed = [seen_at(v, example.text, like) for v in items]
        if any(p is None for p in placed):
            return None
        places = [p for p in placed if p is not None]
        if len(places) > 1 and len({p.line for p in places}) == 1:
            joined = one_line(places, example.text)
            if joined is None or (split is not None and split != joined[1]):
                return None
            places, split = [joined[0]], joined[1]
        elif len({p.line for p in places}) != len(places):
            return None  # some items share a line, others do not
        elif len(places) > 1 and (block := block_of(places, example.text)) is not None:
            places = [block]  # one field's value, over its continuation lines
        seen += places
        once = once and len(places) == 1
        continued = continued or any(p.continued for p in places)
        keyed = keyed or any(p.continued and over_key(p, example.text) for p in places)
    if not seen:
        return None
    befores = [s.before[len(s.lead):] for s in seen]
    afters = [s.after for s in seen]
    if (tagged := tag_label(befores, afters)) is not None:
        # an element's content: its start tag less a CDATA wrapper and the attributes the
        # examples do not all write alike (``agentflow.grounding.label_forms``)
        befores, afters = [tagged[0]] * len(befores), tagged[1]
    elif len(set(befores)) > 1 and same_label(befores) and (
            one := agreed(befores, afters)) is not None:
        # one label spaced or delimited otherwise (``title={`` / ``title = "``): as the
        # first writes it, each value's end as its opener closes it (``agentflow.grounding.
        # label_forms``)
        befores, afters = [one[0]] * len(befores), one[1]
    right = "" if all(not a.strip() for a in afters) else lead(common_start(afters))
    word = next_word(afters, right) if right and not is_gap(right) else ""  # ``see`` of
    # ``, see LICENSE``; after a column gap, the next column's text (no end of the value)
    if right == "" and any(a.strip() for a in afters):
        return None  # the values end at no common text and not at the line's end
    if split is None and len(set(befores)) == 1 and (
            quote := closing_quote(befores[0], right)) != right:
        right, word = quote, ""  # a quoted value ends at its closing quote (``",`` of
        # ``"license": "MIT",``; the object's last key writes no ``,``), a list's items
        # one a place too (``<PackageReference Include="x" Version="1" />``: no
        # ``Version`` needed after it, ``<PackageReference Include="y">``)
    if right and not right.strip() and len(right) < 2:
        return None  # one space after: too weak to end a value
    if continued and right:
        return None  # a value over continuation lines runs to the end of its block
    anchored = len(set(befores)) == 1 and (bool(befores[0].strip()) or bool(right))
    labelled = anchored and any(c.isalnum() for c in befores[0])
    if (not many or (labelled and once)) and not right and not any(s.more for s in seen):
        continued = True  # no example stops before its line's continuation lines: a
        # field's value is the whole of its lines (as RFC 822, deb822, INI and YAML read
        # them), a labelled list's items too (``Tags: x, y,`` wrapped onto ``  z``)
    left = befores[0] if anchored else shared_label([s.before for s in seen], MAX_CONTEXT)
    if not anchored and keys_apart([s.before for s in seen], left):
        return None  # ``: `` of ``# License: `` and ``// Licence: ``: no label
    marker = None if anchored else marker_kind(befores)
    if marker is not None:  # numbered items (``1. `` ``2. ``): read as a bullet's
        return Locator(name, marker, True, right, split, many, continued, marker=True,
                       right_word=word, keyed=keyed)
    if (not left.strip() and not anchored) or len(left) > MAX_CONTEXT:
        return None
    paragraph = any(s.paragraph for s in seen)
    return Locator(name, left, anchored, right, split, many, continued, paragraph=paragraph,
                   right_word=word, keyed=keyed)
