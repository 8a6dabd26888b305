"""The contract between the batch runner and a vendor's batch API.

A vendor batch API (OpenAI Batch, Anthropic Message Batches, Gemini batch
mode) takes many whole (non-streaming) requests at once, runs them within a
window (24 h for all three) at about half the live price, and returns one
result per request, matched by a caller-chosen ``custom_id`` (never by
position: results come back in any order).

The runner builds each request exactly as the live adapter would
(``BatchCapable.batch_request``), hands them to ``BatchAPI.submit`` in groups
that respect ``BatchLimits``, polls ``BatchAPI.status`` with backoff, reads
``BatchAPI.results`` and turns each successful reply into ``ModelChunk``s with
``BatchCapable.parse_batch_reply``, so the engine validates, grounds and
re-asks exactly as for a live reply. Vendor wire details live in each vendor's
module under ``agentflow.providers``; nothing here names a vendor.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ToolSpec

__all__ = [
    "BatchAPI",
    "BatchCapable",
    "BatchFinder",
    "BatchItemError",
    "BatchLimits",
    "BatchRequest",
    "BatchResult",
    "BatchState",
    "BatchStatus",
]


@dataclass(frozen=True, slots=True)
class BatchRequest:
    """One request of a batch.

    ``custom_id``: the caller's id for the request, unique within the batch
    (OpenAI and Anthropic: ``custom_id``; Gemini: the request's ``key``);
    vendors limit its form (Anthropic: ``^[a-zA-Z0-9_-]{1,64}$``), so the
    runner uses short ASCII ids it maps back to inputs itself.
    ``path``: the live endpoint the request would have gone to, relative to the
    model's base URL (e.g. ``"chat/completions"``), as ``build_request`` gives it.
    ``body``: the live request's JSON body with streaming off.
    """

    custom_id: str
    path: str
    body: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """A vendor's per-batch limits (from its documentation; each vendor module
    cites its source). ``max_requests``: requests per batch; ``max_bytes``:
    bytes of the submitted payload (the JSONL file or request body)."""

    max_requests: int
    max_bytes: int


class BatchState(StrEnum):
    """Where a batch is, in the vendors' common terms.

    ``QUEUED``: accepted, validating or waiting; ``IN_PROGRESS``: running;
    ``FINALIZING``: done running, results being prepared; ``CANCELLING``;
    terminal: ``COMPLETED`` (results readable; single requests may still
    have failed), ``FAILED`` (the batch itself was rejected, e.g. invalid
    input file), ``EXPIRED`` (window passed; results of finished requests may
    still be readable), ``CANCELLED`` (idem).
    """

    QUEUED = "queued"
    IN_PROGRESS = "in_progress"
    FINALIZING = "finalizing"
    CANCELLING = "cancelling"
    COMPLETED = "completed"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """No further transitions: results (if any) can be read."""
        return self in _TERMINAL


_TERMINAL = frozenset(
    {BatchState.COMPLETED, BatchState.FAILED, BatchState.EXPIRED, BatchState.CANCELLED}
)


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """One poll of a batch: its state and request counts (``total``,
    ``succeeded``, ``failed``: requests; ``failed`` counts errored, expired
    and cancelled requests). ``message``: the vendor's reason for a failed
    batch, if any (never carries secrets)."""

    batch_id: str
    state: BatchState
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    message: str | None = None


@dataclass(frozen=True, slots=True)
class BatchItemError:
    """Why one request of a batch has no reply.

    ``kind``: ``"error"`` (the vendor answered with an error: ``status`` is its
    HTTP status when given, ``code``/``message`` its error), ``"expired"`` or
    ``"cancelled"`` (the request never ran: it may be resubmitted without
    paying twice), ``"context_length"`` (an error saying the request is over
    the model's context window: a ``ContextLengthError`` for the caller, never
    resubmitted), ``"gone"`` (its batch no longer exists at the vendor, which
    answers 404 for it: purged after its retention, or created under another
    project or key; whatever it ran cannot be read, so it is submitted again).
    """

    kind: str
    message: str
    code: str | None = None
    status: int | None = None

    @property
    def retryable(self) -> bool:
        """The request never ran, failed transiently (429, 5xx, expired,
        cancelled), or its batch is gone with its results, so submitting it
        again is the only way to a reply (and, but for ``gone``, no double spend)."""
        return self.kind in ("expired", "cancelled", "gone") or (
            self.status is not None and (self.status == 429 or self.status >= 500)
        )


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One request's outcome: exactly one of ``reply`` (the vendor's whole
    reply JSON, as the live non-streaming endpoint returns it, for
    ``BatchCapable.parse_batch_reply``) and ``error`` is set."""

    custom_id: str
    reply: Any = field(default=None, repr=False)
    error: BatchItemError | None = None


class BatchAPI(Protocol):
    """A vendor's batch API, bound to one model's HTTP client.

    Every method raises the same ``ProviderError`` family as live calls
    (``RateLimitError`` on 429, ``ServerError`` on 5xx, ...); the runner
    retries polls with backoff and never resubmits a batch whose submission
    may have succeeded without first checking its journal.
    """

    @property
    def limits(self) -> BatchLimits:
        """Per-batch limits."""
        ...

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Create one batch of ``requests`` (within ``limits``); return its id."""
        ...

    async def status(self, batch_id: str) -> BatchStatus:
        """Poll a batch."""
        ...

    def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """The results of a terminal batch, in the vendor's order (any order);
        lines whose id the vendor garbled are still yielded (the runner drops
        ids it does not know, with a log line)."""
        ...

    async def cancel(self, batch_id: str) -> None:
        """Ask the vendor to cancel a batch (idempotent)."""
        ...


@runtime_checkable
class BatchCapable(Protocol):
    """A ``ChatModel`` whose vendor has a batch API (optional capability; the
    core checks ``isinstance(model, BatchCapable)``, never a vendor name).

    Optional, not a checked member: ``continue_batch_reply(chunks, messages,
    tools, options) -> AsyncIterator[ModelChunk] | None``, a batch reply's
    turn continued live (``chunks`` first) when the vendor paused it, else
    ``None`` (``BatchModel.stream`` sends it under its live-request limit)."""

    def batch_api(self) -> BatchAPI:
        """The batch API on this model's client."""
        ...

    def batch_request(
        self,
        custom_id: str,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
    ) -> BatchRequest:
        """The request the live (non-streaming) call would send, as a batch item."""
        ...

    def parse_batch_reply(
        self, reply: Any, tools: Sequence[ToolSpec] = ()
    ) -> Iterable[ModelChunk]:
        """The chunks of one batch reply, read as the whole live reply to the
        same request would be: ``tools`` are that request's tools (in-band
        tool-call markup in the reply text is read against them, as live)."""
        ...


@runtime_checkable
class BatchFinder(Protocol):
    """Optional capability of a ``BatchAPI``: tag a submission and find the
    batch by its tag later (OpenAI: batch ``metadata`` and ``GET /batches``).

    The runner journals a submission's tag *before* submitting; after a crash
    between the vendor accepting a batch and the journal recording its id, a
    restart finds the batch by tag instead of paying for it twice. Without
    this capability that window (one HTTP round trip) is the only one in which
    a restart may resubmit.
    """

    async def submit(self, requests: Sequence[BatchRequest], *, tag: str | None = None) -> str:
        """As ``BatchAPI.submit``, recording ``tag`` with the batch."""
        ...

    async def find(self, tag: str) -> str | None:
        """The id of the batch submitted with ``tag``, or ``None``."""
        ...
