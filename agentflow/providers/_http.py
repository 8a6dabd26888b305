"""The HTTP layer every adapter shares: one aiohttp session per model, SSE and
NDJSON readers, vendor error mapping, and retries with backoff.

* ``HttpClient`` owns one ``aiohttp.ClientSession`` per event loop (created
  lazily inside the running loop, with a bounded connector; closed on its own
  loop when that loop ends, ``_loop_sessions``) and closes them in ``aclose()``;
  a closed client refuses requests (``ModelClosedError``), as httpx's and
  aiohttp's own clients do, rather than opening a session again.
* ``HttpClient.open(path, body)`` POSTs JSON (``dump_json``: a lone surrogate
  in a string becomes U+FFFD) and yields a 2xx response. Before
  the first byte of a 2xx reply, retryable failures (408/409/429/5xx,
  connection errors, timeouts) are retried with exponential backoff and
  jitter (tenacity), honouring ``retry-after-ms``, ``Retry-After`` (seconds
  or an HTTP date) and vendor body hints (``RateLimitedError.retry_after``).
  Quota/billing errors and other 4xx are never retried. An event stream is
  read up to its first event before it is handed on: one that ends with no
  event is an ``UnexpectedReplyError``, retried. Once a reply streams,
  nothing is retried: a failure surfaces as ``ProviderConnectionError(partial=True)``.
* A model reply holds at most ``HttpSettings.max_reply_bytes`` (64 MiB by
  default), whole or streamed: past it, ``ReplyTooLargeError`` and the
  connection closed (``_reply_cap``), never a server's endless stream in memory.
* ``iter_sse`` / ``iter_ndjson`` (from ``_streams``, re-exported) read a
  streamed body with incremental UTF-8 decoding across network chunks (a
  character split between two TCP reads survives).

API keys live in request headers only; they never reach logs, reprs or error
messages: every credential header value (``CREDENTIAL_HEADERS``) is
registered with ``agentflow._secrets``, whose mask every ``ProviderError``
applies to its message (a key, or a prefix of one, a server echoes).

Redirects are never followed: a 3xx reply raises ``RedirectError`` naming
the target. aiohttp would follow a cross-origin 307/308 carrying every
header but ``Authorization`` (so ``x-api-key``, ``x-goog-api-key``... would
leave their origin); no vendor API redirects its endpoints.

Settings and credentials live in ``_http_settings``, error mapping in
``_http_errors``, the retry policy in ``_retry``, one request in
``_exchange``, the steps it takes (prepare, admit, send, retry) in
``_sending``; this module re-exports their public names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

import aiohttp
import orjson

from agentflow._secrets import redact_urls
from agentflow.errors import InvalidModelError, ModelClosedError
from agentflow.providers._exchange import Exchange
from agentflow.providers._http_errors import (
    NOT_JSON,
    BodyErrorCheck,
    ErrorMapper,
    default_error,
    error_body,
    error_message,
    parse_retry_after,
)
from agentflow.providers._http_settings import (
    CREDENTIAL_HEADERS,
    BaseUrl,
    HttpSettings,
    RateHeaders,
    api_key_from,
    checked_headers,
    own_host,
    register_credentials,
    register_url_credentials,
    shared_governor,
)
from agentflow.providers._loop_sessions import LoopSessions
from agentflow.providers._payload import dump_json
from agentflow.providers._sending import RequestSteps
from agentflow.providers._streams import SSEEvent, iter_ndjson, iter_sse
from agentflow.ratelimit import RateGovernor

__all__ = [
    "CREDENTIAL_HEADERS",
    "NOT_JSON",
    "BodyErrorCheck",
    "ErrorMapper",
    "HttpClient",
    "HttpSettings",
    "RateHeaders",
    "SSEEvent",
    "api_key_from",
    "default_error",
    "error_body",
    "error_message",
    "iter_ndjson",
    "iter_sse",
    "own_host",
    "parse_retry_after",
    "read_json",
    "shared_governor",
]


class HttpClient(RequestSteps):
    """One model's HTTP session.

    Args:
        base_url: e.g. ``"https://api.openai.com/v1"``, as the model class
            checked it (``checked_base_url``: a ``BaseUrl``, checked once).
        headers: sent with every request (auth goes here; never logged).
        vendor: name used in errors and logs.
        error_mapper: the vendor's ``ErrorMapper`` (default: by status).
        settings: timeouts, retries, connection limit.
        body_error: a vendor's ``BodyErrorCheck`` for 2xx replies that are not
            event streams; an error it finds is raised (and retried) like an
            HTTP error. The body stays readable afterwards (aiohttp caches it).
        governor: the account's ``RateGovernor`` (``agentflow.ratelimit``):
            each attempt waits for its admission; ``None`` sends at once.
        rate_headers: the vendor's reader of rate-limit headers, fed to the governor.
        model: the model's id, named (as ``vendor:model``) by ``ModelClosedError``.

    Raises:
        InvalidModelError: ``base_url`` holds ``user:password@`` and ``headers``
            an ``Authorization`` (aiohttp refuses to send both, at the first
            request, as a bare ``ValueError``), or a header holds a control
            character (``checked_headers``; outer whitespace is dropped).
    """

    def __init__(
        self,
        base_url: BaseUrl,
        *,
        headers: Mapping[str, str] | None = None,
        vendor: str,
        error_mapper: ErrorMapper | None = None,
        settings: HttpSettings | None = None,
        body_error: BodyErrorCheck | None = None,
        governor: RateGovernor | None = None,
        rate_headers: RateHeaders | None = None,
        model: str = "",
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.closed = False
        """``aclose()`` was called: requests raise ``ModelClosedError``."""
        self.governor = governor
        self._rate_headers = rate_headers
        self.vendor = vendor
        self.settings = settings or HttpSettings()
        self._headers = checked_headers(vendor, {"content-type": "application/json",
                                                 **(headers or {}),
                                                 **self.settings.extra_headers})
        url = urlsplit(self.base_url)
        if (url.username or url.password) and any(
                k.lower() == "authorization" for k in self._headers):
            raise InvalidModelError(
                f"{vendor}: base_url {redact_urls(self.base_url)!r} carries user:password@ "
                "credentials and the model also sends an API key (an Authorization header); "
                "only one can be sent: drop the user info from the URL, or give no API key")
        register_credentials(self._headers)
        register_url_credentials(self.base_url)
        self._map_error = error_mapper or (lambda s, h, b: default_error(vendor, s, h, b))
        self._body_error = body_error
        self._replies = True
        self._sessions = LoopSessions(self._new_session)
        self._open: set[aiohttp.ClientResponse] = set()  # replies being read (Exchange)
        s = self.settings
        self._whole_timeout = aiohttp.ClientTimeout(  # a whole reply under a deadline
            total=None, connect=s.connect_timeout, sock_read=None)

    def __repr__(self) -> str:
        return f"HttpClient(base_url={redact_urls(self.base_url)!r}, vendor={self.vendor!r})"

    @property
    def _session(self) -> aiohttp.ClientSession | None:
        """The running loop's session, if one was made (tests look at it)."""
        return self._sessions.current()

    def _session_now(self) -> aiohttp.ClientSession:
        """The running loop's session: one per event loop, each closed on its own
        loop when that loop ends (``_loop_sessions``), so a model reused across
        loops (``asyncio.run`` twice, threads) leaks no session or socket.

        Raises:
            ModelClosedError: the client was closed (``check_open``).
        """
        self.check_open()
        return self._sessions.get()

    def check_open(self) -> None:
        """Nothing, while the client is open.

        Raises:
            ModelClosedError: ``aclose()`` was called (it names ``vendor:model``).
        """
        if self.closed:
            name = f"{self.vendor}:{self.model}" if self.model else self.vendor
            raise ModelClosedError(
                f"the model {name} was used after aclose() (its own, its agent's or the end of "
                "its 'async with'): a closed model sends no more requests; make a new model, "
                "and close it once it is no longer needed", model=name)

    def _new_session(self) -> aiohttp.ClientSession:
        s = self.settings
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=s.connection_limit, force_close=s.force_close),
            timeout=aiohttp.ClientTimeout(
                total=None, connect=s.connect_timeout, sock_read=s.read_timeout
            ),
            json_serialize=lambda obj: dump_json(obj).decode(),
            headers=self._headers,  # every request's (RequestSteps._prepare): merged once
        )

    def sibling(self, *, governor: RateGovernor | None = None) -> HttpClient:
        """A client to the same API root with the same headers, error mapping and
        settings, its own session, and ``governor`` (default: none). For
        traffic the live rate limits do not count (vendor batch APIs: file
        uploads and polls must not be admitted as model requests). Its 2xx
        bodies are not model replies, so the model's ``body_error`` check is
        not applied to them (a batch operation may hold its own ``error``, and
        a results file is read line by line, not whole).

        Raises:
            ModelClosedError: this client was closed (a closed model makes no
                new clients either).
        """
        self.check_open()
        clone = HttpClient(self.base_url, headers=self._headers, vendor=self.vendor,
                           error_mapper=self._map_error, settings=self.settings,
                           governor=governor, rate_headers=self._rate_headers, model=self.model)
        clone._replies = False
        return clone

    async def aclose(self) -> None:
        """Close the sessions: the running loop's now, other loops' on their own
        loops (``LoopSessions.aclose``), for good: a later request raises
        ``ModelClosedError``. Idempotent. A reply still being read
        fails with ``ProviderConnectionError`` (aiohttp closes its connection
        without telling the reader, which would otherwise wait for data until
        ``read_timeout``)."""
        self.closed = True
        for response in list(self._open):
            response.content.set_exception(aiohttp.ClientConnectionError(
                f"the {self.vendor} client was closed while this reply was being read"))
        await self._sessions.aclose()

    def open(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        method: str = "POST",
        raw: bytes | None = None,
        whole: bool = False,
        media: tuple[int, int] = (0, 0),
        deadline: float | Literal["settings"] | None = "settings",
    ) -> Exchange:
        """POST ``body`` as JSON to ``path`` and yield the 2xx response, all of
        it (connection, retries, reading the reply inside the ``async with``)
        within ``deadline`` seconds (``"settings"``: ``settings.deadline``;
        ``None``: no limit; a model whose replies take as long as their
        budget passes its own per request: ``agentflow.providers.local``).
        ``raw``: send these bytes instead of ``body`` (a multipart upload,
        with its ``content-type`` in ``headers``; ``b""`` for a GET without
        a body). ``whole``: the reply
        comes in one piece once the model is done (not streamed), so no read
        timeout applies before it, only the deadline. ``media``: ``(tokens,
        chars)`` of the request's image and document blocks
        (``agentflow.media.tokens.media_cost``): the rate governor counts their
        tokens by the profile's rule instead of their base64 as text.

        The body is dropped once sent (``Exchange``).

        Raises:
            ModelClosedError: the client was closed (``aclose``), now or
                while the request waited or retried.
            DeadlineExceededError: the deadline passed (a server trickling
                keep-alive comments, retries that add up); never retried.
            ProviderError: the mapped error, after retries where allowed;
                ``BadRequestError`` (never sent) for a body JSON cannot carry.
        """
        self.check_open()
        limit = self.settings.deadline if deadline == "settings" else deadline
        return Exchange(self, path, body, {"headers": headers, "method": method, "raw": raw,
                                           "whole": whole, "media": media, "deadline": limit})


async def read_json(response: aiohttp.ClientResponse) -> Any:
    """The whole body parsed as JSON (whatever the content type)."""
    return orjson.loads(await response.read())
