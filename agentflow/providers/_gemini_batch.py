"""Gemini batch mode (``models/{model}:batchGenerateContent``): the ``BatchAPI``
of ``GeminiChatModel``.

Wire facts (ai.google.dev/gemini-api/docs/batch-mode, ai.google.dev/api/batch-api;
google-genai ``batches.py`` (``_CreateBatchJobParameters_to_mldev``,
``_BatchJob_from_mldev``, ``_InlinedRequest_to_mldev``), ``_transformers.py``
(``t_job_state``) and ``files.py`` (``download``)):

* Create: ``POST models/{model}:batchGenerateContent`` ``{"batch":
  {"displayName", "inputConfig": {"requests": {"requests": [{"request":
  <GenerateContentRequest>, "metadata": {"key": <custom_id>}}]}}}}``. Inline
  requests total at most 20 MB; a larger batch goes as a JSONL file of
  ``{"key", "request"}`` lines (at most 2 GB) uploaded through the Files API
  (``_gemini_files``) and named as ``"inputConfig": {"fileName": "files/..."}``;
  its results then come as a responses file. Returns an Operation
  ``{"name": "batches/{id}", "metadata": {"state", "batchStats", ...}}``; the
  batch id is that ``name``.
* Poll: ``GET batches/{id}`` -> the Operation: ``metadata.state``
  ``BATCH_STATE_PENDING|RUNNING|SUCCEEDED|FAILED|CANCELLED|EXPIRED`` on the
  wire (the SDK renames them ``JOB_STATE_*``, which are accepted too, with
  ``JOB_STATE_QUEUED``, ``CANCELLING``, ``PARTIALLY_SUCCEEDED``...),
  ``metadata.batchStats`` {``requestCount``, ``successfulRequestCount``,
  ``failedRequestCount``, ``pendingRequestCount``} (int64 as strings),
  ``done``, ``error`` (a google.rpc.Status) for a failed batch.
* Results: ``response`` (or ``metadata.output``) holds ``inlinedResponses:
  {inlinedResponses: [{"metadata": {"key"}, "response" | "error"}]}`` or
  ``responsesFile: "files/{id}"``, downloaded from ``files/{id}:download?alt=media``,
  a JSONL of ``{"key", "response" | "error"}``. The docs promise responses "in
  the same order as the input requests", but they are not (python-genai
  issue 1909), so results are matched by ``key`` only; one without a key
  is yielded without an id (python-genai issues 1886/2008 report keys
  missing in responses).
* Per-request errors are google.rpc.Status (``code`` a gRPC code); cancel:
  ``POST batches/{id}:cancel``.
* List: ``GET batches?pageSize=&pageToken=`` -> ``{"operations": [...],
  "nextPageToken"}``: ``find`` looks a submission's tag up there (it is the
  batch's ``displayName``), so a run killed between the API creating a batch
  and the journal recording it adopts that batch instead of paying again.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

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
from agentflow.errors import BadRequestError, ProviderError
from agentflow.providers._batch_wire import (
    BatchWire,
    WireBatchAPI,
    check_batch,
    check_size,
    malformed_line,
    read_status,
    require_mapping,
)
from agentflow.providers._context_errors import item_kind
from agentflow.providers._gemini_errors import MISSING_SIGNATURE, missing_signature
from agentflow.providers._gemini_files import CHUNK_BYTES, MAX_FILE_BYTES, upload_file
from agentflow.providers._http import HttpClient
from agentflow.providers._payload import dump_json
from agentflow.providers._streams import iter_lines

__all__ = ["HTTP_OF_GRPC", "INLINE_MAX_BYTES", "LIMITS", "WIRE", "GeminiBatchAPI", "batch_state",
           "batch_status"]

_log = get_logger("agentflow.batch.gemini")

INLINE_MAX_BYTES = 20 * 1024 * 1024
"""Inline requests total at most 20 MB (ai.google.dev/gemini-api/docs/batch-mode,
checked 2026-12); a larger batch is uploaded as an input file."""

LIMITS = BatchLimits(max_requests=100_000, max_bytes=MAX_FILE_BYTES)
"""An input file holds at most 2 GB (the Files API's limit); the docs give no
count limit, so the count is capped like Anthropic's."""

_KEY = re.compile(r"\S(?:.{0,126}\S)?", re.S)
"""A ``metadata.key``: any non-blank string (bounded, so ids stay short)."""

_STATES: dict[str, BatchState] = {
    "UNSPECIFIED": BatchState.QUEUED, "QUEUED": BatchState.QUEUED,
    "PENDING": BatchState.QUEUED, "RUNNING": BatchState.IN_PROGRESS,
    "PAUSED": BatchState.IN_PROGRESS, "UPDATING": BatchState.IN_PROGRESS,
    "CANCELLING": BatchState.CANCELLING, "SUCCEEDED": BatchState.COMPLETED,
    "PARTIALLY_SUCCEEDED": BatchState.COMPLETED, "FAILED": BatchState.FAILED,
    "CANCELLED": BatchState.CANCELLED, "EXPIRED": BatchState.EXPIRED,
}

HTTP_OF_GRPC = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400,
                10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401}
