"""The HTTP layer every adapter shares: one aiohttp session per model, SSE and
NDJSON readers, vendor error mapping, and retries with backoff.

* ``HttpClient`` owns one ``aiohttp.ClientSession`` (created lazily inside
  the running loop, with a bounded connector) and closes it in ``aclose()``.
* ``HttpClient.open(path, body)`` POSTs JSON (``dump_json``: a lone surrogate
  in a string becomes U+FFFD) and yields a 2xx response. Before
  the first byte of a 2xx reply, retryable failures (408/409/429/5xx,
  connection errors, timeouts) are retried with exponential backoff and
  jitter (tenacity), honouring ``retry-after-ms``, ``Retry-After`` (seconds
  or an HTTP date) and vendor body hints (``RateLimitedError.retry_after``).
  Quota/billing errors and other 4xx are never retried. Once a reply streams,
  nothing is retried: a failure surfaces as ``ProviderConnectionError(partial=True)``.
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
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import inspect
import math
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
import orjson
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from agentflow._logging import get_logger
from agentflow._secrets import redact_urls, register_secret
from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    InvalidModelError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    QuotaExceededError,
    RateLimitedError,
    RedirectError,
    ServerError,
)
from agentflow.providers._exchange import Exchange
from agentflow.providers._payload import dump_json
from agentflow.providers._streams import SSEEvent, iter_ndjson, iter_sse
from agentflow.ratelimit import (
    RateGovernor,
    RateLease,
    RateLimitSnapshot,
    estimate_request_tokens,
    governor_for,
)

__all__ = [
    "CREDENTIAL_HEADERS",
    "BodyErrorCheck",
    "ErrorMapper",
    "HttpClient",
    "HttpSettings",
    "RateHeaders",
    "SSEEvent",
    "api_key_from",
    "default_error",
    "error_message",
    "iter_ndjson",
    "iter_sse",
    "own_host",
    "parse_retry_after",
    "read_json",
    "shared_governor",
]

_log = get_logger("agentflow.http")

CREDENTIAL_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key",
})
"""Header names (lower case) whose values are credentials: registered for
masking by every ``HttpClient`` (the header names vendors use: OpenAI-style
``Authorization: Bearer``, Anthropic ``x-api-key``, Gemini ``x-goog-api-key``,
Azure-style ``api-key``)."""

ErrorMapper = Callable[[int, Mapping[str, str], bytes], ProviderError]
"""``(status, headers, body) -> ProviderError``: a vendor's error mapping."""

BodyErrorCheck = Callable[[Mapping[str, str], bytes], "ProviderError | None"]
"""``(headers, body) -> ProviderError | None``: finds an error a vendor reports
inside a 2xx JSON body (MiniMax: HTTP 200 + ``base_resp.status_code``)."""

