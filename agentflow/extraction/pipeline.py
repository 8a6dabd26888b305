"""The extraction pipeline of one document: plan, run, merge, verify.

``agentflow.batch.extract_many`` (and the Ray engine through it) only
schedules documents; what happens to each one lives here:

* **plan** (``plan_extraction``, once per run): the schema's chunking rule is
  checked, the few-shot examples are checked against the schema and the
  grounding rule, and the tokens that go with every request (system prompt,
  schema, examples) are counted for the long-document budget;
* **run** (``ExtractionPlan.run``, once per document): the text capped by
  ``max_chars``, then one call when it fits the context window, else chunks
  x passes (``agentflow.extraction.chunked``), or recall passes over a
  document that fits (``agentflow.extraction.recall``);
* **merge** and **verify** happen inside those stages (``merge``,
  ``grounding``, ``degenerate``): the result carries its spans, chunks and
  conflicts, or the typed error that explains why there is no output; each
  ok result then gets its fields' confidence (``verify``).

Each model call is ``agentflow.extraction.one_call.extract_one``.

Every model call of a document (chunks included) takes one slot of the
``calls`` semaphore the scheduler passes in, so a run's requests in flight
never exceed its ``concurrency``.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import orjson

from agentflow._anyio_fast import acquire_soon
from agentflow.agent import ReActAgent
from agentflow.batch_types import ExtractInput, ExtractResult
from agentflow.errors import (
    EmptyDocumentError,
    GroundingError,
    SchemaError,
)
from agentflow.extraction.budget import Chunking, FitCheck, count_tokens, plan_budget
from agentflow.extraction.chunk_reads import ChunkReads
from agentflow.extraction.chunked import (
    ChunkProgress,
    DocumentOutcome,
    Truncation,
    check_items,
    extract_chunks,
)
from agentflow.extraction.chunking import iter_chunks
from agentflow.extraction.defaults import extraction_marker
from agentflow.extraction.dropped import example_values, without_unplaceable
from agentflow.extraction.one_call import extract_one
from agentflow.extraction.recall import recall_passes
from agentflow.extraction.verify import VerifyPlan, verify_plan, with_confidence
from agentflow.grounding import Grounded
from agentflow.grounding.locators import Locator, learn_locators
from agentflow.model import Usage
from agentflow.output.examples import (
    CheckedExample,
    CheckedExamples,
    Example,
    check_examples,
    examples_text,
)
from agentflow.output.schema import OutputSpec

__all__ = ["ExtractionPlan", "check_plan", "plan_extraction"]


def _cap(text: str, max_chars: int | None) -> tuple[str, Truncation | None]:
    """``text`` cut to ``max_chars`` at the last natural boundary (never inside
    a word or a character when avoidable), and what was cut."""
    if max_chars is None or len(text) <= max_chars:
        return text, None
    first = next(iter_chunks(text, max_chars))
    return text[: first.end], Truncation(first.end, len(text))


async def prompt_overhead(agent: ReActAgent, output: Any, shown: str = "") -> int:
    """Tokens of what goes with every chunk of a document ``agent`` extracts
    ``output`` from: its system prompt, the output schema as sent (``{}`` for
    an output type no schema describes) and the rendered few-shot examples
    (``shown``), counted by ``count_tokens`` for ``agent.model`` (a counter
    that fails falls back to an estimate).

    Raises:
        UsageError: the model itself cannot be used (``count_tokens``).
    """
    try:  # the schema as sent, for every output type (a JSON Schema's "#" refs too)
        schema: Any = OutputSpec.of(output).plain_schema
    except SchemaError:
        schema = {}
    return await count_tokens(agent.model, (agent.sys_prompt or "") + "\n" +
                              orjson.dumps(schema).decode() + "\n" + shown)


@dataclass(frozen=True, slots=True)
class _LongDocs:
    """The long-document settings of one ``extract_many`` run."""

    chunking: Chunking | None
    passes: int
    allow_partial: bool
    max_chars: int | None
    on_progress: Callable[[ChunkProgress], None] | None
    ground: bool | Grounded | None = None
    examples: tuple[Example, ...] | None = None
    locators: Mapping[str, Locator] = dataclasses.field(default_factory=dict)
    echoes: frozenset[str] = frozenset()  # the examples' values (a copied one is dropped)
    fit: FitCheck | None = None  # ``chunking``'s: a text that surely fits needs no budget


async def _extract_cut(
    agent: ReActAgent, index: int, item: ExtractInput, text: str, truncated: Truncation,
    output: Any, calls: anyio.Semaphore, overhead: int, settings: _LongDocs,
) -> ExtractResult:
    """The result of ``item`` whose text was cut at ``max_chars`` to ``text``
    (``ExtractionPlan.run`` reads an uncut one with ``_extract_text`` alone).

    A document cut at ``max_chars`` whose cut text fails grounding (a field
    the schema needs, such as a trailer past the cut, is not in the part
    kept) is read again whole: in one call when it fits the model's window,
    else in chunks. Its result is the whole document's (not ``truncated``),
    with both readings' usage and attempts."""
    result = await _extract_text(agent, index, item, text, truncated, output, calls, overhead,
                                 settings)
    if result.ok or item.media or not isinstance(
            result.error, GroundingError):
        return result
    whole = await _extract_text(agent, index, item, item.text, None, output, calls, overhead,
                                settings)
    return dataclasses.replace(whole, usage=result.usage + whole.usage,
                               attempts=result.attempts + whole.attempts,
                               duration=result.duration + whole.duration)


