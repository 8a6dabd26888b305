"""The fields of an object held to document order in a grammar
(``Grounded(after=...)``, JSON Schema ``"x-grounded-after"``).

A field marked ``after="version"`` must begin at or after the end of the
value of its sibling ``version``. Where both fields' values can be listed
with their places, the object's rule carries that bound: each value the
named field may take leads to the rest of the object with its earliest end
as the bound, and the later field lists only the values that occur from
there on. Values of the named field that end at the same offset share one
branch, so the rules grow with the distinct ends, not with the values.

Places can be listed (``grammar_places.leaf_places``) for a grounded
string with a line rule, or with a pattern in a source up to
``grammar_values.SPAN_CHECK_CHARS`` characters (``grammar_values.places``);
a grounded choice (its labels where they occur); a whole item (the source's
items). The later field may also be a list of such values (``ListShape``):
each item then begins at or after the bound, and a list of whole items stays
a chain in document order, each item once, from the first item after the
bound. Verified only, after decoding
(``agentflow.grounding.placing.check_grounding``, as on every model): a
field whose places cannot be listed (a grounded string with neither a line
rule nor a pattern, any span being a value; a pattern in a longer source;
more than ``grammar_values.MAX_CANDIDATES`` places), a list whose items may
be null, and an object whose bounds would pass ``MAX_ORDER_RULES`` or
``MAX_ORDER_CHARS``: those set and take no bound here.

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

from agentflow.output.grammar_values import Place, chain_start, item_chain

__all__ = ["MAX_ORDER_CHARS", "MAX_ORDER_RULES", "ListShape", "Slot", "list_rule",
           "ordered_fields"]

MAX_ORDER_RULES = 2_000
"""Most rules one ordered object may take (fields times distinct bounds);
past it the object is built without the bounds and verification decides."""
MAX_ORDER_CHARS = 400_000
"""Most characters one ordered object's rules and listed values may take;
past it the object is built without the bounds and verification decides (a
grammar is sent with every request)."""


def list_rule(item: str | None, low: int, high: int | None, separator: str) -> str | None:
    """The Lark body of a JSON list of ``item`` (a rule name; ``None``: no
    item is possible) with ``minItems`` ``low`` and ``maxItems`` ``high``
    (``None``: no bound), items joined by ``separator`` (a Lark literal);
    ``None`` when no such list is possible."""
    if item is None:
        return None if low >= 1 else '"[" "]"'
    if high is not None and high == 0:
        return '"[" "]"'
    rest = f"{{{max(low - 1, 0)},{high - 1 if high is not None else ''}}}"
    more = f"({separator} {item}){rest}"
    # llguidance rejects the range {0,0}: one item at most is the item alone
    inner = item if high is not None and high == 1 else f"{item} {more}"
    return f'"[" {inner} "]"' if low >= 1 else f'"[" ({inner})? "]"'


@dataclass(frozen=True, slots=True)
class ListShape:
    """A list field whose items are held after the named field
    (``Grounded(after=...)`` on the items of a ``list``): every item begins at
    or after the bound.

    Attributes:
        low, high: the list's ``minItems`` / ``maxItems`` (``None``: no bound).
        separator: the Lark literal between items.
        in_order: the items are whole list items of the source, taken in
            document order, each at most once (``grammar_values.item_chain``,
            from the first item at or after the bound); else any listed
            values from the bound on, in any order.
        prefix: a rule name prefix no other rule uses (for the chain).
    """

    low: int
    high: int | None
    separator: str
    in_order: bool = False
    prefix: str = ""


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
        shape: the field is a list of these places (``places``: its items'),
            each item held after the bound; ``None``: one value.
    """

    head: str
    rule: str | None
    places: tuple[Place, ...] | None
    nullable: bool
    after: int | None
    shape: ListShape | None = None


def ordered_fields(
    slots: Sequence[Slot],
    terminal: Callable[[list[str]], str],
    rule: Callable[[str], str],
    named: Callable[[str, str], None] = lambda name, body: None,
) -> str | None:
    """The rule for the fields of an object, in order, each ``after`` bound
    kept (the caller writes ``"{" rule "}"``); ``None`` when no value of the
    object satisfies them.

    Args:
        slots: the object's fields, in schema order.
        terminal: makes (or reuses) a terminal listing these values as JSON
            strings; returns its name.
        rule: adds a rule with this body; returns its name.
        named: adds a rule under a given name (a list's chain of whole items,
            ``ListShape.in_order``).

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

    lists: dict[tuple[int, str | None], str | None] = {}  # (slot, item rule) -> list rule
    chains: dict[int, list[int] | None] = {}  # slot -> its items' starts, once chained

    def chained(k: int, shape: ListShape) -> list[int] | None:
        """Slot ``k``'s chain of whole items in document order (its rules
        added once), as the starts of its places; ``None`` when no chain
        applies (then the list takes any items from the bound on)."""
        if k not in chains:
            found = slots[k].places or ()
            chain = item_chain([v for v, _, _ in found], shape.low, shape.high,
                               shape.separator, shape.prefix)
            if chain is not None:
                for name, body in chain[0].items():
                    spend(len(name) + len(body))
                    named(name, body)
            chains[k] = [a for _, a, _ in found] if chain is not None else None
        return chains[k]

    def list_from(k: int, low: int | None) -> str | None:
        """The rule of slot ``k``'s list, every item at or after ``low``."""
        shape = slots[k].shape
        assert shape is not None
        starts = chained(k, shape) if shape.in_order else None
        if starts is not None:
            first = 0 if low is None else bisect.bisect_left(starts, low)
            item: str | None = None if first == len(starts) else chain_start(shape.prefix, first)
            if (k, item) not in lists:
                body = None if item is None else f'"[" {item} "]"'
                if shape.low == 0:
                    body = '"[" "]"' if body is None else f'{body} | "[" "]"'
                lists[k, item] = add(body) if body is not None else None
            return lists[k, item]
        item = values_from(k, low)
        if (k, item) not in lists:
            body = list_rule(item, shape.low, shape.high, shape.separator)
            lists[k, item] = add(body) if body is not None else None
        return lists[k, item]

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
        elif slot.shape is not None:  # a list whose items follow the named field
            whole = list_from(k, bounds.get(slot.after) if slot.after is not None else None)
            if whole is not None:
                alt(lambda: str(whole), {})
            if slot.nullable:
                alt(lambda: '"null"', {})
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
