"""The OpenAI Batch API (``BatchAPI`` for ``OpenAIChatModel``).

Wire facts (platform.openai.com/docs/guides/batch and the API reference
"Batch" and "Files"; shapes checked against the official ``openai`` SDK,
``openai.types.Batch``, ``BatchRequestCounts``, ``FileObject``):

* the requests go in a JSONL file, one line per request:
  ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``,
  uploaded with ``POST /v1/files`` (multipart/form-data: ``purpose=batch``
  and the ``file`` part) -> a ``FileObject`` (``id``);
* ``POST /v1/batches`` ``{"input_file_id", "endpoint": "/v1/chat/completions",
  "completion_window": "24h", "metadata"}`` -> a ``Batch`` (``id``, ``status``);
* ``GET /v1/batches/{id}`` -> the ``Batch``: ``status`` one of
  ``validating``, ``failed``, ``in_progress``, ``finalizing``, ``completed``,
  ``expired``, ``cancelling``, ``cancelled``; ``request_counts``
  ``{total, completed, failed}``; ``output_file_id`` / ``error_file_id``;
  ``errors.data[]`` ``{code, message, param, line}`` for a batch that failed
  validation;
* ``GET /v1/files/{id}/content``: the output file (JSONL lines
  ``{"id", "custom_id", "response": {"status_code", "request_id", "body"},
  "error": null}``) and the error file (the same shape with a non-200
  ``status_code`` and the error body, or ``"response": null`` and ``"error":
  {"code", "message"}``; codes ``batch_expired``, ``batch_cancelled``,
  ``request_timeout``); lines come in any order;
* ``POST /v1/batches/{id}/cancel`` -> the ``Batch`` (``cancelling``);
* ``GET /v1/batches?limit=&after=`` -> ``{"data": [Batch...], "has_more",
  "last_id"}`` (newest first), used to find a batch by its metadata.

Limits: "up to 50,000 requests, and can be up to 200 MB in size" (the input
file; API reference, "Create batch", ``input_file_id``).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

import orjson

from agentflow._logging import get_logger
from agentflow._secrets import redact_urls
from agentflow.batch_api.protocol import (
    BatchItemError,
    BatchLimits,
    BatchRequest,
    BatchResult,
    BatchState,
    BatchStatus,
)
from agentflow.errors import ServerError
from agentflow.providers._batch_wire import BatchHttp, ClosingBatchAPI, read_capped
from agentflow.providers._context_errors import item_kind
from agentflow.providers._http import HttpClient
from agentflow.providers._streams import iter_lines

__all__ = ["OPENAI_BATCH_LIMITS", "OpenAIBatchAPI", "batch_line", "parse_output_line"]

_log = get_logger("agentflow.batch_api")

OPENAI_BATCH_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)
"""50,000 requests and 200 MB per input file (API reference, "Create batch")."""

_STATES: Mapping[str, BatchState] = {
    "validating": BatchState.QUEUED,
    "in_progress": BatchState.IN_PROGRESS,
    "finalizing": BatchState.FINALIZING,
    "cancelling": BatchState.CANCELLING,
    "completed": BatchState.COMPLETED,
    "failed": BatchState.FAILED,
    "expired": BatchState.EXPIRED,
    "cancelled": BatchState.CANCELLED,
}
_ITEM_KINDS: Mapping[str, str] = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
TAG_KEY = "agentflow_tag"
"""The ``metadata`` key carrying the runner's submission tag (``find``)."""
_FIND_PAGES = 20
"""Pages of 100 batches ``find`` reads at most (the tagged batch is among the newest)."""


def batch_line(request: BatchRequest, api_root_path: str) -> bytes:
    """One JSONL line of the input file for ``request`` (``url``: the API
    root's path plus the request's path, e.g. ``/v1/chat/completions``)."""
    url = f"{api_root_path.rstrip('/')}/{request.path.lstrip('/')}"
    return orjson.dumps({"custom_id": request.custom_id, "method": "POST", "url": url,
                         "body": dict(request.body)}) + b"\n"


