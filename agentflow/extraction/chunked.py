"""Extraction of one long document: plan, split, extract chunks concurrently, merge.

``extract_document`` is what ``extract_many`` runs per input. A document
that fits the model's budget (``budget.plan_budget``) is one ordinary call.
One that does not is split (``chunking.iter_chunks``) and each chunk is an
ordinary call of the engine for a *partial* form of the output type (every
top-level field optional: a chunk in the middle of a report has no title),
at most as many at once as the batch's call limiter admits. The chunks'
outputs are merged by the schema's rules (``merge``; a scalar a learned rule
reads in some chunks is decided by those: ``chunk_reads``), spans are shifted to
document offsets, and the merged value is validated against the real output
type: a required field no chunk found is a ``MergeError`` naming it (the
partial model and that validation: ``chunk_schema``, importable from here).

Token-aware: chunk sizes come from a characters-per-token ratio measured on
a sample of the document, and each planned chunk is then counted with the
model's own count; a chunk over the budget (text denser than the sample) is
split again before it is sent.

Memory: the plan is a list of offsets; a chunk's text is sliced only while
its call runs, so at most ``concurrency`` chunk copies exist at once.

Extra passes (``passes=N``) extract the document again with the chunk
boundaries shifted by ``k/N`` of a chunk, so items cut by one pass's
boundaries are seen whole by another; later passes only add items, the
merged lists are put back in document order (by span), and a list over its
``max_length`` keeps its first items (as ``agentflow.extraction.recall`` does).

Map over items (``Chunking(items="entries")``): chunks are whole units
(``chunking.iter_item_chunks``), and each chunk's partial output bounds the
list field to as many items as the chunk holds units (``maxItems``, which
the grammar of a constrained model enforces): a weak model that would copy
one item until its reply is cut writes it once and stops.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from pydantic import BaseModel

from agentflow._anyio_fast import acquire_soon
from agentflow.errors import ChunkFailedError, MergeError, UsageError
from agentflow.extraction.budget import SAFETY, Budget
from agentflow.extraction.chunk_schema import check_items, partial_model, validate_merged
from agentflow.extraction.chunking import Chunk, ItemUnit, iter_chunks, iter_item_chunks
from agentflow.extraction.merge import (
    ChunkOutput,
    Conflict,
    document_order,
    merge_outputs,
    rules_of,
)
from agentflow.model import Usage

__all__ = [
    "ChunkProgress",
    "ChunkReport",
    "DocumentOutcome",
    "Truncation",
    "check_items",
    "extract_chunks",
    "fit_chunk",
    "partial_model",
    "validate_merged",
]

Spans = dict[str, list[tuple[int, int]]]


class CallResult(Protocol):
    """What one engine call gives back (an ``ExtractResult`` is one)."""

    @property
    def output(self) -> Any: ...
    @property
    def error(self) -> Exception | None: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def attempts(self) -> int: ...
    @property
    def spans(self) -> Spans: ...


ChunkCall = Callable[[str, Any], Awaitable[CallResult]]
"""``(text, output_type) -> result``: one ordinary engine call."""
TokenCount = Callable[[str], Awaitable[int]]
"""``text -> tokens`` for the model at hand."""


@dataclass(frozen=True, slots=True)
class ChunkProgress:
    """Progress of one document's chunks: ``done`` of ``total`` calls finished."""

    id: str
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class ChunkReport:
    """How a long document was read (the record's ``chunks``).

    Attributes:
        total: chunk calls made (all passes).
        failed: chunk calls that failed.
        missing: ``[start, end)`` ranges no successful chunk covered (partial results).
        hard_cuts: offsets where a chunk ended with no natural boundary (a
            line longer than a chunk, split at a character boundary).
        passes: extraction passes over the document.
    """

    total: int
    failed: int
    missing: tuple[tuple[int, int], ...] = ()
    hard_cuts: tuple[int, ...] = ()
    passes: int = 1


@dataclass(frozen=True, slots=True)
class Truncation:
    """A user cap cut the document (the record's ``truncated``): ``kept_chars``
    of ``total_chars`` characters were read."""

    kept_chars: int
    total_chars: int


@dataclass(frozen=True, slots=True)
class DocumentOutcome:
    """The merged result of a chunked document (``extract_many`` makes it a record)."""

    output: Any
    error: Exception | None
    usage: Usage
    attempts: int
    spans: Spans = field(default_factory=dict)
    chunks: ChunkReport | None = None
    conflicts: tuple[Conflict, ...] = ()
    dropped: dict[str, str] = field(default_factory=dict)  # agentflow.extraction.dropped


