"""Batch mode of the fake Gemini API (a mixin of ``GeminiFake``).

Speaks the wire protocol of ai.google.dev/api/batch-api and google-genai's
``batches.py`` converters (``_BatchJob_from_mldev``...):

* ``POST /v1beta/models/{model}:batchGenerateContent`` ``{"batch": {"displayName",
  "inputConfig": {"requests": {"requests": [{"request", "metadata": {"key"}}]}}}}``
  -> an Operation ``{"name": "batches/...", "metadata": {"@type", "model",
  "displayName", "createTime", "updateTime", "batchStats", "state", "name"}}``;
  refuses (400) no requests, a request without ``request``, a key given
  twice, and a body over ``batch_max_bytes`` (the 20 MB inline limit).
* ``GET /v1beta/batches/{id}``: the Operation advanced by one poll
  (``BatchJobs``): ``BATCH_STATE_PENDING`` -> ``RUNNING`` -> ``SUCCEEDED`` |
  ``FAILED`` (``error``) | ``EXPIRED`` | ``CANCELLED``; once done, ``done:
  true`` and the output both in ``response`` and ``metadata.output``:
  ``inlinedResponses`` or, with ``batch_responses_file``, ``responsesFile``.
  ``batch_state_prefix = "JOB_STATE_"`` renders the SDK's names instead.
* ``POST /v1beta/batches/{id}:cancel`` -> ``{}``; 400 ``FAILED_PRECONDITION``
  on a batch already done.
* ``GET /v1beta/files/{id}:download?alt=media``: the responses file, a JSONL
  of ``{"key", "response" | "error"}``.
* ``GET /v1beta/batches?pageSize=&pageToken=``: the batches, newest first,
  ``pageSize`` (at most ``batch_page_max``) per page, ``nextPageToken``
  while more remain.
* The Files API's resumable upload (google-genai ``files.upload``):
  ``POST /upload/v1beta/files`` with ``X-Goog-Upload-Protocol: resumable``,
  ``X-Goog-Upload-Command: start`` and ``X-Goog-Upload-Header-Content-Length``
  -> ``X-Goog-Upload-URL`` (``?upload_id=``) and status ``active``; chunks
  POSTed there with ``X-Goog-Upload-Command: upload`` (``upload, finalize``
  last) and ``X-Goog-Upload-Offset`` (400 on an offset that is not the bytes
  received so far, or a final size other than declared) -> ``active``, then
  ``final`` with ``{"file": {"name": "files/...", ...}}``. A batch naming an
  uploaded JSONL of ``{"key", "request"}`` lines (``inputConfig.fileName``)
  runs those requests and answers with a responses file. ``upload_calls``
  records ``(command, offset, bytes)`` of each upload request. As at Google,
  the start needs the key and the upload id authorizes the chunks (the SDK
  sends them without it).

Each request runs through the live path (``check`` refusals, the script,
``render_json``); a request whose outcome is ``"expired"``/``"canceled"`` has
no response (Gemini has no per-request marker for those).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from .base import FakeError, FakeReply
from .batch_jobs import BatchJobs, FakeBatch, Ran, creation_error, next_item

__all__ = ["GeminiBatches"]

_STATE = {"pending": "PENDING", "running": "RUNNING", "cancelling": "RUNNING",
          "ended": "SUCCEEDED", "failed": "FAILED", "expired": "EXPIRED",
          "cancelled": "CANCELLED"}


class _Context:
    """Stands in for a live request when a batch's requests run (``check``
    reads the headers and the model in the path)."""

    def __init__(self, model: str, headers: dict[str, str]) -> None:
        self.model = model
        self.headers = headers
        self.path = f"/v1beta/models/{model}:generateContent"


def _error(code: int, message: str, status: str) -> FakeError:
    return FakeError(code, {"error": {"code": code, "message": message, "status": status}})


class GeminiBatches:
    """Mixin: the batch endpoints; uses the fake's ``check``, script and ``render_json``."""

    batch_max_bytes = 20 * 1024 * 1024
    batch_page_max = 50
    """The most batches one list page holds, whatever ``pageSize`` asks."""

    def _init_batches(self) -> None:
        self.batches = BatchJobs(self._run_batch_request)
        self.batch_responses_file = False
        """Return results as a responses file instead of inlined."""
        self.batch_state_prefix = "BATCH_STATE_"
        self.rendering_model: str | None = None
        """The model ``render_json`` renders for (set while a batch's requests run)."""
        self.uploads: dict[str, bytes] = {}
        """Uploaded files by name (``files/...``)."""
        self.upload_calls: list[tuple[str, int, int]] = []
        self.upload_start_queries: list[dict[str, str]] = []
        """The query string of each upload start (a gateway's ``?key=`` stays on it)."""
        self._open_uploads: dict[str, tuple[int, bytearray, str]] = {}

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1beta/models/{model}:batchGenerateContent", self._create_batch)
        app.router.add_get("/v1beta/batches", self._list_batches)
        app.router.add_get("/v1beta/batches/{id}", self._get_batch)
        app.router.add_post("/v1beta/batches/{id}:cancel", self._cancel_batch)
        app.router.add_get("/v1beta/files/{id}:download", self._download)
        app.router.add_post("/upload/v1beta/files", self._upload)

    def _auth(self, request: web.Request) -> FakeError | None:
        if not request.headers.get("x-goog-api-key"):
            return _error(403, "Method doesn't allow unregistered callers", "PERMISSION_DENIED")
        return None

    # -- handlers ------------------------------------------------------------
    async def _create_batch(self, request: web.Request) -> web.Response:
        raw = await request.read()
        refused = self._auth(request)
        if refused is None and len(raw) > self.batch_max_bytes:
            refused = _error(400, f"Request payload size exceeds the limit: "
                             f"{self.batch_max_bytes} bytes.", "INVALID_ARGUMENT")
        body = orjson.loads(raw) if refused is None else None
        requests = refused or self._batch_input(body)
        if isinstance(requests, FakeError):
            return self.render_error(requests)
        scripted, created = creation_error(self.batches)
        if created:
            model = request.match_info["model"]
            job = self.batches.create("batches/", requests,
                                      _Context(model, dict(request.headers)), raw=body)
        if scripted is not None:
            return self.render_error(scripted)
        return web.json_response(self._operation(job))

    async def _get_batch(self, request: web.Request) -> web.Response:
        refused = self._auth(request)
        if refused is not None:
            return self.render_error(refused)
        polled = self.batches.poll(f"batches/{request.match_info['id']}")
        if isinstance(polled, FakeError):
            return self.render_error(polled)
        if polled is None:
            return self.render_error(_error(404, "Batch not found.", "NOT_FOUND"))
        return web.json_response(self._operation(polled))

    async def _list_batches(self, request: web.Request) -> web.Response:
        refused = self._auth(request)
        if refused is not None:
            return self.render_error(refused)
        size = min(int(request.query.get("pageSize", "50")), self.batch_page_max)
        start = int(request.query.get("pageToken") or 0)
        jobs = list(reversed(self.batches.jobs.values()))
        page: dict[str, Any] = {"operations": [self._operation(j)
                                               for j in jobs[start:start + size]]}
        if start + size < len(jobs):
            page["nextPageToken"] = str(start + size)
        return web.json_response(page)

    async def _cancel_batch(self, request: web.Request) -> web.Response:
        refused = self._auth(request)
        if refused is not None:
            return self.render_error(refused)
        name = f"batches/{request.match_info['id']}"
        job = self.batches.jobs.get(name)
        if job is None:
            return self.render_error(_error(404, "Batch not found.", "NOT_FOUND"))
        if job.ended:
            return self.render_error(_error(400, "The batch is already in a terminal state.",
                                            "FAILED_PRECONDITION"))
        self.batches.cancel(name)
        return web.json_response({})

    async def _download(self, request: web.Request) -> web.Response:
        refused = self._auth(request)
        if refused is None and request.query.get("alt") != "media":
            refused = _error(400, "alt=media is required to download", "INVALID_ARGUMENT")
        job = self.batches.jobs.get(f"batches/{request.match_info['id'].removeprefix('out-')}")
        if refused is None and (job is None or not job.ended):
            refused = _error(404, "File not found.", "NOT_FOUND")
        if refused is not None or job is None:
            return self.render_error(refused or _error(404, "File not found.", "NOT_FOUND"))
        lines = [orjson.dumps({"key": key, **item}) for key, item in _items(job)]
        if self.batches.script.garbage:
            lines[1:1] = [orjson.dumps({"key": "not-a-request-of-this-batch",
                                        "error": {"code": 13, "message": "x"}}),
                          b'{"key": "cut-off", "respo']
        return web.Response(body=b"\n".join(lines) + b"\n", content_type="application/jsonl")

    async def _upload(self, request: web.Request) -> web.Response:
        command = request.headers.get("X-Goog-Upload-Command", "")
        upload_id = request.query.get("upload_id")
        if upload_id is None:  # the start needs the key; the upload id authorizes the chunks
            self.upload_start_queries.append(dict(request.query))
            refused = self._auth(request)
            if refused is not None:
                return self.render_error(refused)
            return await self._start_upload(request, command)
        declared, received, display = self._open_uploads.get(upload_id, (0, bytearray(), ""))
        chunk = await request.read()
        offset = request.headers.get("X-Goog-Upload-Offset", "")
        self.upload_calls.append((command, int(offset or -1), len(chunk)))
        if upload_id not in self._open_uploads:
            return self.render_error(_error(404, "Upload not found.", "NOT_FOUND"))
        if command not in ("upload", "upload, finalize") or offset != str(len(received)):
            return self.render_error(_error(
                400, f"Invalid upload command {command!r} at offset {offset!r} (expected "
                f"{len(received)})", "INVALID_ARGUMENT"))
        received.extend(chunk)
        if command == "upload":
            return web.Response(headers={"X-Goog-Upload-Status": "active"})
        del self._open_uploads[upload_id]
        if len(received) != declared:
            return self.render_error(_error(400, f"Upload size {len(received)} does not match "
                                            f"the declared {declared}.", "INVALID_ARGUMENT"))
        name = f"files/{upload_id}"
        self.uploads[name] = bytes(received)
        file = {"name": name, "displayName": display, "mimeType": "application/jsonl",
                "sizeBytes": str(declared), "createTime": "2026-01-01T00:00:00Z",
                "updateTime": "2026-01-01T00:00:00Z",
                "expirationTime": "2026-01-03T00:00:00Z", "sha256Hash": "",
                "uri": f"{request.url.origin()}/v1beta/{name}", "state": "ACTIVE",
                "source": "UPLOADED"}
        return web.json_response({"file": file}, headers={"X-Goog-Upload-Status": "final"})

    async def _start_upload(self, request: web.Request, command: str) -> web.Response:
        size = request.headers.get("X-Goog-Upload-Header-Content-Length", "")
        body = await request.json()
        self.upload_calls.append((command, 0, 0))
        if (request.headers.get("X-Goog-Upload-Protocol") != "resumable" or command != "start"
                or not size.isdigit() or not int(size) or not isinstance(body, dict)):
            return self.render_error(_error(400, "A resumable upload starts with protocol "
                                            "'resumable', command 'start' and a content "
                                            "length.", "INVALID_ARGUMENT"))
        upload_id = f"up{len(self.upload_calls):04d}"
        display = str((body.get("file") or {}).get("displayName") or "")
        self._open_uploads[upload_id] = (int(size), bytearray(), display)
        url = f"{request.url.origin()}/upload/v1beta/files?upload_id={upload_id}" \
              "&upload_protocol=resumable"
        return web.Response(headers={"X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active"})

    def _batch_input(self, body: Any) -> list[tuple[str, Any]] | FakeError:
        """The requests of a batch: inline, or the lines of its uploaded input file."""
        try:
            file_name = body["batch"]["inputConfig"].get("fileName")
        except (KeyError, TypeError, AttributeError):
            file_name = None
        if file_name is None:
            return _requests(body)
        content = self.uploads.get(file_name)
        if content is None:
            return _error(404, f"File {file_name} not found.", "NOT_FOUND")
        try:
            lines = [orjson.loads(line) for line in content.splitlines() if line.strip()]
        except orjson.JSONDecodeError:
            return _error(400, "* the input file is not JSON lines", "INVALID_ARGUMENT")
        return _requests({"batch": {"inputConfig": {"requests": {"requests": [
            {"request": line.get("request"), "metadata": {"key": line.get("key")}}
            if isinstance(line, dict) else line for line in lines]}}}})

    # -- rendering -----------------------------------------------------------
    def _operation(self, job: FakeBatch) -> dict[str, Any]:
        items = _items(job) if job.ended else []
        ok = sum("response" in item for _, item in items)
        failed = len(items) - ok
        n = len(job.requests)
        stats = {"requestCount": str(n), "pendingRequestCount": str(0 if job.ended else n)}
        if job.ended:
            stats |= {"successfulRequestCount": str(ok), "failedRequestCount": str(failed)}
        name = job.id
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{job.context.model}",
            "displayName": job.raw["batch"].get("displayName", ""),
            "createTime": "2026-01-01T00:00:00.000000Z", "updateTime": "2026-01-01T00:00:01Z",
            "batchStats": stats, "state": self.batch_state_prefix + _STATE[job.state],
            "name": name,
        }
        operation: dict[str, Any] = {"name": name, "metadata": metadata}
        if not job.ended:
            return operation
        operation["done"] = True
        if job.state == "failed":
            operation["error"] = {"code": 3, "message": self.batches.script.fail}
            return operation
        output: dict[str, Any]
        from_file = "fileName" in (job.raw["batch"].get("inputConfig") or {})
        if self.batch_responses_file or from_file:
            output = {"responsesFile": f"files/out-{name.removeprefix('batches/')}"}
        else:
            inlined = [{"metadata": {"key": key}, **item} for key, item in _items(job)]
            if self.batches.script.garbage:
                inlined[1:1] = [
                    {"metadata": {"key": "not-a-request-of-this-batch"},
                     "error": {"code": 13, "message": "x"}},
                    {"response": {"candidates": []}},  # a response without its key
                ]
            output = {"inlinedResponses": {"inlinedResponses": inlined}}
        metadata["output"] = output
        operation["response"] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main."
                     "GenerateContentBatchOutput", **output}
        return operation

    def _run_batch_request(self, body: Any, context: Any) -> Ran:
        refused = self.check(context, self.canonical(body))
        if refused is not None:
            return Ran(error=refused)
        item = next_item(self, body)
        if isinstance(item, FakeError):
            return Ran(error=item)
        assert isinstance(item, FakeReply)
        self.rendering_model = context.model
        try:
            return Ran(reply=self.render_json(item, body))
        finally:
            self.rendering_model = None


