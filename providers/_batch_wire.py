"""What the vendor batch-API modules share (``_anthropic_batch``, ``_gemini_batch``).

* ``whole_reply``: the chunks of one batch reply, read exactly as the live
  adapter reads a whole (non-streamed) reply: the adapter's ``parse_reply``
  under a ``ReplyGuard``, so a malformed reply is the same typed
  ``ServerError`` and an empty one is refused the same way.
* ``check_batch``: refuses, before any request, a batch the vendor would
  refuse or that the runner could not match back (duplicate or malformed
  ``custom_id``, too many requests, a payload over the byte limit).
* ``same_origin``: whether a URL a vendor hands back (a results URL) may
  receive the model's credentials.
* ``malformed_line``: the ``BatchResult`` of a results line that could not be
  read (no id: the runner drops it with a log line, never assigns it).
* ``BatchHttp``: the two clients of a batch API: one for calls that may be
  repeated (polls, downloads, cancel: retried as usual) and one for the
  call that must not run twice (creating a batch: retried only after a
  refusal, 429 or overloaded, never after a 5xx or a broken connection,
  after which the batch may exist and a retry would pay twice).
* ``BatchWire``: the facts of one vendor's batch resource (plain data: its
  limits, paths, id field, status reader), and ``WireBatchAPI``, the
  ``BatchAPI`` methods every such vendor has alike (poll, cancel, create,
  limits, close) written once over them; a vendor module adds ``submit`` and
  ``results`` (and ``find`` where it keeps a tag).
* ``WholeReplyBatches``: the ``BatchCapable`` methods of an ``HttpChatModel``
  whose batch item is its live non-streaming request and whose batch reply is
  a whole live reply.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

import aiohttp
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
from agentflow.errors import (
    BadRequestError,
    OverloadedError,
    ProviderError,
    RateLimitedError,
    ServerError,
)
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ToolSpec
from agentflow.providers._adapter import HttpChatModel
from agentflow.providers._http import HttpClient
from agentflow.providers._payload import ReplyGuard

__all__ = [
    "BatchHttp",
    "BatchWire",
    "WholeReplyBatches",
    "WireBatchAPI",
    "check_batch",
    "check_size",
    "malformed_line",
    "read_status",
    "require_mapping",
    "same_origin",
    "whole_reply",
]

_log = get_logger("agentflow.batch")


def whole_reply(
    vendor: str, parse_reply: Callable[[Any], Iterable[ModelChunk]], reply: Any
) -> list[ModelChunk]:
    """The chunks of one whole reply ``reply`` (parsed JSON) read by ``parse_reply``.

    Raises:
        ServerError: the reply is not of the vendor's shape, or carries neither
            content nor a finish reason (as for a live whole reply).
        ProviderError: the reply is the vendor's error object.
    """
    guard = ReplyGuard(vendor, stream=False)
    chunks = guard.fold(parse_reply, reply)
    guard.end()
    return chunks


def check_batch(
    vendor: str,
    requests: Sequence[BatchRequest],
    limits: BatchLimits,
    *,
    id_pattern: re.Pattern[str],
    size: int | None = None,
) -> None:
    """Refuse a batch before sending it.

    ``size``: the bytes of the payload as it will be sent (checked against
    ``limits.max_bytes`` when given).

    Raises:
        BadRequestError: (never sent) no requests, more than
            ``limits.max_requests``, a ``custom_id`` not matching ``id_pattern``
            or given twice, or a payload over ``limits.max_bytes``.
    """
    if not requests:
        raise BadRequestError("a batch needs at least one request", status=None, vendor=vendor)
    if len(requests) > limits.max_requests:
        raise BadRequestError(
            f"{len(requests)} requests exceed {vendor}'s limit of {limits.max_requests} per "
            f"batch; split them into several batches", status=None, vendor=vendor)
    seen: set[str] = set()
    for request in requests:
        if not id_pattern.fullmatch(request.custom_id):
            raise BadRequestError(
                f"custom_id {request.custom_id[:80]!r} does not match {vendor}'s pattern "
                f"{id_pattern.pattern}", status=None, vendor=vendor)
        if request.custom_id in seen:
            raise BadRequestError(
                f"custom_id {request.custom_id!r} appears twice in one batch; results are "
                f"matched by it", status=None, vendor=vendor)
        seen.add(request.custom_id)
    if size is not None:
        check_size(vendor, size, limits)


def check_size(vendor: str, size: int, limits: BatchLimits) -> None:
    """Refuse a batch payload of ``size`` bytes over ``limits.max_bytes``.

    Raises:
        BadRequestError: (never sent) it is over.
    """
    if size > limits.max_bytes:
        raise BadRequestError(
            f"the batch payload is {size:,} bytes, over {vendor}'s limit of "
            f"{limits.max_bytes:,}; split it into several batches", status=None, vendor=vendor)


def same_origin(url: str, base_url: str) -> bool:
    """Whether ``url`` has the scheme and host (with port) of ``base_url``:
    only then may it receive the model's credential headers."""
    a, b = urlsplit(url), urlsplit(base_url)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