RateHeaders = Callable[[Mapping[str, str]], "RateLimitSnapshot | None"]
"""``headers -> RateLimitSnapshot | None``: a vendor's rate-limit header reader."""


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Transport settings of one model.

    Attributes:
        connect_timeout: seconds to establish a connection.
        read_timeout: seconds between two reads of the reply (a stream that
            stalls longer fails with ``ProviderTimeoutError``). A whole
            (non-streamed) reply sends nothing until the model is done, so
            its wait is bounded by ``deadline`` instead (by ``read_timeout``
            when there is no deadline).
        max_retries: retries after the first attempt (0 disables them).
        backoff_initial / backoff_max: seconds, for exponential backoff with jitter.
        max_retry_after: longest server-requested wait honoured, in seconds.
        connection_limit: concurrent connections of the session's connector.
        force_close: open a new connection per request (for servers that close
            connections they advertise as keep-alive, like llama.cpp's after a stream).
        deadline: seconds for one whole request: connecting, retries and
            reading every byte of the reply (default 600; ``None``: no limit).
            ``read_timeout`` alone cannot stop a server that keeps sending
            keep-alive comments; this can (``DeadlineExceededError``).
        rate_governor: admit requests through the process's shared
            ``RateGovernor`` of the account and model family (``shared_governor``).
    """

    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_retries: int = 3
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    max_retry_after: float = 120.0
    connection_limit: int = 128
    force_close: bool = False
    deadline: float | None = 600.0
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    rate_governor: bool = True


def api_key_from(explicit: str | None, env_var: str) -> str | None:
    """``explicit`` or the vendor's usual environment variable (``""``: none)."""
    if explicit:
        return explicit
    return (os.environ.get(env_var) or None) if env_var else None


def shared_governor(
    vendor: str, base_url: str, api_key: str | None, family: str, settings: HttpSettings | None,
) -> RateGovernor | None:
    """The process's governor for (vendor, API root, key, model family), or ``None``
    when ``settings.rate_governor`` is off."""
    if settings is not None and not settings.rate_governor:
        return None
    return governor_for(vendor, base_url=base_url, api_key=api_key, family=family)


def own_host(base_url: str, vendor_url: str) -> bool:
    """Whether ``base_url`` is on the vendor's own host: only then is a key
    taken from the environment, so it never reaches a third-party server."""
    return urlsplit(base_url).netloc == urlsplit(vendor_url).netloc


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an
    HTTP date), or ``None`` (unreadable, ``nan`` or ``inf`` included)."""
    ms = headers.get("retry-after-ms") or headers.get("Retry-After-Ms")
    if ms:
        with contextlib.suppress(ValueError):
            if math.isfinite(millis := float(ms)):
                return max(0.0, millis / 1000)
    value = headers.get("retry-after") or headers.get("Retry-After")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:  # "nan"/"inf" are no delay: the default backoff, never a storm or an endless wait
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_message(body: bytes, *, _nested: bool = False) -> tuple[str, str | None, Any]:
    """``(message, code, parsed_json)`` from an error body of any common shape:
    ``{"error":{"message","code"|"type"}}``, ``{"error":"..."}``,
    ``{"message","code"}``, FastAPI's ``{"detail": ...}`` (``_detail``), or a
    one-element list of those; an HTML error page (a proxy's 413 or 502) by its
    ``<title>``. The body is parsed as JSON whatever its content type (DeepSeek
    sends octet-stream).

    A gateway's wrapped upstream error (OpenRouter: ``"Provider returned
    error"`` with the vendor's own body in ``error.metadata.raw``, per its
    API errors reference) reads ``"<message>: <upstream message>"``, so the
    vendor's words ("Thinking mode does not support this tool_choice") still
    classify the error."""
    if not body.strip():
        return "(empty body)", None, None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body.decode(errors="replace")
        title = _HTML_TITLE.search(text[:4000])
        if title and title.group(1).strip():  # a proxy's or gateway's error page
            return f"{' '.join(title.group(1).split())} (an HTML error page)", None, None
        return text[:500] or "(empty body)", None, None
    if data is None:
        return "(null body)", None, None
    node = data[0] if isinstance(data, list) and data else data
    if isinstance(node, dict) and "detail" in node and not {"error", "message"} & set(node):
        return _detail(node["detail"]), None, data
    if isinstance(node, dict):
        err = node.get("error", node)
        if isinstance(err, str):
            return err, None, data
        if isinstance(err, dict):
            message = str(err.get("message") or err.get("msg") or err)
            code = err.get("code") or err.get("type") or err.get("status")
            meta = err.get("metadata")
            raw = meta.get("raw") if isinstance(meta, dict) and not _nested else None
            if raw:
                inner = raw if isinstance(raw, str) else orjson.dumps(raw).decode()
                upstream = error_message(inner.encode(errors="replace"), _nested=True)[0]
                if upstream and upstream != "(empty body)" and upstream not in message:
                    message = f"{message}: {upstream}"
            return message, str(code) if code is not None else None, data
    return str(data)[:500], None, data


_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


def _detail(detail: Any) -> str:
    """The message of a FastAPI-style ``{"detail": ...}`` body (llama-cpp-python,
    proxies built on FastAPI): the text, or each validation error as
    ``loc: msg`` (``{"loc": ["body", "messages"], "msg": "field required"}``)."""
    if isinstance(detail, str):
        return detail or "(empty detail)"
    if isinstance(detail, list):
        parts = []
        for item in detail[:10]:
            if isinstance(item, dict) and "msg" in item:
                loc = ".".join(str(x) for x in item.get("loc") or ())
                parts.append(f"{loc}: {item['msg']}" if loc else str(item["msg"]))
            else:
                parts.append(str(item))
        return "; ".join(parts)[:500] or "(empty detail)"
    return str(detail)[:500]


def default_error(
    vendor: str, status: int, headers: Mapping[str, str], body: bytes
) -> ProviderError:
    """Map an HTTP error to the ``ProviderError`` tree by status."""
    message, code, _ = error_message(body)
    kw: dict[str, Any] = {"status": status, "code": code, "vendor": vendor}
    if status == 429:
        if code in ("insufficient_quota", "billing_error"):
            return QuotaExceededError(message, **kw)
        return RateLimitedError(message, retry_after=parse_retry_after(headers), **kw)
    if status in (400, 422):
        return BadRequestError(message, **kw)
    if status == 401:
        return AuthenticationError(message, **kw)
    if status == 402:
        return QuotaExceededError(message, **kw)
    if status == 403:
        return PermissionDeniedError(message, **kw)
    if status == 404:
        return NotFoundError(message, **kw)
    error: ProviderError
    if status in (503, 529):
        error = OverloadedError(message, **kw)
    elif status in (408, 409) or status >= 500:
        error = ServerError(message, **kw)
    else:
        return BadRequestError(message, **kw)
    hint = parse_retry_after(headers)
    if hint is not None:  # honoured by the retry wait, as for 429
        error.retry_after = hint
    return error


# tenacity >= 9.2 renamed wait_exponential_jitter's ``initial`` to ``multiplier``
_BACKOFF_START = (
    "multiplier"
    if "multiplier" in inspect.signature(wait_exponential_jitter.__init__).parameters
    else "initial"
)


class _Wait:
    """Backoff: the server's ``retry_after`` when given (capped), else
    exponential with jitter."""

    def __init__(self, settings: HttpSettings) -> None:
        self.settings = settings
        self.exp = wait_exponential_jitter(
            **{_BACKOFF_START: settings.backoff_initial}, max=settings.backoff_max,
            jitter=settings.backoff_initial,
        )

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if isinstance(hint, int | float):
            return min(float(hint), self.settings.max_retry_after)
        return float(self.exp(state))


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.retryable and not getattr(exc, "partial", False)


class HttpClient:
    """One model's HTTP session.

    Args:
        base_url: e.g. ``"https://api.openai.com/v1"`` (no trailing slash needed).
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

    Raises:
        InvalidModelError: ``base_url`` holds ``user:password@`` and ``headers``
            an ``Authorization`` (aiohttp refuses to send both, at the first
            request, as a bare ``ValueError``).
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        vendor: str,
        error_mapper: ErrorMapper | None = None,
        settings: HttpSettings | None = None,
        body_error: BodyErrorCheck | None = None,
        governor: RateGovernor | None = None,
        rate_headers: RateHeaders | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.governor = governor
        self._rate_headers = rate_headers
        self.vendor = vendor
        self.settings = settings or HttpSettings()
        self._headers = {"content-type": "application/json", **(headers or {}),
                         **self.settings.extra_headers}
        url = urlsplit(self.base_url)
        if (url.username or url.password) and any(
                k.lower() == "authorization" for k in self._headers):
            raise InvalidModelError(
                f"{vendor}: base_url {redact_urls(self.base_url)!r} carries user:password@ "
                "credentials and the model also sends an API key (an Authorization header); "
                "only one can be sent: drop the user info from the URL, or give no API key")
        _register_credentials(self._headers)
        self._map_error = error_mapper or (lambda s, h, b: default_error(vendor, s, h, b))
        self._body_error = body_error
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        s = self.settings
        self._whole_timeout = None if s.deadline is None else aiohttp.ClientTimeout(
            total=None, connect=s.connect_timeout, sock_read=None)

    def __repr__(self) -> str:
        return f"HttpClient(base_url={redact_urls(self.base_url)!r}, vendor={self.vendor!r})"

    def _session_now(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            s = self.settings
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=s.connection_limit, force_close=s.force_close),
                timeout=aiohttp.ClientTimeout(
                    total=None, connect=s.connect_timeout, sock_read=s.read_timeout
                ),
                json_serialize=lambda obj: dump_json(obj).decode(),
            )
            self._loop = loop
        return self._session

    def sibling(self, *, governor: RateGovernor | None = None) -> HttpClient:
        """A client to the same API root with the same headers, error mapping and
        settings, its own session, and ``governor`` (default: none). For
        traffic the live rate limits do not count (vendor batch APIs: file
        uploads and polls must not be admitted as model requests)."""
        clone = HttpClient(self.base_url, headers=self._headers, vendor=self.vendor,
                           error_mapper=self._map_error, settings=self.settings,
                           body_error=self._body_error, governor=governor,
                           rate_headers=self._rate_headers)
        return clone

    async def aclose(self) -> None:
        """Close the session (idempotent)."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

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
    ) -> Exchange:
        """POST ``body`` as JSON to ``path`` and yield the 2xx response, all of
        it (connection, retries, reading the reply inside the ``async with``)
        within ``settings.deadline`` seconds. ``raw``: send these bytes instead
        of ``body`` (a multipart upload, with its ``content-type`` in
        ``headers``; ``b""`` for a GET without a body). ``whole``: the reply
        comes in one piece once the model is done (not streamed), so no read
        timeout applies before it, only the deadline. ``media``: ``(tokens,
        chars)`` of the request's image and document blocks
        (``agentflow.media_tokens.media_cost``): the rate governor counts their
        tokens by the profile's rule instead of their base64 as text.

        The body is dropped once sent (``Exchange``).

        Raises:
            DeadlineExceededError: the deadline passed (a server trickling
                keep-alive comments, retries that add up); never retried.
            ProviderError: the mapped error, after retries where allowed;
                ``BadRequestError`` (never sent) for a body JSON cannot carry.
        """
        return Exchange(self, path, body, {"headers": headers, "method": method, "raw": raw,
                                           "whole": whole, "media": media})

    def _prepare(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None,
        raw: bytes | None,
    ) -> tuple[str, bytes, Mapping[str, str]]:
        """The URL, the payload (``body`` as JSON, or ``raw`` bytes) and the
        headers of a request to ``path`` (``Exchange`` sends it).

        Raises:
            BadRequestError: (never sent) a body JSON cannot carry.
        """
        url = path if path.startswith("http") else f"{self.base_url}/{path.lstrip('/')}"
        try:  # lone surrogates (os.fsdecode...) become U+FFFD
            payload = dump_json(body) if raw is None else raw
        except TypeError as exc:
            raise BadRequestError(f"the request body is not JSON: {exc}", status=None,
                                  vendor=self.vendor) from exc
        all_headers = {**self._headers, **headers} if headers else self._headers
        if headers:
            _register_credentials(headers)
        return url, payload, all_headers

    async def _admit(self, body: Mapping[str, Any], payload: bytes,
                     media: tuple[int, int] = (0, 0)) -> RateLease | None:
        """The governor's admission for this request (``None`` without a governor):
        the payload's characters less the media blocks' base64, as text, plus the
        media's own tokens (``media``, see ``open``)."""
        if self.governor is None:
            return None
        cap = body.get("max_tokens", body.get("max_completion_tokens"))
        media_tokens, media_chars = media
        tokens = estimate_request_tokens(
            len(payload) - media_chars, cap if isinstance(cap, int) else None,
            self.governor.typical_output_tokens, media_tokens=media_tokens)
        return await self.governor.admit(tokens)

    def _observe(self, lease: RateLease | None, response: aiohttp.ClientResponse) -> None:
        """Tell the governor what the reply's rate-limit headers said."""
        if lease is not None:
            snapshot = self._rate_headers(response.headers) if self._rate_headers else None
            lease.observe(snapshot, ok=response.status < 400)

    async def _send_with_retries(
        self, method: str, url: str, payload: bytes, headers: Mapping[str, str],
        first_error: ProviderError, lease: RateLease | None = None,
        client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> aiohttp.ClientResponse:
        """Retry after ``first_error`` (the first attempt's), with backoff;
        ``first_error`` itself when it may not be retried (or retries are off).
        The common case never comes here: a first attempt that succeeds pays
        nothing for the retry machinery."""
        if not _retryable(first_error) or self.settings.max_retries < 1:
            raise first_error
        pending: ProviderError | None = first_error
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.max_retries + 1),
            wait=_Wait(self.settings),
            retry=retry_if_exception(_retryable),
            reraise=True,
            before_sleep=lambda st: _log.info(
                "http.retry", vendor=self.vendor, attempt=st.attempt_number,
                error=type(st.outcome.exception()).__name__ if st.outcome else None,
            ),
        )
        response: aiohttp.ClientResponse | None = None
        async for attempt in retrying:
            with attempt:
                if pending is not None:  # replay the first attempt's failure
                    error, pending = pending, None
                    raise error
                if lease is not None:
                    await lease.readmit()
                response = await self._send(method, url, payload, headers, lease, client_timeout)
        assert response is not None
        return response

    async def _send(
        self, method: str, url: str, payload: bytes, headers: Mapping[str, str],
        lease: RateLease | None = None, client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> aiohttp.ClientResponse:
        session = self._session_now()
        try:
            if client_timeout is None:
                response = await session.request(
                    method, url, data=payload, headers=headers, allow_redirects=False)
            else:
                response = await session.request(
                    method, url, data=payload, headers=headers, allow_redirects=False,
                    timeout=client_timeout)
        except TimeoutError as exc:
            raise ProviderTimeoutError(
                f"connecting to {self.vendor} timed out", vendor=self.vendor
            ) from exc
        except aiohttp.ClientError as exc:
            raise ProviderConnectionError(
                f"cannot reach {self.vendor}: {type(exc).__name__}", vendor=self.vendor
            ) from exc
        self._observe(lease, response)
        if 300 <= response.status < 400:
            response.release()
            raise _redirect_error(self.vendor, response.status, url,
                                  response.headers.get("Location", ""))
        if response.status >= 400:
            try:
                body = await response.read()
            except (aiohttp.ClientError, TimeoutError):
                body = b""
            finally:
                response.release()
            error = self._map_error(response.status, response.headers, body)
            if lease is not None and isinstance(error, RateLimitedError):
                hint = error.retry_after
                lease.throttled(None if hint is None else min(hint, self.settings.max_retry_after))
            raise error
        if self._body_error is not None and response.content_type != "text/event-stream":
            try:
                body = await response.read()
            except (aiohttp.ClientError, TimeoutError) as exc:
                response.release()
                raise ProviderConnectionError(
                    f"the reply from {self.vendor} broke: {type(exc).__name__}",
                    vendor=self.vendor,
                ) from exc
            in_body = self._body_error(response.headers, body)
            if in_body is not None:
                response.release()
                raise in_body
        return response


def _register_credentials(headers: Mapping[str, str]) -> None:
    for name, value in headers.items():
        if name.lower() in CREDENTIAL_HEADERS:
            register_secret(value)


def _redirect_error(vendor: str, status: int, url: str, location: str) -> RedirectError:
    """The error for a 3xx reply to ``url`` pointing at ``location``."""
    target = urljoin(url, location) if location else "(no Location header)"
    return RedirectError(
        f"{url} answered {status} redirecting to {target}; redirects are not followed "
        f"(the request's credentials must not reach another origin): set base_url to the "
        f"target if you trust it", location=target, status=status, vendor=vendor)


async def read_json(response: aiohttp.ClientResponse) -> Any:
    """The whole body parsed as JSON (whatever the content type)."""
    return orjson.loads(await response.read())