"""HTTP status of each google.rpc.Code (googleapis/google/rpc/code.proto)."""


def batch_state(name: str) -> BatchState:
    """A ``BATCH_STATE_*`` (wire) or ``JOB_STATE_*`` (SDK) name as a ``BatchState``.

    Raises:
        ValueError: an unknown state.
    """
    for prefix in ("BATCH_STATE_", "JOB_STATE_"):
        if name.startswith(prefix) and name[len(prefix):] in _STATES:
            return _STATES[name[len(prefix):]]
    raise ValueError(f"unknown batch state {name!r}")


def _count(stats: Mapping[str, Any], name: str) -> int:
    return int(stats.get(name) or 0)  # int64 fields arrive as strings


def batch_status(data: Mapping[str, Any]) -> BatchStatus:
    """An Operation (or batch resource) as a ``BatchStatus``.

    Raises:
        LookupError / TypeError / ValueError: not of that shape.
    """
    meta: Mapping[str, Any] = (data["metadata"] if isinstance(data.get("metadata"), Mapping)
                               else data)
    state = batch_state(str(meta["state"]))
    stats = meta.get("batchStats") or {}
    error = data.get("error") or meta.get("error")
    message = None
    if isinstance(error, Mapping) and error.get("message"):
        message = str(error["message"])
    return BatchStatus(batch_id=str(data.get("name") or meta["name"]), state=state,
                       total=_count(stats, "requestCount"),
                       succeeded=_count(stats, "successfulRequestCount"),
                       failed=_count(stats, "failedRequestCount"), message=message)


def _item_error(error: Any) -> BatchItemError:
    """A google.rpc.Status of one request (``code``: gRPC, or HTTP when >= 100).
    A request refused for a function call without its thought signature
    (the 400 "Function call is missing a thought_signature") has the code
    ``MISSING_SIGNATURE`` and the live error's message, which names the fix
    (``missing_signature``), not only ``INVALID_ARGUMENT``."""
    node = error if isinstance(error, Mapping) else {}
    code = node.get("code")
    status = None
    if isinstance(code, int):
        status = code if code >= 100 else HTTP_OF_GRPC.get(code)
    name = node.get("status")
    message = node.get("message")
    text = message if isinstance(message, str) else str(error)[:200]
    label = name if isinstance(name, str) else (str(code) if code is not None else None)
    if status == 400 and "missing a thought_signature" in text.lower():
        refused = missing_signature(text, status=status)
        return BatchItemError("error", refused.message, code=MISSING_SIGNATURE, status=status)
    return BatchItemError(item_kind("gemini", status, text, label), text, code=label,
                          status=status)


def result_of(item: Any, key: Any) -> BatchResult:
    """One inlined response or responses-file line (``key`` already found)."""
    if not isinstance(key, str) or not isinstance(item, Mapping):
        return malformed_line("gemini", orjson.dumps(item).decode(errors="replace")
                              if isinstance(item, Mapping | list) else str(item))
    if "error" in item:
        return BatchResult(key, error=_item_error(item["error"]))
    if isinstance(item.get("response"), Mapping):
        return BatchResult(key, reply=item["response"])
    return BatchResult(key, error=BatchItemError("error", "the result has neither a response "
                                                 "nor an error"))


def _inlined(output: Mapping[str, Any]) -> Iterable[BatchResult]:
    holder = output.get("inlinedResponses") or {}
    items = holder.get("inlinedResponses") if isinstance(holder, Mapping) else holder
    for item in items or []:
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        yield result_of(item, meta.get("key") if isinstance(meta, Mapping) else None)


def _line(line: str) -> BatchResult:
    try:
        item = orjson.loads(line)
    except orjson.JSONDecodeError:
        return malformed_line("gemini", line)
    key = item.get("key") if isinstance(item, Mapping) else None
    if key is None and isinstance(item, Mapping):  # metadata as in inline requests
        meta = item.get("metadata")
        key = meta.get("key") if isinstance(meta, Mapping) else None
    return result_of(item, key)


def _name(batch_id: str) -> str:
    return batch_id if batch_id.startswith("batches/") else f"batches/{batch_id}"


WIRE = BatchWire(
    "gemini", LIMITS, resource=_name, cancel=lambda batch_id: f"{_name(batch_id)}:cancel",
    id_field="name", kind="batch operation", status_of=batch_status)
"""The batch resource: ``GET batches/{id}`` (an Operation), ``POST batches/{id}:cancel``."""