def _leaves(value: Any, path: str) -> list[tuple[str, str]]:
    """``(path, string)`` of every string inside ``value``."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, Mapping):
        return [x for k, v in value.items() for x in _leaves(v, f"{path}.{k}")]
    if isinstance(value, list | tuple):
        return [x for i, v in enumerate(value) for x in _leaves(v, f"{path}[{i}]")]
    return []


def _anchors(data: Mapping[str, Any], text: str, start: int, fields: Sequence[str]) -> Spans:
    """Where the strings (3+ characters) of the items of list ``fields`` occur
    verbatim in the chunk, in document offsets (the first occurrence), to tell
    repeats from duplicates (only ``span``-rule lists need it)."""
    found: Spans = {}
    for name in fields:
        value = data.get(name)
        if not isinstance(value, list):
            continue
        for path, string in _leaves(value, name):
            needle = string.strip()
            at = text.find(needle) if len(needle) >= 3 else -1
            if at >= 0:
                found[path] = [(start + at, start + at + len(needle))]
    return found


def _missing(failed: Sequence[Chunk], done: Sequence[Chunk]) -> tuple[tuple[int, int], ...]:
    """Parts of failed chunks that no successful chunk covered, merged."""
    covered = sorted((c.start, c.end) for c in done)
    gaps: list[tuple[int, int]] = []
    for chunk in sorted(failed, key=lambda c: c.start):
        parts = [(chunk.start, chunk.end)]
        for s, e in covered:
            parts = [piece for a, b in parts
                     for piece in ((a, min(b, s)), (max(a, e), b)) if piece[0] < piece[1]]
        for a, b in parts:
            if gaps and a <= gaps[-1][1]:
                gaps[-1] = (gaps[-1][0], max(gaps[-1][1], b))
            else:
                gaps.append((a, b))
    return tuple(gaps)


async def fit_chunk(text: str, chunk: Chunk, budget: Budget, count: TokenCount) -> list[Chunk]:
    """``chunk`` if its text counts at most ``budget.chunk_tokens`` tokens, else
    its range split again into pieces that do (text denser than the sample the
    budget measured: digits, code, another script), recursively.

    Raises:
        whatever ``count`` raises (``count_tokens`` never does: it falls back).
    """
    size = chunk.end - chunk.start
    tokens = await count(chunk.text(text))
    if tokens <= budget.chunk_tokens or size <= 1:
        return [chunk]
    smaller = max(1, min(size - 1, int(size * budget.chunk_tokens / tokens * SAFETY)))
    part = text[chunk.start : chunk.end]
    overlap = min(budget.overlap, smaller - 1)
    fitted: list[Chunk] = []
    for sub in iter_chunks(part, smaller, overlap):
        moved = Chunk(0, chunk.start + sub.start, chunk.start + sub.end,
                      sub.hard_cut or (sub.end == len(part) and chunk.hard_cut), chunk.units)
        fitted += await fit_chunk(text, moved, budget, count)
    return fitted


def _shift(spans: Spans, by: int) -> Spans:
    return {path: [(s + by, e + by) for s, e in ranges] for path, ranges in spans.items()}


async def extract_chunks(
    doc_id: str,
    text: str,
    output: Any,
    budget: Budget,
    call: ChunkCall,
    limiter: anyio.Semaphore,
    *,
    passes: int = 1,
    allow_partial: bool = False,
    on_progress: Callable[[ChunkProgress], None] | None = None,
    count: TokenCount | None = None,
    items: str | None = None,
    item_unit: ItemUnit = "block",
    reads: Callable[[str], frozenset[str]] | None = None,
) -> DocumentOutcome:
    """Extract ``output`` from ``text`` chunk by chunk and merge.

    Args:
        doc_id: the document's id (for progress).
        text: the document (already known not to fit one request).
        output: a pydantic model class (others cannot be merged: ``MergeError``).
        budget: the chunk size and overlap (``plan_budget``).
        call: one engine call.
        limiter: bounds the calls in flight across the whole batch.
        passes: extraction passes (>= 1).
        allow_partial: keep the other chunks' output when a chunk fails.
        on_progress: called after each chunk call.
        count: the model's token count; each planned chunk is counted and one
            over ``budget.chunk_tokens`` is split again (``fit_chunk``).
        items: map over items: the list field whose items the document is a
            run of (``Chunking.items``); chunks are whole ``item_unit`` units
            and each chunk's list is bounded by its unit count.
        item_unit: ``"block"`` or ``"line"`` (``Chunking.item_unit``).
        reads: a chunk's text -> the scalar fields a learned rule reads in it
            (``agentflow.extraction.chunk_reads.ChunkReads``): where such a
            chunk answers a field, the others do not vote on it.

    Returns:
        The merged outcome; failures are in ``error`` (``ChunkFailedError``,
        ``MergeError``, ``MergeConflictError``), never raised.
    """
    if not (isinstance(output, type) and issubclass(output, BaseModel)):
        return DocumentOutcome(None, MergeError(
            f"the document needs {max(2, len(text) // budget.chunk_chars)}+ chunks but the "
            f"output type {output!r} is not a pydantic model, so chunk outputs cannot be "
            f"merged; use a model class or a larger chunk budget"), Usage(), 0)
    try:
        rules = rules_of(output)
        check_items(output, items)
    except (ValueError, UsageError) as exc:
        return DocumentOutcome(None, MergeError(str(exc)), Usage(), 0)
    by_span = [name for name, rule in rules.items() if rule.rule == "span"]
    plan: list[tuple[int, Chunk]] = []
    for p in range(passes):
        shift = budget.chunk_chars * p // passes
        planned = (iter_chunks(text, budget.chunk_chars, budget.overlap, offset=shift)
                   if items is None else
                   iter_item_chunks(text, budget.chunk_chars, item_unit, budget.overlap,
                                    offset=shift, max_units=budget.units_per_chunk))
        for chunk in planned:
            pieces = [chunk] if count is None else await fit_chunk(text, chunk, budget, count)
            at = sum(1 for q, _ in plan if q == p)
            plan += [(p, dataclasses.replace(c, index=at + i)) for i, c in enumerate(pieces)]
    outputs: list[ChunkOutput] = []
    failures: list[tuple[Chunk, Exception]] = []
    dropped: dict[str, str] = {}  # a chunk's fields whose values could not be placed: why
    usage, attempts, done = Usage(), 0, 0

    async def run(pass_no: int, chunk: Chunk) -> None:
        nonlocal usage, attempts, done
        result: CallResult | None = None
        try:
            piece = chunk.text(text)
            bound = chunk.units if items is not None else None
            result = await call(piece, partial_model(output, items, bound))
        except Exception as exc:  # the call itself broke: this chunk failed
            failures.append((chunk, exc))
        finally:
            limiter.release()
        done += 1
        if result is not None:
            usage, attempts = usage + result.usage, attempts + result.attempts
        if result is not None and result.error is not None:
            failures.append((chunk, result.error))
        elif result is not None:
            for name, why in getattr(result, "dropped", {}).items():
                dropped.setdefault(name, why)
            data = result.output.model_dump()
            outputs.append(ChunkOutput(chunk.start, chunk.end, data,
                                       _shift(result.spans, chunk.start),
                                       _anchors(data, piece, chunk.start, by_span),
                                       chunk.index, pass_no,
                                       reads(piece) if reads is not None else frozenset()))
        if on_progress is not None:
            on_progress(ChunkProgress(doc_id, done, len(plan)))

    async with anyio.create_task_group() as tg:
        for pass_no, chunk in plan:
            await acquire_soon(limiter)
            tg.start_soon(run, pass_no, chunk)

    report = ChunkReport(
        len(plan), len(failures),
        _missing([c for c, _ in failures], [c for _, c in plan if (c.start, c.end) in {
            (o.start, o.end) for o in outputs}]) if failures else (),
        tuple(sorted({c.end for _, c in plan if c.hard_cut})), passes)
    if failures and (not allow_partial or not outputs):
        first, cause = min(failures, key=lambda f: f[0].start)
        failed = ChunkFailedError(
            f"chunk [{first.start}, {first.end}) of {len(text)} characters failed "
            f"({len(failures)} of {len(plan)} chunks): {type(cause).__name__}: {cause}",
            start=first.start, end=first.end)
        failed.__cause__ = cause
        return DocumentOutcome(None, failed, usage, attempts, chunks=report)
    merged = merge_outputs(outputs, rules)
    spans = dict(merged.spans)
    if passes > 1:  # items of several passes: in document order, up to max_length
        document_order(output, merged.data, spans,
                       [n for n, rule in rules.items() if rule.rule in ("key", "span")])
    error, value = validate_merged(output, merged.data, merged.conflicts)
    dropped = {n: why for n, why in dropped.items() if merged.data.get(n) is None}  # no chunk's
    return DocumentOutcome(value, error, usage, attempts, spans if error is None else {},
                           report, merged.conflicts, dropped if error is None else {})