_GRPC = {400: 3, 403: 7, 404: 5, 429: 8, 500: 13, 503: 14, 504: 4}


def _items(job: FakeBatch) -> list[tuple[str, dict[str, Any]]]:
    """``(key, {"response"} | {"error"})`` of the requests that have a result."""
    items: list[tuple[str, dict[str, Any]]] = []
    for key, outcome in job.results:
        if outcome == "errored":
            items.append((key, {"error": {"code": 13, "message": "Internal error encountered."}}))
        elif isinstance(outcome, Ran) and outcome.error is not None:
            rpc = dict(outcome.error.body["error"])
            rpc["code"] = _GRPC.get(outcome.error.status, 2)  # per-request: a gRPC code
            items.append((key, {"error": rpc}))
        elif isinstance(outcome, Ran):
            items.append((key, {"response": outcome.reply}))
    return items


def _requests(body: Any) -> list[tuple[str, Any]] | FakeError:
    try:
        items = body["batch"]["inputConfig"]["requests"]["requests"]
    except (KeyError, TypeError):
        return _error(400, "* BatchGenerateContentRequest.batch.input_config: input_config is "
                      "required", "INVALID_ARGUMENT")
    if not isinstance(items, list) or not items:
        return _error(400, "* the batch has no requests", "INVALID_ARGUMENT")
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("request"), dict):
            return _error(400, f"* requests[{i}].request: request is required",
                          "INVALID_ARGUMENT")
        key = (item.get("metadata") or {}).get("key")
        if not isinstance(key, str) or key in seen:
            return _error(400, f"* requests[{i}].metadata.key: a unique key is required "
                          "(this fake matches results by it)", "INVALID_ARGUMENT")
        seen.add(key)
        out.append((key, item["request"]))
    return out
