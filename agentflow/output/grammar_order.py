"""The fields of an object held to document order in a grammar
(``Grounded(after=...)``, JSON Schema ``"x-grounded-after"``).

A field marked ``after="version"`` must begin at or after the end of the
value of its sibling ``version``. Where both fields' values can be listed
with their places (``grammar_values.places``: a line rule, or a pattern in a
source short enough to list), the object's rule carries that bound: each
value the named field may take leads to the rest of the object with its
earliest end as the bound, and the later field lists only the values that
occur from there on. Values of the named field that end at the same offset
share one branch, so the rules grow with the distinct ends, not with the
values. A field whose places cannot be listed sets and takes no bound here;
verification (``agentflow.extraction.locate.check_grounding``) applies the
rule after decoding, as it does for every model.

A value the later field needs may therefore rule out a value of the named
field: on ``avahi (0.8-10) bookworm; urgency=medium`` with ``package`` then
``version`` (``after="package"``, a version pattern), ``bookworm`` is no
longer a package, since no version follows it. That is the rule the schema
declared, not a guess: a model that can only follow grammars is held to it
as a vendor model is by the error it gets back.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentflow.output.grammar_values import Place

__all__ = ["MAX_ORDER_CHARS", "MAX_ORDER_RULES", "Slot", "ordered_fields"]

MAX_ORDER_RULES = 2_000
"""Most rules one ordered object may take (fields times distinct bounds);
past it the object is built without the bounds and verification decides."""
MAX_ORDER_CHARS = 400_000
"""Most characters one ordered object's rules and listed values may take;
past it the object is built without the bounds and verification decides (a
grammar is sent with every request)."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One field of an ordered object.

    Attributes:
        head: the Lark text before the value (item separator, key, key
            separator).
        rule: the field's rule when its places are not listed (``None``:
            no value is possible).
        places: the values it may take with their places, in document
            order; ``None`` when not listed.
        nullable: ``null`` is allowed (a listed field only; a rule already
            holds its own ``null``).
        after: the index of the slot whose value this one follows.
    """

    head: str
    rule: str | None
    places: tuple[Place, ...] | None
    nullable: bool
    after: int | None


def ordered_fields(
    slots: Sequence[Slot],
    terminal: Callable[[list[str]], str],
    rule: Callable[[str], str],
) -> str | None:
    """The rule for the fields of an object, in order, each ``after`` bound
    kept (the caller writes ``"{" rule "}"``); ``None`` when no value of the
    object satisfies them.

    Args:
        slots: the object's fields, in schema order.
        terminal: makes (or reuses) a terminal listing these values as JSON
            strings; returns its name.
        rule: adds a rule with this body; returns its name.

    A later field's values from a bound on are a chain of rules, one per
    place where its values begin (values beginning there, or the next
    rule's), so every bound shares the chain's tail and the grammar grows
    with the places, not with places times bounds.

    Raises:
        OverflowError: more than ``MAX_ORDER_RULES`` rules, or more than
            ``MAX_ORDER_CHARS`` characters, would be needed (the caller then
            builds the object without bounds).
    """
    size = 0

    def spend(chars: int) -> None:
        nonlocal size
        size += chars
        if size > MAX_ORDER_CHARS:
            raise OverflowError("too large a grammar for an ordered object")

    def listing(values: list[str]) -> str:
        spend(sum(map(len, values)) + 4 * len(values))
        return terminal(values)

    def add(body: str) -> str:
        spend(len(body))
        return rule(body)

    tails: dict[tuple[int, int], str] = {}  # (slot, index of a start) -> its chain rule
    starts: dict[int, list[tuple[int, list[str]]]] = {}  # slot -> [(start, values)]

    def values_from(k: int, low: int | None) -> str | None:
        """The rule of slot ``k``'s values that begin at or after ``low``."""
        if k not in starts:
            by_start: dict[int, list[str]] = {}
            for value, start, _ in slots[k].places or ():
                by_start.setdefault(start, []).append(value)
            starts[k] = sorted((a, list(dict.fromkeys(v))) for a, v in by_start.items())
        groups = starts[k]
        first = 0 if low is None else bisect.bisect_left(groups, low, key=lambda g: g[0])
        if first == len(groups):
            return None
        for j in range(len(groups) - 1, first - 1, -1):  # from the end: no deep recursion
            if (k, j) not in tails:
                head = listing(groups[j][1])
                tails[k, j] = add(f"{head} | {tails[k, j + 1]}" if (k, j + 1) in tails
                                  else head)
        return tails[k, first]

    n = len(slots)
    later = [{s.after for s in slots[k + 1:] if s.after is not None} for k in range(n)]
    memo: dict[tuple[int, tuple[tuple[int, int], ...]], str | None] = {}

    def state_after(k: int, state: dict[int, int]) -> tuple[tuple[int, int], ...]:
        return tuple(sorted((a, b) for a, b in state.items() if a in later[k]))

    def rest(k: int, state: tuple[tuple[int, int], ...]) -> str | None:
        if k == n:
            return ""
        key = (k, state)
        if key in memo:
            return memo[key]
        if len(memo) > MAX_ORDER_RULES:
            raise OverflowError("too many rules for an ordered object")
        slot, bounds = slots[k], dict(state)
        alts: list[str] = []

        def alt(value: Callable[[], str], extra: dict[int, int]) -> None:
            tail = rest(k + 1, state_after(k, {**bounds, **extra}))
            if tail is not None:  # the value's terminal is made only for a possible branch
                alts.append(f"{slot.head} {value()} {tail}".rstrip())

        if slot.places is None:
            if slot.rule is not None:
                alt(lambda: str(slot.rule), {})
        else:
            low = bounds.get(slot.after) if slot.after is not None else None
            ok = [p for p in slot.places if low is None or p[1] >= low]
            if k in later[k]:  # a later field follows this one: its bound is this value's end
                ends: dict[str, int] = {}
                for value, _, end in ok:
                    ends[value] = min(ends.get(value, end), end)
                by_end: dict[int, list[str]] = {}
                for value, end in ends.items():
                    by_end.setdefault(end, []).append(value)
                for end, values in sorted(by_end.items()):
                    alt(functools.partial(listing, values), {k: end})
            elif ok:
                tail_rule = values_from(k, low)
                if tail_rule is not None:
                    alt(lambda: str(tail_rule), {})
            if slot.nullable:
                alt(lambda: '"null"', {})
        memo[key] = add(" | ".join(alts)) if alts else None
        return memo[key]

    return rest(0, ())
