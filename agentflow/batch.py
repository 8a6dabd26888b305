"""Concurrent structured extraction over many inputs.

``extract_many`` runs one call per input, at most ``concurrency`` at a time,
each on its own fresh ``AgentState``, and yields exactly one ``ExtractResult``
per input: its output, or the typed error that explains why there is none.
A failing input never stops the others and never disappears, unless its
fault is the run's (a wrong key, a spent quota: ``same_for_every_input``),
which every other input would meet too: then nothing new starts and the
iteration raises it::

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
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Sequence,
)
from typing import Any, Literal, TypeVar, overload

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from typing_extensions import Unpack

from agentflow._anyio_fast import produced, send_soon
from agentflow._commit import stray_cancel
from agentflow.agent import ReActAgent
from agentflow.batch_api.mode import Mode, start_batch_mode
from agentflow.batch_api.model import input_scope
from agentflow.batch_api.runner import BatchSettings
from agentflow.batch_types import (
    ExtractInput,
    ExtractOptions,
    ExtractResult,
    IdCheck,
    UniqueIds,
    _aiter,
    _as_input,
    check_inputs,
)
from agentflow.batch_types import InputLike as InputLike  # re-exported: agentflow.sync reads it
from agentflow.errors import StrayCancelError
from agentflow.errors._run_wide import run_wide
from agentflow.extraction.budget import DEFAULT_CHUNKING, Chunking
from agentflow.extraction.chunked import ChunkProgress
from agentflow.extraction.pipeline import ExtractionPlan, check_plan, plan_extraction, stray_error
from agentflow.extraction.pipeline import _prompt_overhead as _prompt_overhead  # tests read it
from agentflow.grounding import Grounded
from agentflow.model import ChatModel, GenerateOptions, Usage
from agentflow.output.examples import Example
from agentflow.ratelimit import request_priority

__all__ = ["ExtractInput", "ExtractOptions", "ExtractResult", "UniqueIds", "extract_many"]

OutT = TypeVar("OutT")


@overload
def extract_many(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike] | UniqueIds,
    output: type[OutT],
    **options: Unpack[ExtractOptions],
) -> AsyncGenerator[ExtractResult[OutT], None]: ...


@overload
def extract_many(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike] | UniqueIds,
    output: Any,
    **options: Unpack[ExtractOptions],
) -> AsyncGenerator[ExtractResult, None]: ...


async def extract_many(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike] | UniqueIds,
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
) -> AsyncGenerator[ExtractResult, None]:
    """Extract ``output`` from every input, concurrently.

    Args:
        agent_or_model: an agent, or a model (object or ``"vendor:model"``) for
            which a tool-less agent is built with ``instructions`` as system prompt.
            A model given by name is closed when the iteration ends; an agent
            or model object stays open (its owner closes it).
        inputs: str (id = index), ``(id, text)`` (the text a ``str``; the id
            a ``str``, or a value whose ``str()`` names it) or ``ExtractInput`` items;
            a sync or async iterable, consumed lazily; wrapped in ``UniqueIds``
            when the producer guarantees unique ids (no id is then kept to
            check repeats: memory does not grow with the stream).
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
            other chunks' merged output, with the missing ranges in ``chunks``;
            a document (or chunk) whose optional top-level fields' values
            are not in it after the retries keeps its other fields, those
            null and flagged (``ExtractResult.dropped``, why;
            ``agentflow.extraction.dropped``). Without it, only values the
            document writes that a check refused (their place or edges) are
            dropped so; an invented one fails the record.
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
        ``EmptyDocumentError`` result without a model call. An input whose
        call raised a ``CancelledError`` nobody asked for (code inside it,
        while the run was not being cancelled) yields a ``StrayCancelError``
        result; the others carry on.

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
            documents.
        InvalidInputError: (a ``TypeError``) an input of an unsupported type, an
            ``(id, text)`` whose text is not a ``str`` (``None``, bytes: decode
            them first; never converted with ``str()``) or whose id is ``None``
            or bytes, naming the input and the type: before any request for a
            collection, for a lazy iterable when it is reached (the inputs
            already started finish first).
        InvalidExampleError: an example does not fit ``output`` (before any
            input is read).
        BatchUnavailableError: ``mode="batch"`` on a model without a batch API
            (before any request).
        StrayCancelError: reading ``inputs`` raised a ``CancelledError``
            nobody asked for (after the inputs already started finish), or
            inputs started ended with no record (their work cancelled on its
            own: the records of the others are yielded first); a run never
            ends as if complete with records missing.
        AgentflowError: one whose class says ``same_for_every_input`` (a wrong
            key ``AuthenticationError``, a spent balance or daily limit
            ``QuotaExceededError``, a model the vendor does not have
            ``NotFoundError`` or its server cannot hold ``OutOfMemoryError``,
            a closed model ``ModelClosedError``, other misuse; also as the
            cause of a long document's ``ChunkFailedError``): the fault is the
            run's, not one input's, so the run stops at the first input that
            meets it, as ``agentflow extract`` does (exit 2), never one failed
            record per input. No
            input starts after it; the inputs in flight are cancelled (their
            requests with them); the results that finished are yielded
            (before it; with ``order="input"``, those held behind an
            unfinished earlier input too, in input order; and an input in
            flight that finished all the same), then the typed error is
            raised from the iteration.
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
    check_plan(output, chunking)
    unique = isinstance(inputs, UniqueIds)  # the producer vouches: no id kept to check
    if isinstance(inputs, UniqueIds):
        inputs = inputs.inputs
    checked_ids = unique or (isinstance(inputs, Collection) and not isinstance(inputs, Iterator))
    if checked_ids and not unique:  # a collection can be read twice: all checked up front
        check_inputs(inputs)  # type: ignore[arg-type]
    agent = (
        agent_or_model
        if isinstance(agent_or_model, ReActAgent)
        else ReActAgent("extract", agent_or_model, sys_prompt=instructions,
                        options=GenerateOptions(logprobs=True))  # where the model gives them
    )
    owner = agent
    plan = plan_extraction(agent, output, chunking=chunking, passes=passes,
                           allow_partial=allow_partial, max_chars=max_chars,
                           on_progress=on_progress, ground=ground, examples=examples)
    batch_run, inputs = await start_batch_mode(agent, inputs, mode, batch, concurrency)
    if batch_run is not None:  # first turns wait in vendor batches: keep many inputs in flight
        agent, concurrency = batch_run.agent, batch_run.concurrency
    try:
        async with contextlib.aclosing(
            _schedule(plan, agent, inputs, concurrency, order, checked_ids)
        ) as results:  # closed here, not later by the loop: the workers stop before we return
            async for result in results:
                yield result
    finally:
        if batch_run is not None:
            await batch_run.aclose()
        if isinstance(agent_or_model, str):  # the model is ours: built from its name here
            await owner.aclose()


WINDOW = 8
"""With ``order="input"``, results held back behind a slow earlier input are
at most ``WINDOW x concurrency``: past that, no new input is started until
the slow one is yielded (memory stays bounded by the concurrency, not the
corpus)."""


async def _schedule(
    plan: ExtractionPlan, agent: ReActAgent, inputs: Iterable[Any] | AsyncIterable[Any],
    concurrency: int, order: str, checked_ids: bool,
) -> AsyncGenerator[ExtractResult, None]:
    """Run ``plan`` over ``inputs``, at most ``concurrency`` inputs (and model
    calls) at once, inputs read only as slots free up; yields each result.

    Closing this generator early (``break``, cancellation, an exception in the
    consumer) cancels the workers and waits for them to stop before it
    returns; a worker whose result has nowhere to go drops it quietly.

    A result whose error is the run's (``run_wide``) halts the run: nothing
    starts after it, the workers still computing are cancelled, the results
    received before it are yielded (held-back ones too), and those that
    arrive after it (a cancelled worker that still finished), then it is raised.
    """
    send, receive = anyio.create_memory_object_stream[ExtractResult | BaseException](
        max_buffer_size=concurrency
    )
    # inputs started but not yet yielded: bounds what order="input" holds back
    # fast_acquire: a free slot is taken without a trip through the event loop
    unyielded = anyio.Semaphore(concurrency * WINDOW if order == "input" else concurrency * 2,
                                fast_acquire=True)

    async def supervise(results: MemoryObjectSendStream[ExtractResult | BaseException]) -> None:
        async with results:
            failure: Exception | None = None
            limiter = anyio.Semaphore(concurrency, fast_acquire=True)  # inputs in flight
            # model calls in flight (chunks included)
            calls = anyio.Semaphore(concurrency, fast_acquire=True)
            counted: ExtractionPlan | None = None  # counted at the first input: a run
            # with nothing to do starts no model. asyncio's task group: one task per
            # input costs a third of anyio's start_soon (no cancel scope per task);
            # closing cancels the workers all the same
            async with asyncio.TaskGroup() as tg:
                index = 0
                ids = IdCheck()  # a lazy iterable: each id checked as it is read
                try:
                    async with contextlib.aclosing(_aiter(inputs)) as stream:
                        async for raw in stream:
                            if not checked_ids:
                                ids.add(index, raw)
                            item = _as_input(index, raw)
                            await unyielded.acquire()
                            await limiter.acquire()
                            if counted is None:
                                counted = await plan.counted(agent)
                            if halted:  # an input met the run's fault: nothing new starts
                                break
                            unfinished[index] = item.id
                            computing[index] = tg.create_task(
                                run(counted, index, item, limiter, calls, results))
                            index += 1
                except Exception as exc:  # a bad input or a failing input iterator
                    failure = exc  # the inputs already started still finish first
                except asyncio.CancelledError as exc:  # the run's cancellation, or code's own?
                    if not stray_cancel(exc):
                        raise
                    failure = StrayCancelError(  # raised by the inputs' iterator: a failure
                        f"reading the inputs raised a CancelledError ({exc or 'no message'}) "
                        f"while the run was not being cancelled, after {index} inputs")
                    failure.__cause__ = exc
            if failure is not None:
                await _deliver(results, failure)

    async def run(
        counted: ExtractionPlan, index: int, item: ExtractInput, limiter: anyio.Semaphore,
        calls: anyio.Semaphore, results: MemoryObjectSendStream[ExtractResult | BaseException],
    ) -> None:
        try:
            # live calls go first at the rate governor; batch requests know their input
            with request_priority("batch"), input_scope(item.id):
                result = await counted.run(index, item, calls)
        except asyncio.CancelledError as exc:  # the run's cancellation, or code's own?
            if not stray_cancel(exc):
                raise
            # raised by code, not asked for: this input's failure, never a lost record
            result = ExtractResult(index, item.id, None, stray_error(item.id, exc), Usage(), 0,
                                   0.0)
        finally:
            computing.pop(index, None)
            limiter.release()
        if not halted and run_wide(result.error) is not None:  # every input would meet it
            halted.append(index)
            stopping.extend(computing.values())
            for other in stopping:  # their requests stop with them
                other.cancel()
        await _deliver(results, result)
        del unfinished[index]

    # The workers run in their own task so that no cancel scope is held across
    # this generator's yields; closing the generator cancels and awaits it.
    unfinished: dict[int, str] = {}  # input index -> id, started and not yet delivered
    computing: dict[int, asyncio.Task[None]] = {}  # input index -> its worker, until it has
    # its result: cancelled when another input meets the run's fault
    halted: list[int] = []  # the input that met the run's fault, once one has
    stopping: list[asyncio.Task[None]] = []  # the workers cancelled then: a record one of
    # them still makes (its cancellation came too late, or its code went on) is yielded
    supervisor = asyncio.ensure_future(supervise(send))
    pending: dict[int, ExtractResult] = {}
    next_index = 0
    async with contextlib.aclosing(produced(receive, supervisor)) as results:
        async for result in results:
            fault = run_wide(result.error)
            if fault is not None:  # the run's, not this input's: what finished, then it
                late = await _late_records(receive, stopping)  # ("completed": none pending)
                pending.update((record.index, record) for record in late)
                for index in sorted(pending) if order == "input" else list(pending):
                    yield pending.pop(index)
                raise fault
            if order == "completed":
                unyielded.release()
                yield result
                continue
            pending[result.index] = result
            while next_index in pending:
                unyielded.release()
                yield pending.pop(next_index)
                next_index += 1
    if unfinished:  # a worker ended with no result (its task cancelled on its own)
        for index in sorted(pending):  # the later inputs' records are not lost with it
            yield pending.pop(index)
        lost = ", ".join(repr(i) for i in list(unfinished.values())[:5])
        more = f" and {len(unfinished) - 5} more" if len(unfinished) > 5 else ""
        raise StrayCancelError(
            f"{len(unfinished)} inputs ended with no record: their work was cancelled while "
            f"the run was not (inputs {lost}{more}); the run is incomplete")


async def _late_records(
    receive: MemoryObjectReceiveStream[ExtractResult | BaseException],
    stopping: Sequence[asyncio.Task[None]],
) -> list[ExtractResult]:
    """The records sent after the run's fault (read from ``receive`` once the
    consumer has the fault): what is buffered, and what the workers cancelled
    at the fault (``stopping``) still make, each waited for until it has
    ended (a cancelled one ends at once; one whose code went on ends with
    its record). Another input's run-wide fault, or a failure reading the
    inputs, is not a record: the first fault is the one raised."""
    late: list[ExtractResult] = []
    while True:
        try:  # a sender waiting for room is taken here too
            item = receive.receive_nowait()
        except anyio.WouldBlock:
            running = [task for task in stopping if not task.done()]
            if not running:
                return late
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            continue
        except anyio.EndOfStream:
            return late
        if isinstance(item, ExtractResult) and run_wide(item.error) is None:
            late.append(item)


async def _deliver(results: MemoryObjectSendStream[ExtractResult | BaseException],
                   item: ExtractResult | BaseException) -> None:
    """Send ``item`` to the consumer; when the consumer has gone (the
    generator was closed early), it is dropped: nobody is waiting for it."""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await send_soon(results, item)
