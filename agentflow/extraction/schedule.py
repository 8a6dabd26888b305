"""The scheduler of ``extract_many``: inputs in, one result per input out.

``schedule`` reads the inputs lazily, at most ``concurrency`` at a time,
runs each through the run's ``ExtractionPlan`` in its own task and yields
the results (in input order or as they complete). It owns the run's
bounds (inputs in flight, model calls in flight, results held back), its
halt on a fault that is the run's (``run_wide``) and its clean stop when
the consumer leaves early.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Sequence
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agentflow._anyio_fast import send_soon, stop_task
from agentflow._commit import stray_cancel
from agentflow._exc_text import exception_text
from agentflow._logging import get_logger
from agentflow.agent import ReActAgent
from agentflow.batch_api.model import CURRENT_INPUT
from agentflow.batch_types import ExtractInput, ExtractResult, IdCheck, as_input, async_inputs
from agentflow.errors import StrayCancelError
from agentflow.errors.run_wide import run_wide
from agentflow.extraction.one_call import stray_error
from agentflow.extraction.pipeline import ExtractionPlan
from agentflow.model import Usage
from agentflow.ratelimit.priority import PRIORITY

__all__ = ["WINDOW", "deliver", "failure_place", "schedule"]

_log = get_logger("agentflow.extraction")


WINDOW = 8
"""With ``order="input"``, results held back behind a slow earlier input are
at most ``WINDOW x concurrency``: past that, no new input is started until
the slow one is yielded (memory stays bounded by the concurrency, not the
corpus)."""


def failure_place(exc: BaseException) -> tuple[str, str, int]:
    """A failure's kind and where it was raised: its type's qualified name and
    the file and line of the innermost frame of its traceback (``""``, 0:
    none). Two inputs failing alike (a stage that fails on every input) have
    the same place."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    kind = f"{type(exc).__module__}.{type(exc).__qualname__}"
    if tb is None:
        return kind, "", 0
    return kind, tb.tb_frame.f_code.co_filename, tb.tb_lineno


async def schedule(
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
                    # an async generator is read as it is (closed here all the same): no
                    # generator around it to step through per input
                    stream = inputs if isinstance(inputs, AsyncGenerator) else async_inputs(inputs)
                    async with contextlib.aclosing(stream):
                        async for raw in stream:
                            if not checked_ids:
                                ids.add(index, raw)
                            item = as_input(index, raw)
                            # a free slot taken at once (no coroutine, nor anyio's cancel
                            # check, per input): the next read or a full slot waits
                            try:
                                unyielded.acquire_nowait()
                            except anyio.WouldBlock:
                                await unyielded.acquire()
                            try:
                                limiter.acquire_nowait()
                            except anyio.WouldBlock:
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
                await deliver(results, failure)

    async def run(
        counted: ExtractionPlan, index: int, item: ExtractInput, limiter: anyio.Semaphore,
        calls: anyio.Semaphore, results: MemoryObjectSendStream[ExtractResult | BaseException],
    ) -> None:
        try:
            # live calls go first at the rate governor; batch requests know their input
            # (``request_priority("batch")`` and ``input_scope(item.id)``, set and reset
            # here: no scope objects per input)
            priority, current = PRIORITY.set("batch"), CURRENT_INPUT.set(item.id)
            try:
                result = await counted.run(index, item, calls)
            finally:
                CURRENT_INPUT.reset(current)
                PRIORITY.reset(priority)
        except Exception as exc:  # a stage before or after the call that failed on this input
            # (the call's own failures are its record already): this input's failed record,
            # never the run's end as an ExceptionGroup; the run's fault is still the run's
            place = failure_place(exc)
            if place in logged:  # its traceback is in the log already: one line
                _log.error("extract.input_failed", input_id=item.id, error=place[0],
                           message=exception_text(exc), traceback="logged before")
            else:
                logged.add(place)
                _log.exception("extract.input_failed", input_id=item.id)
            result = ExtractResult(index, item.id, None, exc, Usage(), 0, 0.0)
        except asyncio.CancelledError as exc:  # the run's cancellation, or code's own?
            if not stray_cancel(exc):
                raise
            # raised by code, not asked for: this input's failure, never a lost record
            result = ExtractResult(index, item.id, None, stray_error(item.id, exc), Usage(), 0,
                                   0.0)
        finally:
            computing.pop(index, None)
            limiter.release()
        if result.error is not None and not halted and run_wide(result.error) is not None:
            # every input would meet it
            halted.append(index)
            stopping.extend(computing.values())
            for other in stopping:  # their requests stop with them
                other.cancel()
        try:  # ``deliver``, inline: room in the buffer (or a receiver waiting) takes it at once
            results.send_nowait(result)
        except anyio.WouldBlock:
            await deliver(results, result)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the consumer has gone: nobody is waiting for it
        del unfinished[index]

    # The workers run in their own task so that no cancel scope is held across
    # this generator's yields; closing the generator cancels and awaits it.
    unfinished: dict[int, str] = {}  # input index -> id, started and not yet delivered
    computing: dict[int, asyncio.Task[None]] = {}  # input index -> its worker, until it has
    # its result: cancelled when another input meets the run's fault
    logged: set[tuple[str, str, int]] = set()  # failure_place of each failure whose
    # traceback was logged: a stage that fails on every input logs it once
    halted: list[int] = []  # the input that met the run's fault, once one has
    stopping: list[asyncio.Task[None]] = []  # the workers cancelled then: a record one of
    # them still makes (its cancellation came too late, or its code went on) is yielded
    supervisor = asyncio.ensure_future(supervise(send))
    pending: dict[int, ExtractResult] = {}
    next_index = 0
    finished = False
    try:  # the stream read here (``_anyio_fast.produced``, inline: no generator per result)
        while True:
            try:  # ``receive_soon``, inline: a buffered result is taken with no coroutine
                result = receive.receive_nowait()
            except anyio.WouldBlock:
                try:
                    result = await receive.receive()
                except anyio.EndOfStream:
                    break
            except anyio.EndOfStream:
                break
            if isinstance(result, BaseException):
                raise result
            fault = run_wide(result.error) if result.error is not None else None
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
        finished = True
        await supervisor
    finally:  # closed early, or a fault: the workers stop before we return
        try:
            if not finished or not supervisor.done():
                await stop_task(supervisor)
        finally:
            receive.close()
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


async def deliver(results: MemoryObjectSendStream[ExtractResult | BaseException],
                   item: ExtractResult | BaseException) -> None:
    """Send ``item`` to the consumer; when the consumer has gone (the
    generator was closed early), it is dropped: nobody is waiting for it."""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await send_soon(results, item)