async def _extract_text(
    agent: ReActAgent, index: int, item: ExtractInput, text: str, truncated: Truncation | None,
    output: Any, calls: anyio.Semaphore, overhead: int, settings: _LongDocs,
) -> ExtractResult:
    """The result of reading ``text`` (``item``'s text, ``truncated`` when cut)."""
    start = time.perf_counter()
    if item.media:  # the model reads the blocks whole: one call, no chunks
        # no text (a scan): nothing for the default to ground in; Grounded() fields still are
        ground = settings.ground if text.strip() else False
        await acquire_soon(calls)
        try:
            result = await extract_one(agent, index, ExtractInput(item.id, text, item.media),
                                        output, ground, settings.examples)
        finally:
            calls.release()
        return dataclasses.replace(result, truncated=truncated) if truncated else result
    if not text.strip():
        return ExtractResult(index, item.id, None, EmptyDocumentError(
            f"input {item.id!r} is empty{' after the cut' if truncated else ''}: "
            "nothing to extract (no model call made)"), Usage(), 0, 0.0, truncated=truncated)
    budget = None
    chunking, fit = settings.chunking, settings.fit
    if chunking is not None and (fit is None or not fit.fits(agent.model, text, overhead)):
        try:
            budget = await plan_budget(agent.model, text, overhead, chunking)
        except Exception as exc:  # no room for text in the window: this input fails
            return ExtractResult(index, item.id, None, exc, Usage(), 0,
                                 time.perf_counter() - start, truncated=truncated)
    if budget is None or budget.fits:
        try:  # ``acquire_soon``, inline: a free slot taken with no coroutine nor checkpoint
            calls.acquire_nowait()
        except anyio.WouldBlock:
            await calls.acquire()
        try:  # (``item`` itself when it is the text read: no copy per document)
            result = await extract_one(agent, index, item if text is item.text else ExtractInput(
                item.id, text), output, settings.ground, settings.examples)
        finally:
            calls.release()
        if truncated is None:  # fields that could not be placed: nulled, flagged (dropped)
            result = without_unplaceable(result, output, text, settings.ground,
                                         unwritten=settings.allow_partial, echoes=settings.echoes,
                                         locators=settings.locators)
        if settings.passes > 1 and result.ok:
            result = await _recall(agent, index, ExtractInput(item.id, text), output, calls,
                                   settings, result, start)
        return dataclasses.replace(result, truncated=truncated) if truncated else result

    reads = ChunkReads(settings.locators, text) if settings.locators else None

    async def call(piece: str, chunk_output: Any) -> ExtractResult:
        located = reads.located(piece) if reads is not None else None
        result = await extract_one(agent, index, ExtractInput(item.id, piece), chunk_output,
                                    settings.ground, settings.examples, located=located)
        return without_unplaceable(result, chunk_output, piece, settings.ground,
                                   unwritten=settings.allow_partial, echoes=settings.echoes,
                                   locators=settings.locators)

    outcome: DocumentOutcome = await extract_chunks(
        item.id, text, output, budget, call, calls, passes=settings.passes,
        allow_partial=settings.allow_partial, on_progress=settings.on_progress,
        count=functools.partial(count_tokens, agent.model),
        items=settings.chunking.items if settings.chunking else None,
        item_unit=settings.chunking.item_unit if settings.chunking else "block",
        reads=reads)
    return ExtractResult(
        index, item.id, outcome.output, outcome.error, outcome.usage, outcome.attempts,
        time.perf_counter() - start, outcome.spans, outcome.chunks, truncated, outcome.conflicts,
        dropped=outcome.dropped)


async def _recall(
    agent: ReActAgent, index: int, item: ExtractInput, output: Any, calls: anyio.Semaphore,
    settings: _LongDocs, first: ExtractResult, start: float,
) -> ExtractResult:
    """``first`` with the later passes over a document that fits one request
    (``agentflow.extraction.recall``)."""

    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        await acquire_soon(calls)
        try:
            return await extract_one(agent, index, item, ask, settings.ground,
                                      settings.examples, taken)
        finally:
            calls.release()

    outcome = await recall_passes(first, item.text, output, settings.passes, again)
    # the first reading's token probabilities, for the fields later passes left as they were
    same = {name: p for name, p in first.token_probs.items()
            if _field(first.output, name) == _field(outcome.output, name)}
    return ExtractResult(
        index, item.id, outcome.output, outcome.error, outcome.usage, outcome.attempts,
        time.perf_counter() - start, outcome.spans, outcome.chunks, conflicts=outcome.conflicts,
        token_probs=same)


