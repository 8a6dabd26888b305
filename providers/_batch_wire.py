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
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from agentflow._logging import get_logger
from agentflow.batch_api.protocol import BatchItemError, BatchLimits, BatchRequest, BatchResult
from agentflow.errors import (
    BadRequestError,
    OverloadedError,
    RateLimitedError,
    ServerError,
)
from agentflow.model import ModelChunk
from agentflow.providers._http import HttpClient
from agentflow.providers._payload import ReplyGuard

__all__ = [
    "BatchHttp",
    "check_batch",
    "check_size",
    "malformed_line",
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

