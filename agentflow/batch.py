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
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from anyio.abc import ObjectSendStream

from agentflow.agent import ReActAgent
from agentflow.events import Complete
from agentflow.extraction.grounding import Grounded
from agentflow.messages import Msg
from agentflow.model import ChatModel, Usage
from agentflow.state import AgentState

__all__ = ["ExtractInput", "ExtractResult", "extract_many"]


@dataclass(frozen=True, slots=True)
class ExtractInput:
    """One input: an id (unique within the batch) and its text."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class ExtractResult:
    """The outcome of one input.

    Attributes:
        index: position of the input in the batch (from 0).
        id: the input's id.
        output: the validated output, or ``None``.
        error: the exception (a ``StructuredOutputError``, a ``ProviderError``...)
            when there is no output.
        usage: tokens and model requests spent on this input.
        attempts: model requests made for this input.
        duration: wall-clock seconds from start to end of this input's call.
        spans: field path -> ``[(start, end)]`` character offsets of each
            grounded value in the input text (``agentflow.extraction.grounding``).
    """

    index: int
    id: str
    output: Any
    error: Exception | None
    usage: Usage
    attempts: int
    duration: float
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether a validated output was produced."""
        return self.error is None


InputLike = str | ExtractInput | tuple[str, str]


def _as_input(index: int, item: InputLike) -> ExtractInput:
    if isinstance(item, ExtractInput):
        return item
    if isinstance(item, str):
        return ExtractInput(str(index), item)
    if isinstance(item, tuple) and len(item) == 2:
        return ExtractInput(str(item[0]), str(item[1]))
    raise TypeError(
        f"input {index} is a {type(item).__name__}; expected str, (id, text) or ExtractInput"
    )


async def _aiter(inputs: Iterable[InputLike] | AsyncIterable[InputLike]) -> AsyncIterator[
    InputLike
]:
    if isinstance(inputs, AsyncIterable):
        async for item in inputs:
            yield item
    else:
        for item in inputs:
            yield item


async def _extract_one(
    agent: ReActAgent, index: int, item: ExtractInput, output: Any,
    ground: bool | Grounded | None = None,
) -> ExtractResult:
    start = time.perf_counter()
    usage = Usage()
    spans: dict[str, list[tuple[int, int]]] = {}
    try:
        complete: Complete | None = None
        async with contextlib.aclosing(
            agent.stream(Msg.user(item.text), output, state=AgentState(), ground=ground)
        ) as events:
            async for event in events:
                if isinstance(event, Complete):
                    complete = event
        assert complete is not None
        usage = complete.usage
        value = complete.message.output  # raises StructuredOutputError when there is none
        spans = dict(complete.spans)
        error: Exception | None = None
    except Exception as exc:  # every failure becomes this input's result
        value, error = None, exc
    return ExtractResult(
        index, item.id, value, error, usage, usage.requests, time.perf_counter() - start, spans
    )


async def extract_many(
    agent_or_model: ReActAgent | ChatModel | str,
    inputs: Iterable[InputLike] | AsyncIterable[InputLike],
    output: Any,
    *,
    concurrency: int = 8,
    order: Literal["input", "completed"] = "input",
    instructions: str | None = None,
    ground: bool | Grounded | None = None,
) -> AsyncIterator[ExtractResult]:
    """Extract ``output`` from every input, concurrently.

    Args:
        agent_or_model: an agent, or a model (object or ``"vendor:model"``) for
            which a tool-less agent is built with ``instructions`` as system prompt.
        inputs: str (id = index), ``(id, text)`` or ``ExtractInput`` items;
            a sync or async iterable, consumed lazily.
        output: the output type.
        concurrency: calls in flight at most (>= 1).
        order: ``"input"`` yields in input order, ``"completed"`` as results arrive.
        instructions: system prompt when a model is given (ignored for an agent).
        ground: ground every free-text string of each output in its input
            (``True`` or a ``Grounded``); ``None`` keeps the agent's setting.
            Fields marked ``Grounded()`` are grounded either way; each
            result's ``spans`` says where the grounded values are.

    Yields:
        One ``ExtractResult`` per input.

    Raises:
        ValueError: ``concurrency`` < 1 or unknown ``order``.
        TypeError: an input of an unsupported type (raised when it is reached).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if order not in ("input", "completed"):
        raise ValueError(f"order must be 'input' or 'completed', got {order!r}")
    agent = (
        agent_or_model
        if isinstance(agent_or_model, ReActAgent)
        else ReActAgent("extract", agent_or_model, sys_prompt=instructions)
    )
    send, receive = anyio.create_memory_object_stream[ExtractResult | BaseException](
        max_buffer_size=concurrency
    )

    async def supervise(results: ObjectSendStream[ExtractResult | BaseException]) -> None:
        async with results:
            failure: Exception | None = None
            limiter = anyio.Semaphore(concurrency)
            async with anyio.create_task_group() as tg:
                index = 0
                try:
                    async for raw in _aiter(inputs):
                        item = _as_input(index, raw)
                        await limiter.acquire()
                        tg.start_soon(run, index, item, limiter, results)
                        index += 1
                except Exception as exc:  # a bad input or a failing input iterator
                    failure = exc  # the inputs already started still finish first
            if failure is not None:
                await results.send(failure)

    async def run(
        index: int, item: ExtractInput, limiter: anyio.Semaphore,
        results: ObjectSendStream[ExtractResult | BaseException],
    ) -> None:
        try:
            result = await _extract_one(agent, index, item, output, ground)
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
