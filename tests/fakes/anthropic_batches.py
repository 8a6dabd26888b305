"""The Message Batches endpoints of the fake Anthropic API (a mixin of ``AnthropicFake``).

Speaks the wire protocol of docs.anthropic.com/en/api/creating-message-batches
and the anthropic SDK's ``types/messages`` (``MessageBatch``,
``MessageBatchIndividualResponse``):

* ``POST /v1/messages/batches`` ``{"requests": [{"custom_id", "params"}]}``
  -> a ``message_batch`` (``processing_status: in_progress``); refuses (400)
  no requests, a ``custom_id`` off ``^[a-zA-Z0-9_-]{1,64}$`` or repeated,
  requests missing ``params``, more than ``batch_max_requests``, and (413)
  a body over ``batch_max_bytes``.
* ``GET /v1/messages/batches/{id}``: the batch, advanced by one poll
  (``BatchJobs``): ``in_progress`` -> ``ended`` (or ``canceling`` ->
  ``ended`` after a cancel); request counts stay 0 but ``processing`` until
  it ends; ``results_url`` once ended.
* ``POST /v1/messages/batches/{id}/cancel``: ``canceling`` (an ended batch
  is returned as it is).
* ``GET /v1/messages/batches/{id}/results``: the ``.jsonl`` (404 before the
  batch ends), in the script's order, each request run through the live
  path: ``check`` refusals and a ``stream`` param are ``errored`` results.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from aiohttp import web

from .base import FakeError, FakeReply, credential
from .batch_jobs import BatchJobs, FakeBatch, Ran, creation_error, next_item

__all__ = ["AnthropicBatches"]

_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


class _Headers:
    """Stands in for the creating request when a batch's requests run
    (``check`` reads only the headers)."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers
        self.path = "/v1/messages"