def parse_output_line(line: Any) -> BatchResult | None:
    """A ``BatchResult`` from one output- or error-file line, or ``None`` for a
    line without a string ``custom_id`` (logged by the caller)."""
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
        return None
    custom_id = line["custom_id"]
    response = line.get("response")
    error = line.get("error")
    if isinstance(response, dict) and response.get("status_code") == 200 and not error:
        return BatchResult(custom_id, reply=response.get("body"))
    if isinstance(error, dict):
        code = str(error.get("code") or "") or None
        kind = _ITEM_KINDS.get(code or "", "error")
        status = 408 if code == "request_timeout" else None
        return BatchResult(custom_id, error=BatchItemError(
            kind, str(error.get("message") or code or "request failed"), code, status))
    status = response.get("status_code") if isinstance(response, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    detail = body.get("error") if isinstance(body, dict) else None
    message = code = None
    if isinstance(detail, dict):
        message = str(detail.get("message") or "") or None
        code = str(detail.get("code") or detail.get("type") or "") or None
    status = status if isinstance(status, int) else None
    message = message or f"the request failed with HTTP {status}"
    return BatchResult(custom_id, error=BatchItemError(
        item_kind("openai", status, message, code), message, code, status))


def _multipart(fields: Mapping[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body (RFC 7578) and its content type."""
    boundary = f"agentflow-{secrets.token_hex(16)}"
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     f"{value}\r\n".encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                 f'filename="{filename}"\r\nContent-Type: application/jsonl\r\n\r\n'.encode())
    parts.append(content)
    parts.append(f"\r\n--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class OpenAIBatchAPI(ClosingBatchAPI):
    """OpenAI's Batch API over one ``HttpClient`` (a sibling of the model's,
    without the live rate governor: batch traffic is not counted against live
    limits). Raises the ``ProviderError`` family of ``openai_error``.

    Args:
        http: the client (base URL e.g. ``https://api.openai.com/v1``).
        limits: per-batch limits (default: OpenAI's).
    """

    def __init__(self, http: HttpClient, *, limits: BatchLimits = OPENAI_BATCH_LIMITS) -> None:
        self._http = http
        self._wire = BatchHttp(http)  # for the one call that must not run twice
        self._limits = limits
        self._root_path = urlsplit(http.base_url).path
        self._outputs: dict[str, tuple[str | None, str | None]] = {}

    def __repr__(self) -> str:
        return f"OpenAIBatchAPI(base_url={redact_urls(self._http.base_url)!r})"

    @property
    def limits(self) -> BatchLimits:
        """OpenAI's per-batch limits (``OPENAI_BATCH_LIMITS`` unless overridden)."""
        return self._limits

    async def aclose(self) -> None:
        """Close the HTTP sessions (idempotent)."""
        await self._http.aclose()
        await self._wire.aclose()

    async def _json(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        method = "GET" if body is None else "POST"
        async with self._http.open(path, body or {}, method=method,
                                   raw=b"" if body is None else None) as response:
            data = orjson.loads(await read_capped(self._http, response))
        if not isinstance(data, dict):
            raise ServerError(f"malformed reply from openai batch API: {str(data)[:200]}",
                              vendor=self._http.vendor)
        return data

    async def submit(self, requests: Sequence[BatchRequest], *, tag: str | None = None) -> str:
        """Upload ``requests`` as a JSONL file and create a batch on it; return
        the batch id. ``tag`` goes into the batch's ``metadata`` (``find``).
        The upload is retried as usual (a file costs nothing); the creation
        only after a refusal (``BatchHttp.create``), never after a failure that
        may have created the batch.

        Raises:
            ValueError: no requests, or more than ``limits`` allow.
            ProviderError: the upload or the creation failed.
        """
        if not requests:
            raise ValueError("a batch needs at least one request")
        content = b"".join(batch_line(r, self._root_path) for r in requests)
        if len(requests) > self._limits.max_requests or len(content) > self._limits.max_bytes:
            raise ValueError(
                f"{len(requests)} requests / {len(content)} bytes exceed the batch limits "
                f"({self._limits.max_requests} requests, {self._limits.max_bytes} bytes)")
        body, content_type = _multipart({"purpose": "batch"}, "agentflow-batch.jsonl", content)
        async with self._http.open("files", {}, raw=body,
                                   headers={"content-type": content_type}) as response:
            uploaded = orjson.loads(await read_capped(self._http, response))
        file_id = uploaded.get("id") if isinstance(uploaded, dict) else None
        if not isinstance(file_id, str):
            raise ServerError(f"the file upload returned no id: {str(uploaded)[:200]}",
                              vendor=self._http.vendor)
        create: dict[str, Any] = {"input_file_id": file_id,
                                  "endpoint": f"{self._root_path}/chat/completions",
                                  "completion_window": "24h"}
        if tag:
            create["metadata"] = {TAG_KEY: tag}
        # retried only after a refusal (429, overloaded): after a 5xx or a broken
        # connection the batch may exist, and the runner looks for it by tag
        batch = await self._wire.create("batches", create)
        if not isinstance(batch, dict):
            batch = {}
        batch_id = batch.get("id")
        if not isinstance(batch_id, str):
            raise ServerError(f"the batch creation returned no id: {str(batch)[:200]}",
                              vendor=self._http.vendor)
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        """Poll a batch (``GET /batches/{id}``)."""
        return self._status(await self._json(f"batches/{quote(batch_id, safe='')}"))

    def _status(self, batch: Mapping[str, Any]) -> BatchStatus:
        batch_id = str(batch.get("id"))
        raw = str(batch.get("status"))
        state = _STATES.get(raw)
        if state is None:
            raise ServerError(f"unknown batch status {raw!r} for {batch_id}",
                              vendor=self._http.vendor)
        counts = batch.get("request_counts") or {}
        errors = (batch.get("errors") or {}).get("data") or []
        message = "; ".join(
            f"{e.get('code')}: {e.get('message')}" + (f" (line {e['line']})" if e.get("line")
                                                     else "")
            for e in errors if isinstance(e, dict)) or None
        self._outputs[batch_id] = (batch.get("output_file_id"), batch.get("error_file_id"))
        return BatchStatus(batch_id, state, int(counts.get("total") or 0),
                           int(counts.get("completed") or 0), int(counts.get("failed") or 0),
                           message)

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """The lines of the batch's output file, then of its error file (any
        order within each); a line without a ``custom_id`` is logged and skipped."""
        if batch_id not in self._outputs:
            await self.status(batch_id)
        for file_id in self._outputs[batch_id]:
            if not file_id:
                continue
            async with self._http.open(f"files/{quote(file_id, safe='')}/content", {},
                                       method="GET", raw=b"") as response:
                # line by line, each capped: the file of a large batch is never held whole
                async for raw in iter_lines(response, self._http.settings.max_reply_bytes,
                                            self._http.vendor):
                    if not raw.strip():
                        continue
                    try:
                        line = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        _log.warning("batch.bad_line", batch_id=batch_id, line=raw[:200])
                        continue
                    result = parse_output_line(line)
                    if result is None:
                        _log.warning("batch.bad_line", batch_id=batch_id, line=str(line)[:200])
                        continue
                    yield result

    async def cancel(self, batch_id: str) -> None:
        """``POST /batches/{id}/cancel`` (a terminal batch is left as it is)."""
        state = (await self.status(batch_id)).state
        if not state.terminal and state is not BatchState.CANCELLING:
            await self._json(f"batches/{quote(batch_id, safe='')}/cancel", {})

    async def find(self, tag: str) -> str | None:
        """The id of the batch whose metadata carries ``tag`` (``submit(...,
        tag=)``), or ``None``: walks ``GET /batches`` (newest first, at most
        ``_FIND_PAGES`` pages of 100)."""
        after: str | None = None
        for _ in range(_FIND_PAGES):
            query = "batches?limit=100" + (f"&after={quote(after, safe='')}" if after else "")
            page = await self._json(query)
            for batch in page.get("data") or []:
                if isinstance(batch, dict) and (batch.get("metadata") or {}).get(TAG_KEY) == tag:
                    return str(batch["id"])
            after = page.get("last_id")
            if not page.get("has_more") or not after:
                return None
        return None