def _field(output: Any, name: str) -> Any:
    """Field ``name`` of an output (a model or a mapping); ``None`` without one."""
    if isinstance(output, Mapping):
        return output.get(name)
    return getattr(output, name, None)


def _run_marker(agent: ReActAgent, ground: bool | Grounded | None,
                examples: Sequence[Example], output: Any) -> Grounded | None:
    """The marker a run grounds every unmarked free-text string with (``None``:
    none): ``ground`` as given (``True``: the extraction default, relaxed by
    the examples; ``False``: none); ``None``: the agent's own ``ground``
    setting when it has one, else the extraction default."""
    if ground is None:
        own = agent.structured_output.config.ground
        ground = own if own is not False else True
    if ground is False:
        return None
    if isinstance(ground, Grounded):
        return ground
    return extraction_marker(examples, output)


@dataclass(frozen=True, slots=True)
class ExtractionPlan:
    """What every document of one run shares (``plan_extraction``).

    Attributes:
        agent: the agent that makes the calls.
        output: the output type.
        settings: the long-document settings.
        shown: the checked few-shot examples (rendered into each request).
        locators: where each field lives, learned from the examples (for
            each result's confidence).
        overhead: tokens sent with every request besides the document's text
            (0 until ``counted``, and without chunking).
        verify: the verify stage's plan of the output type (``verify_plan``;
            made by ``counted``, once per run).
    """

    agent: ReActAgent
    output: Any
    settings: _LongDocs
    shown: tuple[CheckedExample, ...] = ()
    locators: Mapping[str, Locator] = dataclasses.field(default_factory=dict)
    overhead: int = 0
    verify: VerifyPlan | None = None

    async def counted(self, agent: ReActAgent | None = None) -> ExtractionPlan:
        """This plan run by ``agent`` (``None``: its own; batch mode swaps in
        its own agent), with the per-request token overhead counted (the
        budget stage: only when long documents are chunked)."""
        agent = agent or self.agent
        overhead = (await prompt_overhead(agent, self.output,
                                           examples_text(self.shown, self.output))
                    if self.settings.chunking is not None else 0)
        return dataclasses.replace(self, agent=agent, overhead=overhead, verify=verify_plan(
            self.output, agent.model.profile.schema_dialect))

    async def run(self, index: int, item: ExtractInput, calls: anyio.Semaphore
                  ) -> ExtractResult:
        """The result of document ``item`` (input position ``index``); each
        model call holds one slot of ``calls``. Never raises for a failing
        document: its error is in the result (the verify stage: each ok
        result carries its fields' confidence)."""
        # one call when the text fits, else chunks merged; a text cut at ``max_chars``
        # may be read again whole (``_extract_cut``)
        settings = self.settings
        text, truncated = _cap(item.text, settings.max_chars)
        if truncated is None:
            result = await _extract_text(self.agent, index, item, text, None, self.output,
                                         calls, self.overhead, settings)
        else:
            result = await _extract_cut(self.agent, index, item, text, truncated, self.output,
                                        calls, self.overhead, settings)
        return with_confidence(result, item.text, self.locators, self.output,
                                self.agent.model.profile.schema_dialect, self.verify)


def check_plan(output: Any, chunking: Chunking | None) -> None:
    """The checks a run makes before it builds an agent: ``output`` is an
    output type (``OutputSpec.of``: a value, pydantic's ``BaseModel`` itself or a
    class no JSON Schema describes was a bare pydantic error or ``AttributeError``
    from the iteration), and ``check_items``.

    Raises:
        SchemaError: ``output`` is no output type.
        UsageError: ``chunking.items`` names no top-level list field of ``output``.
    """
    OutputSpec.of(output)
    check_items(output, chunking.items if chunking is not None else None)


def plan_extraction(
    agent: ReActAgent, output: Any, *, chunking: Chunking | None, passes: int,
    allow_partial: bool, max_chars: int | None,
    on_progress: Callable[[ChunkProgress], None] | None,
    ground: bool | Grounded | None, examples: Sequence[Example] | None,
) -> ExtractionPlan:
    """The plan of one run: examples checked (``None``: the agent's), once,
    and given so to every call (``CheckedExamples``), and the
    long-document settings; ``ExtractionPlan.counted`` adds the token budget's
    overhead.

    Raises:
        InvalidExampleError: an example does not fit ``output`` (before any
            document is read).
    """
    shown = agent.structured_output.config.examples if examples is None else tuple(examples)
    marker = _run_marker(agent, ground, shown, output)
    checked = check_examples(shown, output, marker)  # a bad example fails the run, not each input
    locators = learn_locators(checked, output)  # where each field lives, from the examples
    # each call's set-up takes them checked (one owner: this plan), never checks them again
    given = CheckedExamples(shown, checked, output, marker, locators)
    settings = _LongDocs(chunking, passes, allow_partial, max_chars, on_progress,
                         marker if marker is not None else False, given, locators,
                         example_values(c.value for c in checked),
                         FitCheck(chunking) if chunking is not None else None)
    return ExtractionPlan(agent, output, settings, tuple(checked), locators)
