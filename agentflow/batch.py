"""Concurrent structured extraction over many inputs.

``extract_many`` runs one call per input, at most ``concurrency`` at a time,
each on its own fresh ``AgentState``, and yields exactly one ``ExtractResult``
per input: its output, or the typed error that explains why there is none.
A failing input never stops the others and never disappears::

    async for result in extract_many(agent, documents, Invoice, concurrency=16):
        if result.ok:
            save(result.id, result.output)
        else:
            log(result.id, result.error)

Results come in input order (default) or as they complete. Breaking out of
the iteration, or cancelling the consuming task, cancels the calls still
running and returns once they have stopped.

Long documents are never cut silently: one that does not fit the model's
context window is split into chunks, extracted chunk by chunk (each an
ordinary call, all inside the same ``concurrency`` bound) and merged by the
rules declared on the schema (``agentflow.extraction``: ``chunked``,
``chunking``, ``merge``, ``budget``). A user cap (``max_chars``) still cuts,
and the result says so (``truncated``). The input and result shapes live in
``agentflow.batch_types`` (importable from here).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

import anyio
import orjson
from anyio.abc import ObjectSendStream
from typing_extensions import Unpack

from agentflow.agent import ReActAgent
from agentflow.batch_api.mode import Mode, start_batch_mode
from agentflow.batch_api.model import input_scope
from agentflow.batch_api.runner import BatchSettings
from agentflow.batch_types import (
    ExtractInput,
    ExtractOptions,
    ExtractResult,
    IdCheck,
    _aiter,
    _as_input,
)
from agentflow.batch_types import InputLike as InputLike  # re-exported: agentflow.sync reads it
from agentflow.documents.deferred import resolve_media
from agentflow.errors import EmptyDocumentError, GroundingError, SchemaError
from agentflow.extraction.budget import DEFAULT_CHUNKING, Chunking, count_tokens, plan_budget
from agentflow.extraction.chunked import (
    ChunkProgress,
    DocumentOutcome,
    Truncation,
    check_items,
    extract_chunks,
)
from agentflow.extraction.chunking import iter_chunks
from agentflow.extraction.confidence import field_confidence, needs_review
from agentflow.extraction.defaults import extraction_marker
from agentflow.extraction.recall import TAKEN_KEY, recall_passes
from agentflow.grounding import Grounded
from agentflow.grounding.locators import Locator, learn_locators
from agentflow.messages import Msg
from agentflow.model import ChatModel, Usage
from agentflow.output.examples import Example, check_examples, examples_text
from agentflow.output.schema import OutputSpec
from agentflow.ratelimit import request_priority

__all__ = ["ExtractInput", "ExtractOptions", "ExtractResult", "extract_many"]

OutT = TypeVar("OutT")


def _message(item: ExtractInput, taken: frozenset[tuple[int, int]] = frozenset()) -> Msg:
    """The user message of ``item``: its media (deferred ones read now), then its
    text (when it has any); ``taken``: spans an earlier pass took as list
    items (``agentflow.extraction.recall``)."""
    metadata = {TAKEN_KEY: sorted(taken)} if taken else None
    if not item.media:
        return Msg.user(item.text, metadata=metadata)
    media = resolve_media(item.media)
    return Msg.user([*media, item.text] if item.text.strip() else media, metadata=metadata)


async def _extract_one(
    agent: ReActAgent, index: int, item: ExtractInput, output: Any,
    ground: bool | Grounded | None = None, examples: tuple[Example, ...] | None = None,
    taken: frozenset[tuple[int, int]] = frozenset(),
) -> ExtractResult:
    start = time.perf_counter()
    usage = Usage()
    spans: dict[str, list[tuple[int, int]]] = {}
    try:
        # the call's Complete also when the output could not be had (its usage counts)
        complete = await agent._complete(_message(item, taken), output, None, None, ground,
                                         examples, deltas=True)
        usage = complete.usage
        value = complete.message.output  # raises StructuredOutputError when there is none
        spans = dict(complete.spans)
        error: Exception | None = None
    except Exception as exc:  # every failure becomes this input's result
        value, error = None, exc
    return ExtractResult(
        index, item.id, value, error, usage, usage.requests, time.perf_counter() - start, spans
    )


def _cap(text: str, max_chars: int | None) -> tuple[str, Truncation | None]:
    """``text`` cut to ``max_chars`` at the last natural boundary (never inside
    a word or a character when avoidable), and what was cut."""
    if max_chars is None or len(text) <= max_chars:
        return text, None
    first = next(iter_chunks(text, max_chars))
    return text[: first.end], Truncation(first.end, len(text))


async def _prompt_overhead(agent: ReActAgent, output: Any, shown: str = "") -> int:
    """Tokens of what goes with every chunk: the system prompt, the output
    schema and the rendered few-shot examples (``shown``)."""
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


async def _extract_input(
    agent: ReActAgent, index: int, item: ExtractInput, output: Any, calls: anyio.Semaphore,
    overhead: int, settings: _LongDocs,
) -> ExtractResult:
    """One input's result: one call when the text fits, else chunks merged.

    A document cut at ``max_chars`` whose cut text fails grounding (a field
    the schema needs, such as a trailer past the cut, is not in the part
    kept) is read again whole: in one call when it fits the model's window,
    else in chunks. Its result is the whole document's (not ``truncated``),
    with both readings' usage and attempts."""
    text, truncated = _cap(item.text, settings.max_chars)
    result = await _extract_text(agent, index, item, text, truncated, output, calls, overhead,
                                 settings)
    if truncated is None or result.ok or item.media or not isinstance(
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
        async with calls:
            result = await _extract_one(agent, index, ExtractInput(item.id, text, item.media),
                                        output, ground, settings.examples)
        return dataclasses.replace(result, truncated=truncated) if truncated else result
    if not text.strip():
        return ExtractResult(index, item.id, None, EmptyDocumentError(
            f"input {item.id!r} is empty{' after the cut' if truncated else ''}: "
            "nothing to extract (no model call made)"), Usage(), 0, 0.0, truncated=truncated)
    budget = None
    if settings.chunking is not None:
        try:
            budget = await plan_budget(agent.model, text, overhead, settings.chunking)
        except Exception as exc:  # no room for text in the window: this input fails
            return ExtractResult(index, item.id, None, exc, Usage(), 0,
                                 time.perf_counter() - start, truncated=truncated)
    if budget is None or budget.fits:
        async with calls:
            result = await _extract_one(agent, index, ExtractInput(item.id, text), output,
                                        settings.ground, settings.examples)
        if settings.passes > 1 and result.ok:
            result = await _recall(agent, index, ExtractInput(item.id, text), output, calls,
                                   settings, result, start)
        return dataclasses.replace(result, truncated=truncated) if truncated else result

    async def call(piece: str, chunk_output: Any) -> ExtractResult:
        return await _extract_one(agent, index, ExtractInput(item.id, piece), chunk_output,
                                  settings.ground, settings.examples)

    outcome: DocumentOutcome = await extract_chunks(
        item.id, text, output, budget, call, calls, passes=settings.passes,
        allow_partial=settings.allow_partial, on_progress=settings.on_progress,
        count=functools.partial(count_tokens, agent.model),
        items=settings.chunking.items if settings.chunking else None,
        item_unit=settings.chunking.item_unit if settings.chunking else "block")
    return ExtractResult(
        index, item.id, outcome.output, outcome.error, outcome.usage, outcome.attempts,
        time.perf_counter() - start, outcome.spans, outcome.chunks, truncated, outcome.conflicts)


async def _recall(
    agent: ReActAgent, index: int, item: ExtractInput, output: Any, calls: anyio.Semaphore,
    settings: _LongDocs, first: ExtractResult, start: float,
) -> ExtractResult:
    """``first`` with the later passes over a document that fits one request
    (``agentflow.extraction.recall``)."""

    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        async with calls:
            return await _extract_one(agent, index, item, ask, settings.ground,
                                      settings.examples, taken)

    outcome = await recall_passes(first, item.text, output, settings.passes, again)
    return ExtractResult(
        index, item.id, outcome.output, outcome.error, outcome.usage, outcome.attempts,
        time.perf_counter() - start, outcome.spans, outcome.chunks, conflicts=outcome.conflicts)


def _with_confidence(result: ExtractResult, text: str,
                     locators: Mapping[str, Locator]) -> ExtractResult:
    """``result`` with its fields' confidence, the fields that need review and
    the values nothing checked (``agentflow.extraction.confidence``)."""
    if not result.ok:
        return result
    if result.truncated is not None:
        text = text[: result.truncated.kept_chars]
    confidence, ungrounded = field_confidence(result.output, text, result.spans, locators)
    return dataclasses.replace(result, confidence=confidence,
                               needs_review=tuple(needs_review(confidence)),
                               ungrounded=tuple(ungrounded))


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


@overload
def extract_many(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: type[OutT],
    **options: Unpack[ExtractOptions],
) -> AsyncIterator[ExtractResult[OutT]]: ...


@overload
def extract_many(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: Any,
    **options: Unpack[ExtractOptions],
) -> AsyncIterator[ExtractResult]: ...


async def extract_many(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: Any,
    *,
    concurrency: int = 8,
    order: Literal["input", "completed"] = "input",
    instructions: str | None = None,
    ground: bool | Grounded | None = None,
    chunking: Chunking | None = DEFAULT_CHUNKING,
    passes: int = 1,
    allow_partial: bool = False,
    max_chars: int | None = None,
    on_progress: Callable[[ChunkProgress], None] | None = None,
    examples: Sequence[Example] | None = None,
    mode: Mode = "live",
    batch: BatchSettings | None = None,
) -> AsyncIterator[ExtractResult]:
    """Extract ``output`` from every input, concurrently.

    Args:
        agent_or_model: an agent, or a model (object or ``"vendor:model"``) for
            which a tool-less agent is built with ``instructions`` as system prompt.
            A model given by name is closed when the iteration ends; an agent
            or model object stays open (its owner closes it).
        inputs: str (id = index), ``(id, text)`` or ``ExtractInput`` items;
            a sync or async iterable, consumed lazily.
        output: the output type.
        concurrency: calls in flight at most (>= 1).
        order: ``"input"`` yields in input order, ``"completed"`` as results arrive.
        instructions: system prompt when a model is given (ignored for an agent).
        ground: ground every free-text string of each output in its input.
            ``None`` (default): the agent's ``OutputConfig.ground`` when it
            sets one, else the extraction default; ``True``: the extraction
            default (``agentflow.extraction.defaults``: whole tokens, clean
            edges, relaxed where the examples show otherwise); a
            ``Grounded``: that marker; ``False``: only the fields marked
            ``Grounded()``. A field marked ``Derived()`` is never grounded
            by the default. Each result's ``spans`` says where the grounded
            values are.
        chunking: how a document that does not fit the model's context window
            is split (``Chunking()``: by the model's profile); ``None`` sends
            every document whole, whatever its size.
        passes: extraction passes over each document (>= 1); later passes
            only add list items (recall): a chunked document is cut
            elsewhere, one that fits is read again with the items already
            found excluded where the model takes a grammar
            (``agentflow.extraction.recall``).
        allow_partial: a chunked document whose chunk failed still yields the
            other chunks' merged output, with the missing ranges in ``chunks``.
        max_chars: cut each document to this many characters (at a natural
            boundary); the result's ``truncated`` says so. A cut document
            whose kept part fails grounding (a field it needs lies past the
            cut) is read again whole (chunked if it does not fit the
            window), and its result is not ``truncated``.
        on_progress: called after each chunk call of a chunked document.
        examples: few-shot ``Example``s shown before each input (and each
            chunk), ``agentflow.output.examples``; ``None`` keeps the
            agent's ``OutputConfig.examples``. Counted in the long-document
            token budget.
        mode: ``"live"`` (requests now), ``"batch"`` (every first turn through
            the vendor's batch API at about half price; re-asks live) or
            ``"auto"`` (batch for 100 inputs or more on a vendor with a batch
            API); see ``agentflow.batch_api.mode``. In batch mode up to
            ``batch.max_inflight`` inputs wait for replies at once and
            ``concurrency`` bounds the live re-asks.
        batch: the batch mode's settings (journal, polling, ``batch_only``,
            progress callback).

    Yields:
        One ``ExtractResult`` per input (``ExtractResult[Invoice]`` to a type
        checker when ``output`` is the class ``Invoice``). An empty document yields an
        ``EmptyDocumentError`` result without a model call.

    Raises:
        ValueError: ``concurrency`` < 1, ``passes`` not an int >= 1, ``max_chars`` < 1 or
            unknown ``order``.
        DuplicateInputIdError: two inputs share an id (naming it and both positions):
            before any request for a collection (list, tuple...); for a lazy
            iterable when the repeat is read (it is never sent; the inputs
            already started finish first). Plain ``str`` inputs get their
            position as id, never a repeat among themselves.
        UsageError: ``chunking.items`` names no top-level list field of ``output``.
        TypeError: ``inputs`` is one ``str`` (or ``bytes``) rather than an iterable of
            documents; an input of an unsupported type (raised when it is reached).
        InvalidExampleError: an example does not fit ``output`` (before any
            input is read).
        BatchUnavailableError: ``mode="batch"`` on a model without a batch API
            (before any request).
    """
    if isinstance(inputs, str | bytes | bytearray):  # iterated, each character a document
        raise TypeError(f"inputs is one {type(inputs).__name__}: pass an iterable of "
                        "documents, e.g. [text]")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if order not in ("input", "completed"):
        raise ValueError(f"order must be 'input' or 'completed', got {order!r}")
    if not isinstance(passes, int) or isinstance(passes, bool) or passes < 1:
        raise ValueError(f"passes must be an int >= 1, got {passes!r}")
    if max_chars is not None and max_chars < 1:
        raise ValueError(f"max_chars must be >= 1, got {max_chars}")
    check_items(output, chunking.items if chunking is not None else None)
    checked_ids = isinstance(inputs, Collection) and not isinstance(inputs, Iterator)
    if checked_ids:  # a collection can be read twice: every id checked before any request
        IdCheck.all(inputs)  # type: ignore[arg-type]
    agent = (
        agent_or_model
        if isinstance(agent_or_model, ReActAgent)
        else ReActAgent("extract", agent_or_model, sys_prompt=instructions)
    )
    owner = agent
    shown = agent.structured_output.config.examples if examples is None else tuple(examples)
    marker = _run_marker(agent, ground, shown, output)
    checked = check_examples(shown, output, marker)  # a bad example fails the run, not each input
    locators = learn_locators(checked, output)  # where each field lives, from the examples
    settings = _LongDocs(chunking, passes, allow_partial, max_chars, on_progress,
                         marker if marker is not None else False,
                         None if examples is None else tuple(examples))
    batch_run, inputs = await start_batch_mode(agent, inputs, mode, batch, concurrency)
    if batch_run is not None:  # first turns wait in vendor batches: keep many inputs in flight
        agent, concurrency = batch_run.agent, batch_run.concurrency
    send, receive = anyio.create_memory_object_stream[ExtractResult | BaseException](
        max_buffer_size=concurrency
    )

    async def supervise(results: ObjectSendStream[ExtractResult | BaseException]) -> None:
        async with results:
            failure: Exception | None = None
            limiter = anyio.Semaphore(concurrency)  # inputs in flight
            calls = anyio.Semaphore(concurrency)  # model calls in flight (chunks included)
            overhead = (await _prompt_overhead(agent, output, examples_text(checked, output))
                        if chunking is not None else 0)
            async with anyio.create_task_group() as tg:
                index = 0
                ids = IdCheck()  # a lazy iterable: each id checked as it is read
                try:
                    async for raw in _aiter(inputs):
                        if not checked_ids:
                            ids.add(index, raw)
                        item = _as_input(index, raw)
                        await limiter.acquire()
                        tg.start_soon(run, index, item, limiter, calls, overhead, results)
                        index += 1
                except Exception as exc:  # a bad input or a failing input iterator
                    failure = exc  # the inputs already started still finish first
            if failure is not None:
                await results.send(failure)

    async def run(
        index: int, item: ExtractInput, limiter: anyio.Semaphore, calls: anyio.Semaphore,
        overhead: int, results: ObjectSendStream[ExtractResult | BaseException],
    ) -> None:
        try:
            # live calls go first at the rate governor; batch requests know their input
            with request_priority("batch"), input_scope(item.id):
                result = await _extract_input(agent, index, item, output, calls, overhead,
                                              settings)
            result = _with_confidence(result, item.text, locators)
        finally:
            limiter.release()
        await results.send(result)

    # The workers run in their own task so that no cancel scope is held across
    # this generator's yields; closing the generator cancels and awaits it.
    supervisor = asyncio.ensure_future(supervise(send))
    pending: dict[int, ExtractResult] = {}
    next_index = 0
    try:
        async with receive:
            async for result in receive:
                if isinstance(result, BaseException):
                    raise result
                if order == "completed":
                    yield result
                    continue
                pending[result.index] = result
                while next_index in pending:
                    yield pending.pop(next_index)
                    next_index += 1
        await supervisor
    finally:
        if not supervisor.done():
            supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await supervisor
        if batch_run is not None:
            await batch_run.aclose()
        if isinstance(agent_or_model, str):  # the model is ours: built from its name here
            await owner.aclose()
