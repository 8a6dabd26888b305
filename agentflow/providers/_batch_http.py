"""The HTTP side of a vendor batch API (``_batch_wire`` re-exports it).

``BatchHttp`` holds two clients: one for calls that may be repeated (polls,
downloads, cancel: retried as usual) and one for the call that must not run
twice (creating a batch: retried only after a refusal, 429 or overloaded,
never after a 5xx or a broken connection, after which the batch may exist
and a retry would pay twice). ``require_mapping`` checks a reply's shape.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Self

import orjson

from agentflow._logging import get_logger
from agentflow.errors import OverloadedError, RateLimitedError, ServerError
from agentflow.providers._exchange import Exchange
from agentflow.providers._http import HttpClient
from agentflow.providers._reply_cap import cap_reply
from agentflow.providers._retry import retryable

__all__ = ["BatchHttp", "ClosingBatchAPI", "read_capped", "require_mapping"]

_log = get_logger("agentflow.batch")


class ClosingBatchAPI:
    """The base of the vendors' ``BatchAPI`` classes: ``async with api:``
    closes its HTTP sessions on leaving (``aclose``), as ``async with
    model:`` does a model's."""

    async def aclose(self) -> None:
        """Close the HTTP sessions (idempotent)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


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
            return _parsed(self.vendor, await read_capped(self.client, response))

    def open(self, path: str, body: Mapping[str, Any] | None = None) -> Exchange:
        """``async with``: the 2xx response of ``GET path`` (``body=None``) or
        ``POST body`` (``HttpClient.open``)."""
        method, raw = ("GET", b"") if body is None else ("POST", None)
        return self.client.open(path, body or {}, method=method, raw=raw)

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
                    return _parsed(self.vendor, await read_capped(self._once, response))
            except (RateLimitedError, OverloadedError) as exc:
                if attempt >= settings.max_retries or not retryable(exc, settings):
                    raise  # spent, the server said no (x-should-retry) or asks too long a wait
                hint = exc.retry_after
                wait = (hint if hint is not None
                        else min(settings.backoff_max, settings.backoff_initial * 2 ** attempt))
                _log.info("batch.create.retry", vendor=self.vendor, attempt=attempt + 1,
                          error=type(exc).__name__, wait=wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover


async def read_capped(client: HttpClient, response: Any) -> bytes:
    """The whole body of a batch API's JSON reply (a poll, a listing, a
    creation), at most ``HttpSettings.max_reply_bytes`` of it (``cap_reply``):
    a server answering a poll with an endless body fails it with
    ``ReplyTooLargeError`` instead of filling the memory. Results files are
    read line by line instead (``iter_lines``, each line capped).

    Raises:
        ReplyTooLargeError: the body passed the limit.
    """
    cap_reply(response, client.settings.max_reply_bytes, client.vendor)
    body: bytes = await response.read()
    return body


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