class AnthropicBatches:
    """Mixin: the batch endpoints. Uses the fake's ``check``, ``render_json``,
    script and ``anthropic_error``-style errors."""

    batch_max_requests = 100_000
    batch_max_bytes = 256 * 1024 * 1024

    def _init_batches(self) -> None:
        self.batches = BatchJobs(self._run_batch_request)
        self.batch_results_origin: str | None = None
        """Origin of the ``results_url`` (default: the fake's own)."""
        self.batch_results_relative = False
        """``results_url`` as a path only (``/v1/messages/batches/<id>/results``),
        as a gateway in front of the API may give it."""
        self.archive_batches = 0
        """This many batches, the first to end, are archived when they end:
        ``archived_at`` set, no ``results_url``, and their results answer 404
        (the API's "results no longer available")."""
        self.archived: set[str] = set()

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages/batches", self._create_batch)
        app.router.add_get("/v1/messages/batches/{id}", self._get_batch)
        app.router.add_post("/v1/messages/batches/{id}/cancel", self._cancel_batch)
        app.router.add_get("/v1/messages/batches/{id}/results", self._batch_results)

    # -- handlers ------------------------------------------------------------
    def _auth(self, request: web.Request) -> FakeError | None:
        if not credential(request):
            return _error(401, "authentication_error", "x-api-key header is required")
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version header is required")
        return None

    async def _create_batch(self, request: web.Request) -> web.Response:
        raw = await request.read()
        refused = self._auth(request)
        if refused is None and len(raw) > self.batch_max_bytes:
            refused = _error(413, "request_too_large",
                             f"Request exceeds the maximum size of {self.batch_max_bytes} bytes")
        if refused is not None:
            return self.render_error(refused)
        body = orjson.loads(raw)
        refused = _check_batch(body, self.batch_max_requests)
        if refused is not None:
            return self.render_error(refused)
        scripted, created = creation_error(self.batches)
        if created:
            requests = [(r["custom_id"], r["params"]) for r in body["requests"]]
            job = self.batches.create("msgbatch_", requests, _Headers(dict(request.headers)),
                                      raw=body)
        if scripted is not None:
            return self.render_error(scripted)
        return web.json_response(self._batch_json(job, request))

    async def _get_batch(self, request: web.Request) -> web.Response:
        refused = self._auth(request)
        if refused is not None:
            return self.render_error(refused)
        polled = self.batches.poll(request.match_info["id"])
        if isinstance(polled, FakeError):
            return self.render_error(polled)
        if polled is None:
            return self.render_error(_not_found(request))
        return web.json_response(self._batch_json(polled, request))

    async def _cancel_batch(self, request: web.Request) -> web.Response:
        refused = self._auth(request)
        if refused is not None:
            return self.render_error(refused)
        job = self.batches.cancel(request.match_info["id"])
        if job is None:
            return self.render_error(_not_found(request))
        return web.json_response(self._batch_json(job, request))

    async def _batch_results(self, request: web.Request) -> web.Response:
        refused = self._auth(request)
        job = self.batches.jobs.get(request.match_info["id"])
        if refused is None and (job is None or not job.ended or job.id in self.archived):
            refused = _not_found(request)
        if refused is not None or job is None:
            return self.render_error(refused)
        lines = [orjson.dumps({"custom_id": cid, "result": _result(outcome)})
                 for cid, outcome in job.results]
        if self.batches.script.garbage:
            stray = {"custom_id": "not-a-request-of-this-batch", "result": {"type": "canceled"}}
            lines[1:1] = [orjson.dumps(stray), b'{"custom_id": "cut-off", "result": {"ty']
        return web.Response(body=b"\n".join(lines) + b"\n",
                            content_type="application/binary")

    # -- rendering -----------------------------------------------------------
    def _batch_json(self, job: FakeBatch, request: web.Request) -> dict[str, Any]:
        created = datetime(2026, 1, 1, tzinfo=UTC)
        n = len(job.requests)
        counts = {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if job.ended:
            counts["processing"] = 0
            for _, outcome in job.results:
                kind = _result(outcome)["type"]
                counts[kind] += 1
        status = {"ended": "ended", "expired": "ended", "cancelled": "ended",
                  "cancelling": "canceling"}.get(job.state, "in_progress")
        origin = self.batch_results_origin or str(request.url.origin())
        if self.batch_results_relative:
            origin = ""
        if job.ended and job.id not in self.archived and self.archive_batches > 0:
            self.archive_batches -= 1
            self.archived.add(job.id)
        archived = job.id in self.archived
        return {
            "id": job.id, "type": "message_batch", "processing_status": status,
            "request_counts": counts,
            "created_at": created.isoformat().replace("+00:00", "Z"),
            "expires_at": (created + timedelta(hours=24)).isoformat().replace("+00:00", "Z"),
            "ended_at": created.isoformat().replace("+00:00", "Z") if job.ended else None,
            "cancel_initiated_at": (created.isoformat().replace("+00:00", "Z")
                                    if job.cancel_requested else None),
            "archived_at": created.isoformat().replace("+00:00", "Z") if archived else None,
            "results_url": (f"{origin}/v1/messages/batches/{job.id}/results"
                            if job.ended and not archived else None),
        }

    def _run_batch_request(self, body: Any, context: Any) -> Ran:
        if isinstance(body, dict) and body.get("stream"):
            return Ran(error=_error(400, "invalid_request_error",
                                    "stream: streaming is not supported for batch requests"))
        refused = self.check(context, body)
        if refused is not None:
            return Ran(error=refused)
        item = next_item(self, body)
        if isinstance(item, FakeError):
            return Ran(error=item)
        assert isinstance(item, FakeReply)
        return Ran(reply=self.render_json(item, body))


def _error(status: int, kind: str, message: str) -> FakeError:
    return FakeError(status, {"type": "error", "error": {"type": kind, "message": message},
                              "request_id": "req_batch"})


def _not_found(request: web.Request) -> FakeError:
    return _error(404, "not_found_error", f"batch {request.match_info['id']} not found or "
                  "without results")


def _check_batch(body: Any, max_requests: int) -> FakeError | None:
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        return _error(400, "invalid_request_error", "requests: at least one request is required")
    if len(requests) > max_requests:
        return _error(400, "invalid_request_error",
                      f"requests: a batch may hold at most {max_requests} requests")
    seen: set[str] = set()
    for i, item in enumerate(requests):
        cid = item.get("custom_id") if isinstance(item, dict) else None
        if not isinstance(cid, str) or not _CUSTOM_ID.fullmatch(cid):
            return _error(400, "invalid_request_error",
                          f"requests.{i}.custom_id: String should match pattern "
                          "'^[a-zA-Z0-9_-]{1,64}$'")
        if cid in seen:
            return _error(400, "invalid_request_error",
                          f"requests.{i}.custom_id: duplicate custom_id {cid!r}")
        seen.add(cid)
        if not isinstance(item.get("params"), dict):
            return _error(400, "invalid_request_error", f"requests.{i}.params: Field required")
    return None


def _result(outcome: Ran | str) -> dict[str, Any]:
    if isinstance(outcome, Ran):
        if outcome.error is not None:
            return {"type": "errored", "error": outcome.error.body}
        return {"type": "succeeded", "message": outcome.reply}
    if outcome == "errored":
        return {"type": "errored", "error": _error(500, "api_error", "Internal server error").body}
    return {"type": outcome}
