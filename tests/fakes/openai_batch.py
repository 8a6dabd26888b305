"""OpenAI's Batch API on the fake (mixed into ``OpenAIFake``).

Speaks the wire of ``agentflow/providers/_openai_batch.py`` (see its
docstring for the sources): ``POST /v1/files`` (multipart, ``purpose=batch``,
a JSONL file of ``{"custom_id", "method", "url", "body"}`` lines), ``POST
/v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches`` (list, newest
first, ``metadata``), ``POST /v1/batches/{id}/cancel``, ``GET
/v1/files/{id}/content``.

Each poll of a batch moves it one step along its plan (default
``validating → in_progress → finalizing → completed``; ``batch_plans``
queues other plans, e.g. ending in ``expired``). Requests run (and are
counted in ``executed``) when a batch reaches ``finalizing``, through the
fake's own checks and script, so a test scripts batch replies exactly as live
ones; ``expire_done`` / ``cancel_done`` say how many requests ran before a
batch expired or was cancelled (the rest get ``batch_expired`` /
``batch_cancelled`` lines in the error file). An invalid input file (bad
JSONL, duplicate ``custom_id``, wrong ``url``) fails the batch at
validation, as OpenAI does. Output lines come in reverse order
(``out_of_order``); ``garbled_ids`` adds a line with an unknown
``custom_id``; ``poll_errors`` are served (429/5xx) before polls are answered;
``create_errors`` answer creations after the batch exists.
``submitted`` counts each ``custom_id`` per batch created, ``executed`` per
request run: the no-double-spend tests read both. ``hold_create`` holds the
creation reply after the batch exists (a client killed there never learns
its id); ``hold_upload`` holds the input file's upload before the vendor has
anything (``uploading`` is set when one arrives). ``purge_files`` batches (the
next ones to end) have their output and error files deleted at once, as
after the vendor's retention; deleting a batch from ``batches`` purges it:
both then answer 404.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from .base import FakeError, FakeReply

__all__ = ["BatchFakeMixin", "FakeBatch"]

NORMAL_PLAN = ("validating", "in_progress", "finalizing", "completed")
MAX_FILE = 200 * 1024 * 1024
MAX_REQUESTS = 50_000


@dataclass
class FakeBatch:
    """One batch on the fake."""

    id: str
    input_file_id: str
    endpoint: str
    lines: list[dict[str, Any]]
    plan: list[str]
    metadata: dict[str, Any] | None
    created_at: int
    status: str = "validating"
    errors: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    ran: bool = False
    output_file_id: str | None = None
    error_file_id: str | None = None

    def json(self) -> dict[str, Any]:
        done = len(self.outputs) + len(self.failures)
        return {"id": self.id, "object": "batch", "endpoint": self.endpoint, "errors": (
            {"object": "list", "data": self.errors} if self.errors else None),
            "input_file_id": self.input_file_id, "completion_window": "24h",
            "status": self.status, "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id, "created_at": self.created_at,
            "in_progress_at": None, "expires_at": self.created_at + 86400,
            "finalizing_at": None, "completed_at": None, "failed_at": None,
            "expired_at": None, "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": len(self.lines) if not self.errors else 0,
                               "completed": len(self.outputs) if done else 0,
                               "failed": len(self.failures) if done else 0},
            "metadata": self.metadata}


class BatchFakeMixin:
    """The Batch API state and routes (needs ``check``-style hooks of ``OpenAIStyleFake``)."""

    api_key: str | None
    script: deque[Any]
    default: Any

    def init_batches(self) -> None:
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.batch_plans: deque[list[str]] = deque()
        """Status plans for the next batches created (default ``NORMAL_PLAN``)."""
        self.expire_done = 0
        self.cancel_done = 0
        self.out_of_order = True
        self.garbled_ids = False
        self.poll_errors: deque[FakeError] = deque()
        self.create_errors: deque[FakeError] = deque()
        """Errors answered to batch creations *after* the batch was created (a
        5xx or a lost reply: the client cannot know the batch exists)."""
        self.submitted: Counter[str] = Counter()
        self.executed: Counter[str] = Counter()
        self.hold_create: asyncio.Event | None = None
        self.hold_upload: asyncio.Event | None = None
        self.uploading = asyncio.Event()
        """Set once an upload arrived (before it is stored or answered)."""
        self.created = asyncio.Event()
        """Set once a batch exists (before its creation is answered)."""
        self.batch_calls: list[tuple[str, str]] = []
        self.purge_files = 0
        """The next this many batches to end lose their output and error files."""
        self._ids = itertools.count(1)

    # -- routes ------------------------------------------------------------------
    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{file_id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{batch_id}", self._retrieve)
        app.router.add_post("/v1/batches/{batch_id}/cancel", self._cancel)

    def _err(self, status: int, message: str, code: str | None = None) -> web.Response:
        body = {"error": {"message": message, "type": "invalid_request_error", "param": None,
                          "code": code}}
        return web.json_response(body, status=status)

    def _auth(self, request: web.Request) -> web.Response | None:
        self.batch_calls.append((request.method, request.path))
        if self.api_key is not None and request.headers.get(
                "Authorization") != f"Bearer {self.api_key}":
            return self._err(401, "Incorrect API key provided.", "invalid_api_key")
        return None

    async def _upload(self, request: web.Request) -> web.Response:
        if (refused := self._auth(request)) is not None:
            return refused
        if not request.content_type.startswith("multipart/form-data"):
            return self._err(400, "Expected multipart/form-data")
        self.uploading.set()
        if self.hold_upload is not None:
            await self.hold_upload.wait()
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return self._err(400, "purpose must be 'batch' and a file must be given")
        content = upload.file.read()
        if len(content) > MAX_FILE:
            return self._err(400, "File is too large (max 200 MB)")
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = content
        return web.json_response({"id": file_id, "object": "file", "bytes": len(content),
                                  "created_at": 1, "filename": upload.filename,
                                  "purpose": "batch", "status": "processed"})

    async def _content(self, request: web.Request) -> web.Response:
        if (refused := self._auth(request)) is not None:
            return refused
        content = self.files.get(request.match_info["file_id"])
        if content is None:
            return self._err(404, "No such File object")
        return web.Response(body=content, content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.Response:
        if (refused := self._auth(request)) is not None:
            return refused
        body = await request.json()
        if body.get("completion_window") != "24h":
            return self._err(400, "completion_window must be '24h'")
        if body.get("endpoint") != "/v1/chat/completions":
            return self._err(400, f"Unsupported endpoint {body.get('endpoint')!r}")
        content = self.files.get(body.get("input_file_id", ""))
        if content is None:
            return self._err(404, "No such File object")
        batch_id = f"batch_{next(self._ids)}"
        plan = list(self.batch_plans.popleft() if self.batch_plans else NORMAL_PLAN)
        lines, errors = self._read_file(content, body["endpoint"])
        batch = FakeBatch(batch_id, body["input_file_id"], body["endpoint"], lines,
                          plan[1:] if plan[0] == "validating" else plan, body.get("metadata"),
                          len(self.batches) + 1)
        if errors:
            batch.errors = errors
            batch.plan = ["failed"]
        else:
            self.submitted.update(line["custom_id"] for line in lines)
        self.batches[batch_id] = batch
        self.created.set()
        if self.hold_create is not None:
            await self.hold_create.wait()
        if self.create_errors:
            error = self.create_errors.popleft()
            return web.json_response(error.body, status=error.status, headers=error.headers)
        return web.json_response(batch.json())

    def _read_file(self, content: bytes, endpoint: str) -> tuple[list[dict[str, Any]],
                                                                 list[dict[str, Any]]]:
        lines: list[dict[str, Any]] = []
        seen: set[str] = set()
        for n, raw in enumerate(content.splitlines(), 1):
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return [], [{"code": "invalid_json_line", "message": "This line is not parseable "
                             "as valid JSON.", "param": None, "line": n}]
            cid = line.get("custom_id") if isinstance(line, dict) else None
            if not isinstance(cid, str) or cid in seen:
                return [], [{"code": "duplicate_custom_id" if cid in seen else "missing_required"
                             "_parameter", "message": "custom_id must be a unique string",
                             "param": "custom_id", "line": n}]
            if line.get("method") != "POST" or line.get("url") != endpoint:
                return [], [{"code": "mismatched_endpoint", "message": f"The url of line {n} "
                             "does not match the batch's endpoint", "param": "url", "line": n}]
            seen.add(cid)
            lines.append(line)
        if not lines or len(lines) > MAX_REQUESTS:
            return [], [{"code": "invalid_file", "message": "the file must hold 1 to 50,000 "
                         "requests", "param": None, "line": None}]
        return lines, []

    async def _list(self, request: web.Request) -> web.Response:
        if (refused := self._auth(request)) is not None:
            return refused
        limit = int(request.query.get("limit", "20"))
        newest = sorted(self.batches.values(), key=lambda b: -b.created_at)
        after = request.query.get("after")
        if after:
            ids = [b.id for b in newest]
            newest = newest[ids.index(after) + 1:] if after in ids else []
        page = newest[:limit]
        return web.json_response({"object": "list", "data": [b.json() for b in page],
                                  "first_id": page[0].id if page else None,
                                  "last_id": page[-1].id if page else None,
                                  "has_more": len(newest) > limit})

    async def _retrieve(self, request: web.Request) -> web.Response:
        if (refused := self._auth(request)) is not None:
            return refused
        if self.poll_errors:
            error = self.poll_errors.popleft()
            return web.json_response(error.body, status=error.status, headers=error.headers)
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return self._err(404, "No such Batch object")
        if batch.plan:
            self._advance(batch, batch.plan.pop(0))
        return web.json_response(batch.json())

    async def _cancel(self, request: web.Request) -> web.Response:
        if (refused := self._auth(request)) is not None:
            return refused
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return self._err(404, "No such Batch object")
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return self._err(409, f"Cannot cancel a batch with status {batch.status}")
        batch.status = "cancelling"
        batch.plan = ["cancelled"]
        return web.json_response(batch.json())

    # -- running -------------------------------------------------------------------
    def _advance(self, batch: FakeBatch, status: str) -> None:
        batch.status = status
        if status in ("finalizing", "completed"):
            self._run(batch, len(batch.lines), "")
        elif status == "expired":
            self._run(batch, self.expire_done, "batch_expired")
        elif status == "cancelled":
            self._run(batch, self.cancel_done, "batch_cancelled")
        if status in ("completed", "expired", "cancelled") and batch.ran:
            self._write_files(batch)

    def _run(self, batch: FakeBatch, count: int, rest_code: str) -> None:
        if batch.ran:
            return
        batch.ran = True
        for n, line in enumerate(batch.lines):
            cid = line["custom_id"]
            if n >= count:
                message = ("This request could not be executed before the completion window "
                           "expired." if rest_code == "batch_expired" else
                           "This request was not executed because the batch was cancelled.")
                batch.failures.append({"id": f"batch_req_{cid}", "custom_id": cid,
                                       "response": None,
                                       "error": {"code": rest_code, "message": message}})
                continue
            self.executed[cid] += 1
            status, reply = self._answer(line["body"])
            entry = {"id": f"batch_req_{cid}", "custom_id": cid, "response": {
                "status_code": status, "request_id": f"req_{cid}", "body": reply}, "error": None}
            (batch.outputs if status == 200 else batch.failures).append(entry)

    def _answer(self, body: Any) -> tuple[int, Any]:
        refused = self.check_body(body)  # type: ignore[attr-defined]
        if refused is not None:
            return refused.status, refused.body
        if self.script:
            item = self.script.popleft()
        elif self.default is not None:
            item = self.default
        else:
            return 500, {"error": {"message": "fake: script empty"}}
        if callable(item) and not isinstance(item, FakeReply | FakeError):
            item = item(body)
        if isinstance(item, FakeError):
            return item.status, item.body
        return 200, self.render_json(item, body)  # type: ignore[attr-defined]

    def _write_files(self, batch: FakeBatch) -> None:
        outputs = list(reversed(batch.outputs)) if self.out_of_order else list(batch.outputs)
        if self.garbled_ids and outputs:
            outputs.insert(0, {**outputs[0], "custom_id": "not-a-request-of-this-batch"})
        if outputs:
            batch.output_file_id = f"file-{next(self._ids)}"
            self.files[batch.output_file_id] = b"".join(orjson.dumps(o) + b"\n" for o in outputs)
        if batch.failures:
            batch.error_file_id = f"file-{next(self._ids)}"
            self.files[batch.error_file_id] = b"".join(
                orjson.dumps(f) + b"\n" for f in batch.failures)
        if self.purge_files > 0:
            self.purge_files -= 1
            for file_id in (batch.output_file_id, batch.error_file_id):
                self.files.pop(file_id or "", None)
