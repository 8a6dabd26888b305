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
``agentflow.batch_types`` (importable from here); the scheduler in
``agentflow.extraction.schedule``, each document's pipeline in
``agentflow.extraction.pipeline``.
"""

from __future__ import annotations

import contextlib
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, Literal, TypeVar, overload

from typing_extensions import Unpack

from agentflow._arguments import (
    check_choice,
    check_flag,
    check_function,
    check_int,
    check_optional,
    wrong_type,
)
from agentflow.agent import ReActAgent
from agentflow.batch_api.mode import Mode, start_batch_mode
from agentflow.batch_api.runner import BatchSettings
from agentflow.batch_types import (
    ExtractInput,
    ExtractOptions,
    ExtractResult,
    UniqueIds,
    check_inputs,
)
from agentflow.batch_types import InputLike as InputLike  # re-exported: agentflow.sync reads it
from agentflow.extraction.budget import DEFAULT_CHUNKING, Chunking
from agentflow.extraction.chunked import ChunkProgress
from agentflow.extraction.pipeline import check_plan, plan_extraction
from agentflow.extraction.schedule import WINDOW as WINDOW  # re-exported: tests read it
from agentflow.extraction.schedule import schedule
from agentflow.grounding import Grounded
from agentflow.model import ChatModel, GenerateOptions
from agentflow.output.examples import Example

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
        ArgumentValueError: (a ``ValueError``) ``concurrency`` or ``passes`` < 1,
            ``max_chars`` < 1 or unknown ``order``.
        ArgumentTypeError: (a ``TypeError``) an argument of the wrong type
            (``concurrency="4"``, ``passes=2.5``, ``chunking="auto"``...), naming it,
            what it must be and what it got (``agentflow._arguments``).
        DuplicateInputIdError: two inputs share an id (naming it and both positions):
            before any request for a collection (list, tuple...); for a lazy
            iterable when the repeat is read (it is never sent; the inputs
            already started finish first). Plain ``str`` inputs get their
            position as id, never a repeat among themselves.
        SchemaError: ``output`` is no output type (a value, pydantic's
            ``BaseModel`` itself, a class no JSON Schema describes), before
            any input is read.
        UsageError: ``chunking.items`` names no top-level list field of ``output``.
        ArgumentTypeError: ``inputs`` is one ``str`` (or ``bytes``) rather than an iterable of
            documents, or a mapping (its keys would be the documents: pass
            ``.items()`` for ``(id, text)`` pairs).
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
        raise wrong_type("inputs", "an iterable of documents", inputs, secret=True,
                         hint="wrap one document in a list: [text]")  # its text never shown
    if isinstance(inputs, Mapping):  # iterated, its keys were the documents, its texts unread
        raise wrong_type("inputs", "an iterable of documents", inputs, secret=True,
                         hint="iterating a mapping gives its keys only: pass inputs.items() "
                         "for (id, text) pairs")
    check_int("concurrency", concurrency, 1)
    check_choice("order", order, ("input", "completed"))
    check_int("passes", passes, 1)
    check_int("max_chars", max_chars, 1, optional=True)
    check_optional("instructions", instructions, str, "a str")
    check_optional("ground", ground, (bool, Grounded), "True, False, a Grounded()")
    check_optional("chunking", chunking, Chunking, "a Chunking()")
    check_flag("allow_partial", allow_partial)
    check_function("on_progress", on_progress, optional=True)
    check_optional("batch", batch, BatchSettings, "a BatchSettings")
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
            schedule(plan, agent, inputs, concurrency, order, checked_ids)
        ) as results:  # closed here, not later by the loop: the workers stop before we return
            async for result in results:
                yield result
    finally:
        if batch_run is not None:
            await batch_run.aclose()
        if isinstance(agent_or_model, str):  # the model is ours: built from its name here
            await owner.aclose()