class GeminiBatchAPI(WireBatchAPI):
    """Gemini batch mode (``WireBatchAPI`` over ``WIRE``): ``submit`` is sent
    once (only refusals are retried: a failure after it may have created the
    batch; ``BatchHttp.create``). A request's ``custom_id`` travels as its
    ``metadata.key``. A batch over ``inline_max_bytes`` inline is uploaded
    as a JSONL input file (``_gemini_files``) and named by the batch.
    """

    wire = WIRE

    def __init__(self, client: HttpClient, *, inline_max_bytes: int = INLINE_MAX_BYTES,
                 chunk_bytes: int = CHUNK_BYTES) -> None:
        super().__init__(client)
        self.inline_max_bytes = inline_max_bytes
        """A batch whose inline body is larger is uploaded as a file."""
        self.chunk_bytes = chunk_bytes
        """Bytes per upload request of an input file."""

    async def submit(self, requests: Sequence[BatchRequest], *, tag: str | None = None) -> str:
        """Create a batch of inline ``requests``; return its name (``batches/...``).
        ``tag`` becomes the batch's ``displayName`` (``find``).

        Raises:
            BadRequestError: (never sent) see ``check_batch``; requests for
                different models, or not ``generateContent`` requests; an
                input file over 2 GB (``LIMITS``, naming it); or the API
                refused it.
            ProviderError: as the client's (the upload's too: ``upload_file``).
        """
        check_batch("gemini", requests, LIMITS, id_pattern=_KEY)
        paths = {r.path for r in requests}
        path = paths.pop()
        if paths or not path.endswith(":generateContent"):
            raise BadRequestError(
                f"a Gemini batch takes generateContent requests of one model; got "
                f"{sorted({path, *paths})[:3]}", status=None, vendor="gemini")
        name = tag or f"agentflow-{requests[0].custom_id}-{len(requests)}"
        body = {"batch": {"displayName": name, "inputConfig": {"requests": {"requests": [
            {"request": dict(r.body), "metadata": {"key": r.custom_id}} for r in requests]}}}}
        if len(dump_json(body)) > self.inline_max_bytes:  # too large inline: as a file
            content = b"".join(orjson.dumps({"key": r.custom_id, "request": dict(r.body)})
                               + b"\n" for r in requests)
            check_size("gemini", len(content), LIMITS)
            file_name = await upload_file(self._http, content, media_type="application/jsonl",
                                          display_name=name, chunk_bytes=self.chunk_bytes)
            _log.info("batch.input_file", vendor="gemini", file=file_name, bytes=len(content),
                      requests=len(requests))
            body = {"batch": {"displayName": name, "inputConfig": {"fileName": file_name}}}
        target = path.removesuffix(":generateContent") + ":batchGenerateContent"
        return await self.create(target, body)

    async def find(self, tag: str, *, max_pages: int = 20) -> str | None:
        """The name of the batch submitted with ``tag``, among the newest
        ``max_pages`` pages of the account's batches, or ``None``.

        Raises:
            ProviderError: as the client's.
        """
        token: str | None = None
        for _ in range(max_pages):
            query = {"pageSize": 100, **({"pageToken": token} if token else {})}
            data = require_mapping("gemini", await self._http.json(
                f"batches?{urlencode(query)}"), "batch list")
            for operation in data.get("operations") or []:
                meta = operation.get("metadata") if isinstance(operation, Mapping) else None
                if isinstance(meta, Mapping) and meta.get("displayName") == tag:
                    name = operation.get("name") or meta.get("name")
                    return str(name) if name else None
            token = data.get("nextPageToken") or None
            if token is None:
                return None
        return None

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """The results of a terminal batch: its inlined responses, or the lines
        of its responses file. A failed batch has none; an expired or
        cancelled one has those of the requests that ran.

        Raises:
            BadRequestError: the batch is not terminal.
            ProviderError: as the client's.
        """
        data = await self.resource(batch_id)
        state = read_status(WIRE, data).state
        if not state.terminal:
            raise BadRequestError(f"batch {batch_id} has no results yet (state {state})",
                                  status=None, vendor="gemini")
        meta: Mapping[str, Any] = (data["metadata"]
                                   if isinstance(data.get("metadata"), Mapping) else {})
        output = data.get("response") or meta.get("output") or {}
        if not isinstance(output, Mapping):
            raise ProviderError(f"malformed batch output: {str(output)[:200]}", vendor="gemini")
        for result in _inlined(output):
            yield result
        file = output.get("responsesFile")
        if isinstance(file, str) and file:
            path = f"{file}:download?alt=media"
            async with self._http.open(path) as response:
                async for line in iter_lines(
                        response, self._http.client.settings.max_reply_bytes, "gemini"):
                    if line.strip():
                        yield _line(line)
