"""The batch runner: first attempts go to the vendor's batch API, the engine
stays as it is.

``BatchModel`` (``agentflow.batch_api.model``) wraps a ``BatchCapable``
model. Its ``stream()`` for the first
turn of a conversation (no assistant message yet) does not call the live
endpoint: it hands ``batch_request(...)`` to the ``BatchRunner`` and awaits
that request's ``BatchResult``, then yields ``parse_batch_reply(reply, tools)`` as
chunks. Later turns of the same conversation (re-asks after invalid,
ungrounded or prose output) go live, or into a follow-up batch with
``batch_only``. So validation, grounding, forcing and budgets are the
engine's own.

The runner groups requests within the vendor's ``BatchLimits`` (a group is
submitted when full or after ``flush_after`` seconds without a new request),
journals each submission before and after submitting (``journal``), polls
each batch with backoff (429/5xx on a poll are waited out), and resolves
requests by ``custom_id`` only (an unknown id is logged and ignored).
A request whose item failed retryably (expired, cancelled, 429, 5xx) is
resubmitted once in a follow-up batch, never twice; any other failure is a
``BatchRequestError`` for that input. A batch the vendor answers 404 for
(purged, or made under another project or key: a journalled one on rerun) is
*gone*: it is logged with its id, forgotten by the journal, and its requests
without a result are resubmitted the same way (once).

``custom_id``\\ s are a hash of the input id and the request body, so a
restarted run asks for the same ids and finds them in the journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import deque
from dataclasses import dataclass
from typing import Any

import anyio
import orjson

from agentflow._logging import get_logger
from agentflow.batch_api._item_errors import fresh_error, missing_error
from agentflow.batch_api.journal import Journal
from agentflow.batch_api.protocol import (
    BatchAPI,
    BatchFinder,
    BatchItemError,
    BatchRequest,
    BatchResult,
    BatchState,
    BatchStatus,
)
from agentflow.batch_api.settings import BatchProgress, BatchSettings
from agentflow.errors import BatchRequestError, ContextLengthError, NotFoundError, ProviderError
from agentflow.model import (
    Usage,
)

__all__ = ["BatchProgress", "BatchRunner", "BatchSettings"]

_log = get_logger("agentflow.batch_api")

def custom_id_for(input_id: str, request_path: str, body: Any) -> str:
    """A short ASCII id (``^[a-zA-Z0-9_-]{1,64}$``, as Anthropic requires) from
    the input id and the request: the same request of the same input gets the
    same id in every run."""
    digest = hashlib.sha256(orjson.dumps([input_id, request_path, body],
                                         option=orjson.OPT_SORT_KEYS)).hexdigest()
    return f"af-{digest[:40]}"


@dataclass
class _Pending:
    request: BatchRequest
    input_id: str
    future: asyncio.Future[BatchResult]
    submissions: int = 0


class BatchRunner:
    """Submits, journals and polls the batch requests of one run.

    Args:
        api: the vendor's batch API.
        settings: see ``BatchSettings``.
        vendor: named in errors.

    Use as an async context manager (its background tasks end with it).
    """

    def __init__(self, api: BatchAPI, settings: BatchSettings, *, vendor: str = "") -> None:
        self.api = api
        self.settings = settings
        self.vendor = vendor
        self.journal = Journal(settings.journal)
        self.batch_usage = Usage()
        """Tokens of the replies that came from batches (billed at the batch price)."""
        self._pending: dict[str, _Pending] = {}
        self._queue: deque[str] = deque()
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._batch_of: dict[str, list[str]] = {}  # custom_id -> batch ids (oldest first)
        self._batches: dict[str, tuple[str, ...]] = {}  # batch id -> custom_ids
        self._polling: set[str] = set()
        self._results: dict[str, BatchResult] = {}
        self._counts = {"submitted": 0, "completed": 0, "failed": 0}
        self._flusher: asyncio.Task[None] | None = None
        self._resumed = False
        self._resume_lock = asyncio.Lock()

    async def __aenter__(self) -> BatchRunner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop polling and submitting (journalled batches keep running at the
        vendor; a rerun resumes them) and close the API's session."""
        tasks = [*self._tasks, *([self._flusher] if self._flusher else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        aclose = getattr(self.api, "aclose", None)
        if aclose is not None:
            await aclose()

    # -- progress -------------------------------------------------------------------
    def progress(self) -> BatchProgress:
        """The current ``BatchProgress``."""
        running = sum(len(self._batches[b]) for b in self._polling)
        return BatchProgress(self._counts["submitted"], running, self._counts["completed"],
                             self._counts["failed"], len(self._batches))

    def _report(self) -> None:
        if self.settings.on_progress is not None:
            self.settings.on_progress(self.progress())

    # -- resume -------------------------------------------------------------------
    async def _resume(self) -> None:
        """Adopt the journal's batches (rule 3 of ``journal``) before the first request."""
        async with self._resume_lock:  # every request waits until the journal is adopted
            if not self._resumed:
                await self._adopt_journal()
                self._resumed = True

    async def _adopt_journal(self) -> None:
        for sub in self.journal.submissions:
            batch_id = sub.batch_id
            if batch_id is None and isinstance(self.api, BatchFinder):
                try:
                    batch_id = await self.api.find(sub.tag)
                except ProviderError as exc:
                    _log.warning("batch.find_failed", tag=sub.tag, error=str(exc))
                if batch_id is not None:
                    self.journal.submitted(sub.tag, batch_id)
            if batch_id is None:
                _log.warning("batch.never_submitted", tag=sub.tag, requests=len(sub.requests))
                self.journal.abandon(sub.tag)
                continue
            self._adopt(batch_id, tuple(sub.requests))
            self._counts["submitted"] += len(sub.requests)

    def _adopt(self, batch_id: str, custom_ids: tuple[str, ...]) -> None:
        self._batches[batch_id] = custom_ids
        for cid in custom_ids:
            self._batch_of.setdefault(cid, []).append(batch_id)

    # -- requests -----------------------------------------------------------------
    async def request(self, request: BatchRequest, input_id: str) -> Any:
        """The reply to ``request`` from a batch (submitted, or resumed from the
        journal): the vendor's whole reply JSON.

        Raises:
            BatchRequestError: the request has no reply (after at most
                ``max_resubmits`` follow-up submissions of a retryable failure).
            ProviderError: a batch could not be submitted or polled.
        """
        await self._resume()
        cid = request.custom_id
        pending = self._pending.get(cid)
        if pending is None:
            loop = asyncio.get_running_loop()
            pending = _Pending(request, input_id, loop.create_future())
            self._pending[cid] = pending
            known = self._batch_of.get(cid)
            if cid in self._results:  # its batch was read already (a resumed one)
                pending.submissions = len(known or ())
                self._settle(self._results.pop(cid))
            elif known:  # resumed: poll the batch already paid for
                pending.submissions = len(known)
                self._poll_soon(known[-1])
            else:
                self._enqueue(cid)
        result = await asyncio.shield(pending.future)
        return self._reply(result)

    def _reply(self, result: BatchResult) -> Any:
        if result.error is None:
            return result.reply
        error = result.error
        if error.kind == "context_length":  # the provider read it so: typed as live calls
            raise ContextLengthError(error.message, status=error.status, code=error.code,
                                     vendor=self.vendor)
        batches = self._batch_of.get(result.custom_id) or ["?"]
        raise BatchRequestError(
            f"batch request {result.custom_id} failed ({error.kind}): {error.message}",
            kind=error.kind, batch_id=batches[-1], status=error.status, code=error.code,
            vendor=self.vendor)

    def _enqueue(self, cid: str) -> None:
        self._queue.append(cid)
        self._wake.set()
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush_loop())

    async def _flush_loop(self) -> None:
        """Submit queued requests in groups within the limits."""
        while self._queue:
            full = min(self.api.limits.max_requests, self.settings.max_inflight)
            while True:  # wait for a quiet spell, or a full group
                self._wake.clear()
                if len(self._queue) >= full:
                    break
                with anyio.move_on_after(self.settings.flush_after) as scope:
                    await self._wake.wait()
                if scope.cancelled_caught:
                    break
            group = self._take_group()
            if not group:
                continue
            try:
                await self._submit(group)
            except Exception as exc:  # e.g. the journal cannot be written: nobody waits forever
                for cid in group:
                    self._fail(cid, exc)

    def _take_group(self) -> list[str]:
        limits = self.api.limits
        group: list[str] = []
        size = 0
        while self._queue and len(group) < limits.max_requests:
            cid = self._queue[0]
            item = self._pending[cid].request
            line = len(orjson.dumps(dict(item.body))) + len(cid) + 128
            if group and size + line > limits.max_bytes:
                break
            self._queue.popleft()
            group.append(cid)
            size += line
        return group

    async def _submit(self, group: list[str]) -> None:
        sub = self.journal.intend({cid: self._pending[cid].input_id for cid in group})
        requests = [self._pending[cid].request for cid in group]
        try:
            if isinstance(self.api, BatchFinder):
                batch_id = await self.api.submit(requests, tag=sub.tag)
            else:
                batch_id = await self.api.submit(requests)
        except (ProviderError, ValueError) as exc:
            found = None
            if isinstance(self.api, BatchFinder):
                with contextlib.suppress(ProviderError):
                    found = await self.api.find(sub.tag)
            if found is None:
                self.journal.abandon(sub.tag)
                for cid in group:
                    self._fail(cid, exc)
                return
            batch_id = found
        self.journal.submitted(sub.tag, batch_id)  # before the first poll
        self._adopt(batch_id, tuple(group))
        for cid in group:
            self._pending[cid].submissions += 1
        self._counts["submitted"] += len(group)
        _log.info("batch.submitted", batch_id=batch_id, requests=len(group))
        self._poll_soon(batch_id)
        self._report()

    def _fail(self, cid: str, exc: BaseException) -> None:
        pending = self._pending.get(cid)
        if pending is not None and not pending.future.done():
            pending.future.set_exception(fresh_error(exc))  # one object per awaiter
            self._counts["failed"] += 1

    # -- polling ------------------------------------------------------------------
    def _poll_soon(self, batch_id: str) -> None:
        if batch_id in self._polling:
            return
        self._polling.add(batch_id)
        task = asyncio.ensure_future(self._poll(batch_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _poll(self, batch_id: str) -> None:
        delay = self.settings.poll_initial
        status: BatchStatus | None = None
        max_wait = self.settings.max_wait
        until = None if max_wait is None else anyio.current_time() + max_wait
        try:
            while True:
                try:
                    status = await self.api.status(batch_id)
                except NotFoundError as exc:
                    self._gone(batch_id, exc, set())
                    return
                except ProviderError as exc:
                    if not exc.retryable:
                        for cid in self._batches[batch_id]:
                            self._fail(cid, exc)
                        return
                    _log.info("batch.poll_retry", batch_id=batch_id, error=type(exc).__name__)
                    status = None
                if status is not None and status.state.terminal:
                    break
                if until is not None and anyio.current_time() >= until:
                    self._timed_out(batch_id, status)
                    return
                await anyio.sleep(delay)
                delay = min(self.settings.poll_max, delay * self.settings.poll_factor)
            await self._collect(batch_id, status)
        except Exception as exc:  # reading the results failed for good: nobody waits forever
            for cid in self._batches[batch_id]:
                self._fail(cid, exc)
        finally:
            self._polling.discard(batch_id)
            self._report()

    def _timed_out(self, batch_id: str, status: BatchStatus | None) -> None:
        """Fail the requests of ``batch_id``, polled past ``max_wait`` without
        ending (left at the vendor and in the journal: a rerun polls it)."""
        state = status.state.value if status is not None else "unknown"
        _log.warning("batch.poll_timeout", batch_id=batch_id, state=state,
                     max_wait=self.settings.max_wait)
        error = BatchRequestError(
            f"batch {batch_id} did not end within {self.settings.max_wait:g}s of polling "
            f"(BatchSettings.max_wait; last state {state}); it is left at the vendor, and a "
            "run with the same journal polls it again", kind="timeout", batch_id=batch_id,
            vendor=self.vendor)
        for cid in self._batches[batch_id]:
            self._fail(cid, error)

    async def _collect(self, batch_id: str, status: BatchStatus) -> None:
        members = set(self._batches[batch_id])
        seen: set[str] = set()
        if status.state is not BatchState.FAILED:
            try:
                async for result in self.api.results(batch_id):
                    if result.custom_id not in members:
                        _log.warning("batch.unknown_custom_id", batch_id=batch_id,
                                     custom_id=result.custom_id[:80])
                        continue
                    seen.add(result.custom_id)
                    self._settle(result)
            except NotFoundError as exc:  # the results were purged with (or before) the batch
                self._gone(batch_id, exc, seen)
                return
        for cid in sorted(members - seen):
            self._settle(BatchResult(cid, error=missing_error(status)))

    def _gone(self, batch_id: str, exc: NotFoundError, seen: set[str]) -> None:
        """The vendor no longer has ``batch_id`` (or its results): forget it and
        settle its requests without a result as ``gone`` (resubmitted once)."""
        rest = sorted(set(self._batches[batch_id]) - seen)
        _log.warning("batch.gone", batch_id=batch_id, requests=len(rest), error=str(exc))
        self.journal.gone(batch_id)
        error = BatchItemError("gone", f"batch {batch_id} no longer exists at the vendor "
                                       f"({exc}); its results cannot be read", status=404)
        for cid in rest:
            self._settle(BatchResult(cid, error=error))

    def _settle(self, result: BatchResult) -> None:
        cid = result.custom_id
        pending = self._pending.get(cid)
        if (result.error is not None and result.error.retryable and pending is not None
                and pending.submissions <= self.settings.max_resubmits
                and not pending.future.done()):
            _log.info("batch.resubmit", custom_id=cid, kind=result.error.kind)
            self._enqueue(cid)
            return
        if pending is None:  # a resumed batch's request no input asked for (yet)
            self._results[cid] = result
            return
        if pending.future.done():
            return
        self._counts["completed" if result.error is None else "failed"] += 1
        pending.future.set_result(result)