def malformed_line(vendor: str, line: str) -> BatchResult:
    """The result of a results line that is not the vendor's JSON shape:
    no ``custom_id`` (so never assigned to an input), an error saying why."""
    return BatchResult("", error=BatchItemError(
        "error", f"malformed batch result line from {vendor}: {line[:200]!r}"))


class BatchHttp:
    """The HTTP side of one vendor batch API, over siblings of the model's
    client (same base URL, key, error mapping and settings; outside the live
    rate governor: batch traffic has limits of its own).

    Args:
        client: the client to derive from (the model's, or a sibling of it).
    """

    def __init__(self, client: HttpClient) -> None:
        self.client = client.sibling()
        self._once = client.sibling()
        self._once.settings = replace(client.settings, max_retries=0)
        self.vendor = client.vendor

    @property
    def base_url(self) -> str:
        """The API root."""
        return self.client.base_url

    async def aclose(self) -> None:
        """Close both sessions (idempotent)."""
        await self.client.aclose()
        await self._once.aclose()

    async def json(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """``GET path`` (``body=None``) or ``POST body``, retried as usual; the
        reply parsed.

        Raises:
            ProviderError: as the client's; ``ServerError`` for a reply that
                is not JSON.
        """
        async with self.open(path, body) as response:
            return _parsed(self.vendor, await response.read())

    @asynccontextmanager
    async def open(self, path: str, body: Mapping[str, Any] | None = None
                   ) -> AsyncIterator[aiohttp.ClientResponse]:
        """The 2xx response of ``GET path`` (``body=None``) or ``POST body``."""
        method, raw = ("GET", b"") if body is None else ("POST", None)
        async with self.client.open(path, body or {}, method=method, raw=raw) as response:
            yield response

    async def create(self, path: str, body: Mapping[str, Any]) -> Any:
        """``POST body`` to create something that must not be created twice:
        retried (``settings.max_retries`` times, honouring the server's
        ``retry_after``) only after a refusal; the reply parsed.

        Raises:
            ProviderError: a refusal once retries are spent, or at once any
                other failure (the caller must not assume nothing was created).
        """
        settings = self.client.settings
        for attempt in range(settings.max_retries + 1):
            try:
                async with self._once.open(path, body) as response:
                    return _parsed(self.vendor, await response.read())
            except (RateLimitedError, OverloadedError) as exc:
                if attempt >= settings.max_retries:
                    raise
                hint = exc.retry_after
                wait = (min(hint, settings.max_retry_after) if hint is not None
                        else min(settings.backoff_max, settings.backoff_initial * 2 ** attempt))
                _log.info("batch.create.retry", vendor=self.vendor, attempt=attempt + 1,
                          error=type(exc).__name__, wait=wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover


def _parsed(vendor: str, raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ServerError(f"malformed reply from {vendor}'s batch API: {raw[:200]!r}",
                          vendor=vendor) from exc


def require_mapping(vendor: str, data: Any, what: str) -> Mapping[str, Any]:
    """``data`` if it is a JSON object.

    Raises:
        ServerError: it is not (naming ``what`` was expected).
    """
    if not isinstance(data, Mapping):
        raise ServerError(f"malformed {what} from {vendor}: {str(data)[:200]}", vendor=vendor)
    return data



@dataclass(frozen=True, slots=True)
class BatchWire:
    """The facts of one vendor's batch resource, for ``WireBatchAPI``.

    Attributes:
        vendor: named in errors and logs.
        limits: per-batch limits (the vendor module cites their source).
        resource: a batch id -> the path of the batch resource (polled with GET).
        cancel: a batch id -> the path its cancel is POSTed to.
        id_field: the field of the created resource that holds the batch id.
        kind: what the resource is called, in errors (``"message_batch"``).
        status_of: the resource's JSON -> a ``BatchStatus`` (raises
            ``LookupError``, ``TypeError`` or ``ValueError`` on another shape).
    """

    vendor: str
    limits: BatchLimits
    resource: Callable[[str], str]
    cancel: Callable[[str], str]
    id_field: str
    kind: str
    status_of: Callable[[Mapping[str, Any]], BatchStatus]


def read_status(wire: BatchWire, data: Mapping[str, Any]) -> BatchStatus:
    """``wire.status_of(data)``, a malformed resource being the vendor's fault.

    Raises:
        ProviderError: ``data`` is not the vendor's batch resource (or names an
            unknown state).
    """
    try:
        return wire.status_of(data)
    except (LookupError, TypeError, ValueError) as exc:
        raise ProviderError(f"malformed {wire.kind} ({exc}): {str(data)[:200]}",
                            vendor=wire.vendor) from exc


class WireBatchAPI:
    """What every vendor ``BatchAPI`` over ``BatchHttp`` does alike, from the
    subclass's ``wire`` (``BatchWire``): poll, cancel, create, limits, close.
    Subclasses add ``submit`` and ``results``.

    Args:
        client: the model's ``HttpClient`` (its base URL, key and error
            mapping; the batch calls go through siblings of it, outside its
            rate governor: batches have limits of their own).

    Every method raises the client's ``ProviderError`` family.
    """

    wire: ClassVar[BatchWire]

    def __init__(self, client: HttpClient) -> None:
        self._http = BatchHttp(client)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._http.base_url!r})"

    @property
    def limits(self) -> BatchLimits:
        """The vendor's per-batch limits (``wire.limits``)."""
        return self.wire.limits

    async def aclose(self) -> None:
        """Close the HTTP sessions (idempotent)."""
        await self._http.aclose()

    async def resource(self, batch_id: str) -> Mapping[str, Any]:
        """The batch resource's JSON (``GET wire.resource(batch_id)``).

        Raises:
            ProviderError: as the client's (``NotFoundError`` for an unknown
                id); ``ServerError`` for a reply that is not a JSON object.
        """
        data = await self._http.json(self.wire.resource(batch_id))
        return require_mapping(self.wire.vendor, data, self.wire.kind)

    async def status(self, batch_id: str) -> BatchStatus:
        """Poll a batch.

        Raises:
            ProviderError: as ``resource``; or the reply is not a batch
                resource (``read_status``).
        """
        return read_status(self.wire, await self.resource(batch_id))

    async def cancel(self, batch_id: str) -> None:
        """Ask for the batch to be cancelled (``POST wire.cancel(batch_id)``);
        a batch already cancelling or terminal is left as it is (the vendor's
        400 for it is read as done).

        Raises:
            ProviderError: as the client's.
        """
        try:
            await self._http.json(self.wire.cancel(batch_id), {})
        except BadRequestError:
            status = await self.status(batch_id)
            if not (status.state.terminal or status.state is BatchState.CANCELLING):
                raise
            _log.info("batch.cancel.already", vendor=self.wire.vendor, batch_id=batch_id,
                      state=str(status.state))

    async def create(self, path: str, body: Mapping[str, Any]) -> str:
        """Create a batch (``POST body`` to ``path``, sent once: ``BatchHttp.create``);
        return its id (the reply's ``wire.id_field``).

        Raises:
            ProviderError: as ``BatchHttp.create``; or the reply has no id
                (the batch may exist: the caller must not assume it does not).
        """
        data = await self._http.create(path, body)
        batch_id = data.get(self.wire.id_field) if isinstance(data, Mapping) else None
        if not isinstance(batch_id, str) or not batch_id:
            raise ProviderError(f"the batch was created but its reply has no "
                                f"{self.wire.id_field}: {str(data)[:200]}",
                                vendor=self.wire.vendor)
        return batch_id


class WholeReplyBatches(HttpChatModel):
    """An ``HttpChatModel`` that is ``BatchCapable``: a batch item is the live
    non-streaming request (``build_request(..., stream=False)``), a batch
    reply is read as a whole live reply (``parse_reply`` under a
    ``ReplyGuard``), and ``batch_api_type`` is the vendor's ``BatchAPI``.
    For wire formats whose tool calls are structured (no in-band markup to
    read against the request's tools)."""

    batch_api_type: ClassVar[type[WireBatchAPI]]

    def batch_api(self) -> WireBatchAPI:
        """The vendor's batch API on this model's base URL and key, outside the
        live rate governor."""
        return self.batch_api_type(self._client)

    def batch_request(
        self,
        custom_id: str,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
    ) -> BatchRequest:
        """The live non-streaming request as one batch item (its path and body).

        Raises:
            UsageError / UnsupportedFeatureError: as ``build_request``.
        """
        path, body = self.build_request(messages, tools, options, stream=False)
        return BatchRequest(custom_id, path, body)

    def parse_batch_reply(
        self, reply: Any, tools: Sequence[ToolSpec] = ()
    ) -> Iterable[ModelChunk]:
        """The chunks of one batch reply, as of a whole live reply (``tools``
        unused: these wire formats carry tool calls as structured parts).

        Raises:
            ServerError: the reply is malformed or empty (as live).
            ProviderError: the reply is the vendor's error object.
        """
        return whole_reply(self.vendor, self.parse_reply, reply)
