"""The vendor-neutral part of the fakes' batch APIs: the jobs, their lifecycle
over polls, and how each request of a job turns out. Each vendor fake
(``AnthropicFake``, ``GeminiFake``) renders them in its own wire format.

A job answers ``in progress`` to ``BatchScript.polls`` polls, then ends:
every request runs through the fake's live path (its ``check`` refusals,
then the next script item, rendered by ``render_json``), unless the script
says it was errored, cancelled or expired. ``submitted`` counts each
``custom_id`` every time a batch carrying it is created (the runner's
no-double-spend tests read it), ``executed`` each one that ran and was
answered (what the vendor bills).
"""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .base import FakeError, FakeReply

Outcome = Literal["errored", "expired", "canceled"]


@dataclass
class BatchScript:
    """How the fake's batches behave (set before or while a batch runs).

    Attributes:
        polls: status polls answered "in progress" before a batch ends.
        pending_polls: of those, the first ones answered "pending"/"queued"
            (vendors that have such a state).
        outcomes: ``custom_id`` -> a request that does not run normally
            (``"errored"``: a server error; ``"expired"``, ``"canceled"``).
        expire: the batch's window passes: it ends ``expired`` at its end, and
            only its first ``finished`` requests ran.
        expire_batches: with ``expire``, only the first this many batches of
            the fake expire (``None``: all).
        finished: with ``expire`` or a cancel: how many requests (in the order
            sent) ran before.
        order: the order of the results: ``"reverse"`` (default: never the
            order sent), ``"shuffle"`` (seeded) or ``"sent"``.
        garbage: add a result line whose ``custom_id`` no request has, and a
            line that is not JSON.
        fail: the whole batch fails with this message (vendors with a
            failed-batch state).
        poll_errors: errors answered to the next polls, in order, before the
            status (429, 5xx...).
        create_errors: errors answered to the next batch creations: a 429 or
            503 refuses it (nothing created), any other status comes after
            the batch was created (as a server failing mid-request).
    """

    polls: int = 2
    pending_polls: int = 1
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    expire: bool = False
    expire_batches: int | None = None
    finished: int = 0
    order: Literal["reverse", "shuffle", "sent"] = "reverse"
    garbage: bool = False
    fail: str | None = None
    poll_errors: deque[FakeError] = field(default_factory=deque)
    create_errors: deque[FakeError] = field(default_factory=deque)


@dataclass
class Ran:
    """A request that ran: ``reply`` (the whole reply JSON) or ``error``
    (status and vendor error body)."""

    reply: Any = None
    error: FakeError | None = None


@dataclass
class FakeBatch:
    """One batch job of a fake."""

    id: str
    requests: list[tuple[str, Any]]
    """``(custom_id, request body)`` in the order sent."""
    context: Any = None
    """What the vendor needs to render the requests (model name, headers)."""
    polls: int = 0
    cancel_requested: bool = False
    cancel_polled: bool = False
    ended: bool = False
    state: str = "running"
    """``"pending"``, ``"running"``, ``"cancelling"``, then ``"ended"``,
    ``"expired"``, ``"cancelled"`` or ``"failed"``."""
    results: list[tuple[str, Ran | Outcome]] = field(default_factory=list)
    raw: Any = None
    """The creating request's body, as sent."""
    index: int = 0
    """1 for the fake's first batch, 2 for the next..."""


class BatchJobs:
    """The batches of one fake server.

    Args:
        run: how a request runs when the batch ends: ``(body, context) ->
            Ran`` (the vendor fake's live path).
    """

    def __init__(self, run: Callable[[Any, Any], Ran]) -> None:
        self.script = BatchScript()
        self.jobs: dict[str, FakeBatch] = {}
        self.submitted: Counter[str] = Counter()
        """``custom_id`` -> times submitted in a batch."""
        self.executed: Counter[str] = Counter()
        """``custom_id`` -> times it ran and was answered (what the vendor bills)."""
        self.polls = 0
        """Status polls received (errors included)."""
        self.creations = 0
        """Batch creation requests received (errors included)."""
        self._run = run
        self._next = 0

    def create(self, prefix: str, requests: list[tuple[str, Any]], context: Any,
               raw: Any = None) -> FakeBatch:
        """A new batch of ``requests`` (counted in ``submitted``)."""
        self._next += 1
        job = FakeBatch(f"{prefix}{self._next:06d}", requests, context, raw=raw,
                        index=self._next)
        job.state = "pending" if self.script.pending_polls else "running"
        self.submitted.update(cid for cid, _ in requests)
        self.jobs[job.id] = job
        return job

    def poll(self, job_id: str) -> FakeBatch | FakeError | None:
        """Advance a job by one poll; a scripted poll error instead, or
        ``None`` for an unknown id."""
        self.polls += 1
        if self.script.poll_errors:
            return self.script.poll_errors.popleft()
        job = self.jobs.get(job_id)
        if job is None:
            return None
        if job.ended:
            return job
        job.polls += 1
        if job.cancel_requested:
            if job.cancel_polled:  # one poll sees it cancelling, the next ended
                self._end(job, "cancelled")
            job.cancel_polled = True
        elif job.polls > self.script.polls:
            limit = self.script.expire_batches
            expire = self.script.expire and (limit is None or job.index <= limit)
            self._end(job, "expired" if expire else "failed" if self.script.fail else "ended")
        elif job.polls > self.script.pending_polls:
            job.state = "running"
        return job

    def cancel(self, job_id: str) -> FakeBatch | None:
        """Ask a job to cancel (it ends cancelled on a later poll)."""
        job = self.jobs.get(job_id)
        if job is not None and not job.ended:
            job.cancel_requested, job.state = True, "cancelling"
        return job

    def _end(self, job: FakeBatch, state: str) -> None:
        job.ended, job.state = True, state
        if state == "failed":
            return
        script = self.script
        results: list[tuple[str, Ran | Outcome]] = []
        for i, (cid, body) in enumerate(job.requests):
            if state in ("expired", "cancelled") and i >= script.finished:
                results.append((cid, "expired" if state == "expired" else "canceled"))
            elif cid in script.outcomes:
                results.append((cid, script.outcomes[cid]))
            else:
                ran = self._run(body, job.context)
                if ran.error is None:
                    self.executed[cid] += 1
                results.append((cid, ran))
        if script.order == "reverse":
            results.reverse()
        elif script.order == "shuffle":
            random.Random(len(results)).shuffle(results)
        job.results = results


def creation_error(jobs: BatchJobs) -> tuple[FakeError | None, bool]:
    """The scripted error of this creation, if any, and whether the batch is
    created anyway (a failure after the fact, not a refusal)."""
    jobs.creations += 1
    if not jobs.script.create_errors:
        return None, True
    error = jobs.script.create_errors.popleft()
    return error, error.status not in (429, 503, 529)


def next_item(server: Any, body: Any) -> FakeReply | FakeError:
    """The fake's next scripted answer to ``body`` (script, then default), as
    the live handler takes it."""
    if server.script:
        item = server.script.popleft()
    elif server.default is not None:
        item = server.default
    else:
        return FakeError(500, {"error": {"message": "fake: script empty"}})
    if callable(item) and not isinstance(item, FakeReply | FakeError):
        item = item(body)
    assert isinstance(item, FakeReply | FakeError)
    return item
