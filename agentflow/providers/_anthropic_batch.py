"""Anthropic Message Batches (``/v1/messages/batches``): the ``BatchAPI`` of
``AnthropicChatModel``.

Wire facts (docs.anthropic.com/en/docs/build-with-claude/batch-processing,
docs.anthropic.com/en/api/creating-message-batches, .../retrieving-message-batch-results;
the anthropic SDK's ``resources/messages/batches.py`` and ``types/messages/``):

* Create: ``POST /v1/messages/batches`` ``{"requests": [{"custom_id", "params"}]}``,
  ``params`` being a non-streaming Messages request body. ``custom_id``
  matches ``^[a-zA-Z0-9_-]{1,64}$`` and is unique in the batch. At most
  100,000 requests or 256 MB per batch. Returns a ``message_batch``.
* ``message_batch``: ``id``, ``processing_status`` ``in_progress`` |
  ``canceling`` | ``ended``, ``request_counts`` {``processing``,
  ``succeeded``, ``errored``, ``canceled``, ``expired``} (the last four stay 0
  until the batch ends), ``results_url`` (once ended), ``cancel_initiated_at``,
  ``archived_at`` (results no longer available), ``expires_at`` (24 h).
* Poll: ``GET /v1/messages/batches/{id}``; cancel: ``POST .../{id}/cancel``.
* Results: ``GET`` the batch's ``results_url`` (a ``.jsonl`` in any order),
  each line ``{"custom_id", "result": {"type": "succeeded", "message"} |
  {"type": "errored", "error": {"type": "error", "error": {"type", "message"}}}
  | {"type": "canceled"} | {"type": "expired"}}``. A batch has no "failed"
  state: validation errors of a request come back as its ``errored`` result.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import orjson

from agentflow._logging import get_logger
from agentflow.batch_api.protocol import (
    BatchItemError,
    BatchLimits,
    BatchRequest,
    BatchResult,
    BatchState,
    BatchStatus,
)
from agentflow.errors import BadRequestError, NotFoundError, RedirectError
from agentflow.providers._batch_wire import (
    BatchWire,
    WireBatchAPI,
    check_batch,
    malformed_line,
    same_origin,
)
from agentflow.providers._context_errors import item_kind
from agentflow.providers._http_settings import join_url
from agentflow.providers._payload import dump_json
from agentflow.providers._streams import iter_lines

__all__ = ["CUSTOM_ID", "LIMITS", "STATUS_OF_ERROR_TYPE", "WIRE", "AnthropicBatchAPI"]

_log = get_logger("agentflow.batch.anthropic")

LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1024 * 1024)
"""100,000 requests or 256 MB per batch, whichever comes first
(docs.anthropic.com/en/docs/build-with-claude/batch-processing#batch-limitations)."""

CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""The form of a ``custom_id`` (the Messages Batches API reference)."""

STATUS_OF_ERROR_TYPE = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
    "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
    "conflict_error": 409,
}
"""HTTP status of each Anthropic error ``type`` (docs.anthropic.com/en/api/errors;
``conflict_error``: anthropic-sdk-python 2.10 ``types/shared/error_type.py``),
for errors that arrive without one (stream ``error`` events, batch results)."""

_PATH = "/v1/messages/batches"


def batch_status(data: Mapping[str, Any]) -> BatchStatus:
    """A ``message_batch`` object as a ``BatchStatus``.

    ``ended`` is ``CANCELLED`` when a cancel was initiated, ``EXPIRED`` when
    requests expired, else ``COMPLETED`` (single requests may have failed).
    Anthropic has no queued or finalizing state.

    Raises:
        LookupError / TypeError / ValueError: not a ``message_batch``.
    """
    counts = data.get("request_counts") or {}
    n = {k: int(counts.get(k) or 0)
         for k in ("processing", "succeeded", "errored", "canceled", "expired")}
    processing = data["processing_status"]
    if processing == "in_progress":
        state = BatchState.IN_PROGRESS
    elif processing == "canceling":
        state = BatchState.CANCELLING
    elif processing == "ended":
        state = (BatchState.CANCELLED if data.get("cancel_initiated_at")
                 else BatchState.EXPIRED if n["expired"] else BatchState.COMPLETED)
    else:
        raise ValueError(f"unknown processing_status {processing!r}")
    message = None
    if data.get("archived_at"):
        message = f"archived at {data['archived_at']}: its results are no longer available"
    return BatchStatus(batch_id=str(data["id"]), state=state, total=sum(n.values()),
                       succeeded=n["succeeded"],
                       failed=n["errored"] + n["canceled"] + n["expired"], message=message)


WIRE = BatchWire(
    "anthropic", LIMITS, resource=lambda batch_id: f"{_PATH}/{batch_id}",
    cancel=lambda batch_id: f"{_PATH}/{batch_id}/cancel", id_field="id",
    kind="message_batch", status_of=batch_status)
"""The Message Batches resource: ``GET .../{id}``, ``POST .../{id}/cancel``."""


def result_of(line: str) -> BatchResult:
    """One line of a results ``.jsonl`` as a ``BatchResult`` (a line that is
    not the documented shape: ``malformed_line``, no id)."""
    try:
        data = orjson.loads(line)
        custom_id = data["custom_id"]
        result = data["result"]
        kind = result["type"]
        if not isinstance(custom_id, str):
            raise TypeError("custom_id is not a string")
    except (orjson.JSONDecodeError, LookupError, TypeError):
        return malformed_line("anthropic", line)
    if kind == "succeeded" and isinstance(result.get("message"), Mapping):
        return BatchResult(custom_id, reply=result["message"])
    if kind in ("canceled", "expired"):
        return BatchResult(custom_id, error=BatchItemError(
            "cancelled" if kind == "canceled" else "expired",
            f"the request was {kind} before it ran"))
    return BatchResult(custom_id, error=_item_error(result))


def _item_error(result: Mapping[str, Any]) -> BatchItemError:
    """The ``error`` of an ``errored`` result (an error response, whose
    ``error`` holds ``type`` and ``message``; a bare error object too)."""
    error = result.get("error")
    inner = error.get("error") if isinstance(error, Mapping) else None
    node = inner if isinstance(inner, Mapping) else error if isinstance(error, Mapping) else {}
    kind = node.get("type")
    code = kind if isinstance(kind, str) else None
    message = node.get("message")
    if not isinstance(message, str):
        message = f"result of type {result.get('type')!r} without a message"
    status = STATUS_OF_ERROR_TYPE.get(code or "") if code else None
    return BatchItemError(item_kind("anthropic", status, message, code), message, code=code,
                          status=status)


class AnthropicBatchAPI(WireBatchAPI):
    """The Message Batches API (``WireBatchAPI`` over ``WIRE``): ``submit``
    is sent once (a 5xx or broken connection after it may have created the
    batch, so only refusals are retried: ``BatchHttp.create``).
    """

    wire = WIRE

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Create a batch of ``requests``; return its id (``msgbatch_...``).

        Raises:
            BadRequestError: (never sent) see ``check_batch``; or the API refused it.
            ProviderError: as the client's.
        """
        body = {"requests": [{"custom_id": r.custom_id, "params": dict(r.body)}
                             for r in requests]}
        check_batch("anthropic", requests, LIMITS, id_pattern=CUSTOM_ID,
                    size=len(dump_json(body)))
        return await self.create(_PATH, body)

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """The results of an ended batch, read line by line from its ``results_url``.

        Raises:
            NotFoundError: the batch was archived (``archived_at``): its results
                are gone (the runner resubmits its requests once).
            BadRequestError: the batch has not ended (no ``results_url`` yet).
            RedirectError: the ``results_url`` is on another origin than the
                base URL (the key is never sent elsewhere).
            ProviderError: as the client's.
        """
        data = await self.resource(batch_id)
        url = data.get("results_url")
        if data.get("archived_at"):
            raise NotFoundError(
                f"batch {batch_id} was archived at {data['archived_at']}: its results are no "
                f"longer available", status=None, vendor="anthropic")
        if not isinstance(url, str) or not url:
            raise BadRequestError(
                f"batch {batch_id} has no results yet (processing_status "
                f"{data.get('processing_status')!r})", status=None, vendor="anthropic")
        if url.startswith("/"):  # a path: under the API root, as every request's
            url = join_url(self._http.base_url, url)
        if not same_origin(url, self._http.base_url):
            raise RedirectError(
                f"the results_url of batch {batch_id} is on another origin ({url}); the key is "
                f"not sent there", location=url, status=None, vendor="anthropic")
        async with self._http.open(url) as response:
            async for line in iter_lines(response, self._http.client.settings.max_reply_bytes,
                                         "anthropic"):
                if line.strip():
                    yield result_of(line)
