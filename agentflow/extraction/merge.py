"""Merging the outputs of a document's chunks into one, by rules declared on
the schema.

Declare a rule with ``Annotated`` metadata on a top-level field of the output
model (it changes neither validation nor the JSON Schema sent to the model)::

    class History(BaseModel):
        source: Annotated[str, Merge.must_agree()]       # every chunk that saw it agrees
        title: str | None = None                         # default: first non-null
        urgency: Annotated[str, Merge.majority()]
        entries: Annotated[list[Entry], Merge.by_key("version")]
        notes: list[str] = []                            # default: by span

The rules (``Merge.rule``):

* A scalar some chunk's learned rule reads (``ChunkOutput.reads``;
  ``agentflow.extraction.chunk_reads``) is decided by the chunks that read it
  and answer it, by its rule; the other chunks' values neither win nor
  conflict.
* ``first`` (the scalar default; any non-list field): the first non-null
  value in document order; chunks that gave another value are reported as
  a ``Conflict`` (the record stays ``ok``; the field's confidence is at most
  ``confidence.CONFLICTED``: it needs review).
* ``majority`` (scalar): the most frequent non-null value, a tie going to
  the earliest; the disagreement is reported as a ``Conflict``.
* ``must_agree`` (scalar): all non-null values are equal, else a
  ``Conflict`` and the record fails (``MergeConflictError``).
* A scalar marked ``Grounded(after="field")`` keeps its order across chunks:
  when its merged value begins before the merged value of ``field`` ends (the
  two came from different chunks), the first chunk value that begins after it
  is taken instead (``Merge.after``, set by ``rules_of``).
* ``key`` (list): items concatenated in document order; items with equal key
  fields (strings compared with spacing collapsed) are one item: the most
  complete one (most non-empty values) is kept, at the place of the first.
  An item missing a key field is never merged.
* ``span`` (the list default): items from *different* chunks at overlapping
  source spans are one item (the most complete kept); equal items at
  different spans all stay (legitimate repeats); items of one chunk are
  never merged with each other.

Where an item's source span is not known (no grounded spans and no string
value found verbatim in its chunk), ``span`` falls back to equality between
items of *overlapping* chunks (the overlap is the same text seen twice);
equal items of chunks that do not overlap stay apart.

Extra passes (``passes=N``) only add: a list item from a later pass is kept
when no item of the earlier passes has its key (``key``), overlaps its span
(``span``), or equals it in an overlapping chunk (no span known); scalars of later passes count only
where earlier passes found nothing (``first``) or as votes (``majority``,
``must_agree``); the lists are then put back in document order
(``merge_order.document_order``, importable from here).

Field paths and spans follow the record contract: ``entries[3].version`` ->
``[(start, end), ...]``; spans given to ``merge_outputs`` are already in
document offsets, and the merged spans are re-indexed to the merged lists.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from agentflow._arguments import check_instance
from agentflow.errors import ArgumentValueError
from agentflow.extraction.merge_order import document_order, list_index, resolve_ref
from agentflow.grounding.marked_types import field_markers, unwrap_annotated

__all__ = [
    "ChunkOutput", "Conflict", "Merge", "MergeResult", "document_order", "is_list_type",
    "list_index", "merge_outputs", "resolve_ref", "rules_of",
]

MergeRuleName = Literal["first", "majority", "must_agree", "key", "span"]
Spans = dict[str, list[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class Merge:
    """A merge rule, declared as ``Annotated[type, Merge....]`` on a field.

    Build with ``Merge.first()``, ``Merge.majority()``, ``Merge.must_agree()``
    (scalars), ``Merge.by_key("field", ...)`` or ``Merge.by_span()`` (lists).
    """

    rule: MergeRuleName
    key: tuple[str, ...] = ()
    after: str | None = None
    """Set by ``rules_of`` from the field's ``Grounded(after=...)``: the
    scalar field whose value this one follows in the document (the merged
    value keeps that order; see ``merge_outputs``)."""

    @staticmethod
    def first() -> Merge:
        """Scalar: the first non-null value in document order (the default)."""
        return Merge("first")

    @staticmethod
    def majority() -> Merge:
        """Scalar: the most frequent non-null value (ties: the earliest)."""
        return Merge("majority")

    @staticmethod
    def must_agree() -> Merge:
        """Scalar: all non-null values must be equal, else the record fails."""
        return Merge("must_agree")

    @staticmethod
    def by_key(*fields: str) -> Merge:
        """List of objects: items with equal ``fields`` are one item.

        Raises:
            ArgumentValueError: no field named (a ``ValueError``).
            ArgumentTypeError: a field that is no str (``by_key(["a", "b"])``
                for ``by_key("a", "b")``; a ``TypeError``).
        """
        if not fields:
            raise ArgumentValueError("Merge.by_key needs at least one item field name")
        for name in fields:
            check_instance("Merge.by_key field", name, str, "an item field name (a str)")
        return Merge("key", tuple(fields))

    @staticmethod
    def by_span() -> Merge:
        """List: items at the same source span are one item (the list default)."""
        return Merge("span")


@dataclass(frozen=True, slots=True)
class Conflict:
    """Chunks that disagree on a scalar field.

    Attributes:
        path: the field path (``title``).
        rule: the field's rule (``first``, ``majority`` or ``must_agree``):
            which value was kept, if any.
        values: ``(value, start, end)`` per disagreeing chunk, in document
            order: the value and the ``[start, end)`` range of the chunk that gave it.
        chosen: the value kept (``first``: the earliest; ``majority``: the
            most frequent; ``None`` for ``must_agree``: none is).
    """

    path: str
    rule: MergeRuleName
    values: tuple[tuple[Any, int, int], ...]
    chosen: Any = None


@dataclass(frozen=True, slots=True)
class ChunkOutput:
    """One chunk's validated output, ready to merge.

    Attributes:
        start / end: the chunk's ``[start, end)`` in the document.
        data: the output as plain data (``model_dump()``), a dict of top-level fields.
        spans: grounded spans, field path -> ranges, in document offsets.
        anchors: where values were found verbatim in the chunk (same shape as
            ``spans``, document offsets); used only to tell repeats apart.
        index: the chunk's position in its pass; ``pass_no``: its pass (from 0).
        reads: the scalar fields a learned rule reads in the chunk's text
            (``agentflow.extraction.chunk_reads``): where a chunk that reads a
            field answers it, only such chunks vote on it.
    """

    start: int
    end: int
    data: Mapping[str, Any]
    spans: Spans = field(default_factory=dict)
    anchors: Spans = field(default_factory=dict)
    index: int = 0
    pass_no: int = 0
    reads: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class MergeResult:
    """The merged output (plain data), its spans, and the conflicts found."""

    data: dict[str, Any]
    spans: Spans
    conflicts: tuple[Conflict, ...]


def is_list_type(annotation: Any) -> bool:
    """Whether ``annotation`` is a list/tuple/set type (or an optional one)."""
    origin = get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return True
    if origin is None:
        return False
    return any(is_list_type(a) for a in get_args(annotation) if a is not type(None))


def rules_of(model: type[BaseModel]) -> dict[str, Merge]:
    """Each top-level field's rule: declared ``Merge`` metadata, else ``span``
    for list fields and ``first`` for the rest.

    Raises:
        ValueError: a list rule on a scalar field or a scalar rule on a list field,
            naming the field.
    """
    rules: dict[str, Merge] = {}
    for name, info in model.model_fields.items():
        declared = [m for m in info.metadata if isinstance(m, Merge)]
        is_list = is_list_type(info.annotation)
        rule = declared[-1] if declared else (Merge.by_span() if is_list else Merge.first())
        if is_list != (rule.rule in ("key", "span")):
            kind = "list" if is_list else "scalar"
            raise ValueError(f"{model.__name__}.{name}: merge rule {rule.rule!r} does not fit a "
                             f"{kind} field")
        marks = field_markers(info) + unwrap_annotated(info.annotation)[1]
        after = marks[-1].after if marks and not is_list else None
        rules[name] = dataclasses.replace(rule, after=after) if after else rule
    return rules


# ----------------------------------------------------------------------------- helpers

_WS = re.compile(r"\s+")


def _norm(value: Any) -> Any:
    """A hashable, comparison-ready form: strings with spacing collapsed."""
    if isinstance(value, str):
        return _WS.sub(" ", value).strip()
    if isinstance(value, Mapping):
        return tuple(sorted((k, _norm(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_norm(v) for v in value)
    return value


def _filled(value: Any) -> int:
    """How many non-empty values ``value`` holds (the completeness of an item)."""
    if value is None or value == "" or value == [] or value == {}:
        return 0
    if isinstance(value, Mapping):
        return sum(_filled(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_filled(v) for v in value)
    return 1


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _subspans(spans: Spans, prefix: str) -> list[tuple[str, list[tuple[int, int]]]]:
    return [(p, s) for p, s in spans.items() if _under(p, prefix)]


def _extent(out: ChunkOutput, prefix: str) -> tuple[int, int] | None:
    """The source range of the value at ``prefix``: from grounded spans, else anchors."""
    for source in (out.spans, out.anchors):
        ranges = [r for _, rs in _subspans(source, prefix) for r in rs]
        if ranges:
            return min(r[0] for r in ranges), max(r[1] for r in ranges)
    return None


@dataclass
class _Item:
    value: Any
    out: ChunkOutput
    local: int
    extent: tuple[int, int] | None


def _key(item: _Item, rule: Merge) -> Any:
    """The dedup key of a ``key``-rule item (``None``: the item has no full key)."""
    if not isinstance(item.value, Mapping):
        return ("value", _norm(item.value))
    key = tuple(_norm(item.value.get(k)) for k in rule.key)
    return None if None in key else key


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _same_sighting(a: _Item, b: _Item) -> bool:
    """``span`` rule: whether two items of different chunks are one item."""
    if a.extent is not None and b.extent is not None:
        return _overlap(a.extent, b.extent)
    return bool(_norm(a.value) == _norm(b.value))  # overlapping chunks: one text seen twice


def _merge_list(name: str, rule: Merge, outputs: Sequence[ChunkOutput], spans: Spans) -> list[Any]:
    kept: list[_Item] = []
    by_key: dict[Any, int] = {}
    by_chunk: list[tuple[ChunkOutput, list[int]]] = []
    for out in outputs:
        mine: list[int] = []
        here = (out.start, out.end)
        earlier = [(o, idx) for o, idx in by_chunk if _overlap((o.start, o.end), here)]
        for local, value in enumerate(out.data.get(name) or []):
            item = _Item(value, out, local, _extent(out, f"{name}[{local}]"))
            same: int | None = None
            if rule.rule == "key":
                key = _key(item, rule)
                same = by_key.get(key) if key is not None else None
                if key is not None and same is None:
                    by_key[key] = len(kept)
            else:
                same = next((i for _, idx in earlier for i in idx
                             if _same_sighting(kept[i], item)), None)
            if same is None:
                mine.append(len(kept))
                kept.append(item)
            elif out.pass_no == kept[same].out.pass_no and _filled(value) > _filled(
                    kept[same].value):
                kept[same] = item  # the more complete sighting, at the first one's place
        by_chunk.append((out, mine))
    for merged, item in enumerate(kept):
        old = f"{name}[{item.local}]"
        for path, ranges in _subspans(item.out.spans, old):
            spans[f"{name}[{merged}]{path[len(old):]}"] = list(ranges)
    return [item.value for item in kept]


def _merge_scalar(name: str, rule: Merge, outputs: Sequence[ChunkOutput], spans: Spans,
                  conflicts: list[Conflict]) -> Any:
    seen = [(out, out.data.get(name)) for out in outputs if out.data.get(name) is not None]
    reading = [(out, value) for out, value in seen if name in out.reads]
    seen = reading or seen  # chunks a learned rule reads the field in decide it alone
    if not seen:
        return None
    chosen_out, chosen = seen[0]
    counts: dict[Any, int] = {}
    for _, value in seen:
        counts[_norm(value)] = counts.get(_norm(value), 0) + 1
    if len(counts) > 1:  # a disagreement is reported whatever the rule that settles it
        if rule.rule == "majority":
            best = max(counts.values())
            winner = next(_norm(v) for _, v in seen if counts[_norm(v)] == best)
            chosen_out, chosen = next((o, v) for o, v in seen if _norm(v) == winner)
        conflicts.append(Conflict(
            name, rule.rule, tuple((v, o.start, o.end) for o, v in seen),
            None if rule.rule == "must_agree" else chosen))
    for path, ranges in _subspans(chosen_out.spans, name):
        spans[path] = list(ranges)
    return chosen


def merge_outputs(
    outputs: Sequence[ChunkOutput], rules: Mapping[str, Merge]
) -> MergeResult:
    """Merge chunk outputs (in document order within each pass, earlier passes
    first) field by field with ``rules`` (see the module docstring).

    Returns:
        The merged data (every field of ``rules``; a scalar no chunk gave is
        ``None``, a list no chunk gave is ``[]``), spans re-indexed to it, and
        the conflicts (``must_agree`` ones mean the record must fail).
    """
    ordered = sorted(outputs, key=lambda o: (o.pass_no, o.start, o.index))
    data: dict[str, Any] = {}
    spans: Spans = {}
    conflicts: list[Conflict] = []
    for name, rule in rules.items():
        if rule.rule in ("key", "span"):
            data[name] = _merge_list(name, rule, ordered, spans)
        else:
            data[name] = _merge_scalar(name, rule, ordered, spans, conflicts)
    for name, rule in rules.items():  # declaration order: a chain a -> b -> c in turn
        if rule.after is not None and rule.after in data:
            _keep_order(name, rule.after, ordered, data, spans)
    return MergeResult(data, spans, tuple(conflicts))


def _keep_order(name: str, before: str, outputs: Sequence[ChunkOutput], data: dict[str, Any],
                spans: Spans) -> None:
    """A scalar ``name`` held to begin after the merged value of ``before``
    (``Grounded(after=...)``): each chunk kept the order, but the merge may
    take the two values from different chunks (``before`` null in the chunk
    whose ``name`` came first). When the merged span of ``name`` begins
    before that of ``before`` ends, the first chunk value that begins after
    it is taken instead; with none, the merged value stays."""
    mine, theirs = spans.get(name), spans.get(before)
    if data.get(name) is None or data.get(before) is None or not mine or not theirs:
        return
    bound = theirs[0][1]
    if mine[0][0] >= bound:
        return
    for out in outputs:
        value, found = out.data.get(name), out.spans.get(name)
        if value is not None and found and found[0][0] >= bound:
            data[name] = value
            spans[name] = list(found)
            return
