"""Sending one request of ``HttpClient`` (``agentflow.providers._http``), the
steps ``Exchange`` takes: the request built (``_prepare``: URL, JSON payload,
headers), admitted by the rate governor (``_admit_now``), sent once (``_send``: a
3xx is a ``RedirectError``, a 4xx/5xx the vendor's mapped error, a 2xx body a
vendor's ``BodyErrorCheck`` flags its error, a 2xx that is empty or an HTML
page, a whole body whose JSON is cut off or malformed, or an event stream
that ends with no event, an ``UnexpectedReplyError``; an event stream whose
first event carries an error, that error, as a refusal (``_stream_head``); the governor told what
the reply's rate-limit headers said), and retried after a retryable failure
with backoff and jitter (``_send_with_retries``, tenacity; ``_retry`` holds
the policy). ``RequestSteps`` is ``HttpClient``'s base class: it holds these
steps, the client its session and settings.

What ``_send`` read of a 2xx reply to check it is handed on with it
(``Sent``), never read twice: a whole body's parsed JSON, an event stream's
first bytes (``Exchange.parsed`` / ``Exchange.head``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, TypeAlias

import aiohttp
import orjson
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from agentflow._logging import get_logger
from agentflow.errors import (
    BadRequestError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitedError,
)
from agentflow.providers._http_errors import (
    EXCERPT_BYTES,
    HTML_TYPES,
    NOT_JSON,
    STREAM_TYPES,
    BodyErrorCheck,
    ErrorMapper,
    error_message,
    eventless_stream,
    implied_retry_after,
    redirect_error,
    server_verdict,
    unexpected_reply,
    unreadable_reply,
)
from agentflow.providers._http_settings import (
    BaseUrl,
    HttpSettings,
    RateHeaders,
    join_url,
    register_credentials,
)
from agentflow.providers._payload import NOT_PARSED, dump_json
from agentflow.providers._reply_cap import cap_reply
from agentflow.providers._retry import Wait, retryable
from agentflow.providers._streams import first_payload, has_event
from agentflow.ratelimit import RateGovernor, RateLease, estimate_request_tokens

__all__ = ["HEAD_BYTES", "RequestSteps", "Sent"]

_log = get_logger("agentflow.http")

Sent: TypeAlias = tuple[aiohttp.ClientResponse, Any, bytes]
"""A 2xx reply as ``_send`` returns it: the response, its whole body parsed
(``NOT_PARSED`` when it was not read whole) and the first bytes of an event
stream (``b""`` for any other body), read to check it and not read again."""

HEAD_BYTES = 65536
"""Bytes of comments and blank lines an event stream may open with before
``_send`` hands it on without its first event (a server that sends keep-alives
for long before it answers)."""


class RequestSteps:
    """The request steps of an HTTP client (``HttpClient`` sets the attributes
    below and gives the running loop's session)."""

    base_url: BaseUrl
    vendor: str
    settings: HttpSettings
    governor: RateGovernor | None
    _headers: Mapping[str, str]
    _rate_headers: RateHeaders | None
    _map_error: ErrorMapper
    _body_error: BodyErrorCheck | None
    _replies: bool
    """2xx bodies are model replies: one that is empty or an HTML page is an
    ``UnexpectedReplyError`` (a batch API's files and operations are not)."""

    def _session_now(self) -> aiohttp.ClientSession:
        """The running loop's session (``HttpClient._session_now``)."""
        raise NotImplementedError

    def _prepare(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None,
        raw: bytes | None,
    ) -> tuple[str, bytes, Mapping[str, str] | None]:
        """The URL, the payload (``body`` as JSON, or ``raw`` bytes) and the
        headers of a request to ``path`` (``Exchange`` sends it): ``None`` for
        the client's own (the session sends them: ``HttpClient._new_session``),
        else those merged with the request's ``headers``.

        Raises:
            BadRequestError: (never sent) a body JSON cannot carry.
        """
        url = path if path.startswith("http") else join_url(self.base_url, path)
        try:  # lone surrogates (os.fsdecode...) become U+FFFD
            payload = dump_json(body) if raw is None else raw
        except TypeError as exc:
            raise BadRequestError(f"the request body is not JSON: {exc}", status=None,
                                  vendor=self.vendor) from exc
        if not headers:
            return url, payload, None
        register_credentials(headers)
        return url, payload, {**self._headers, **headers}

    def _admit_now(self, body: Mapping[str, Any], payload: bytes,
                   media: tuple[int, int] = (0, 0)) -> tuple[RateLease | None, float]:
        """The governor's admission for this request when it may go out at once
        (``(None, 0.0)`` without a governor), else ``(None, tokens)``: then
        ``await self.governor.admit(tokens)`` (no coroutine for the common
        case). ``tokens``: the payload's characters less the media blocks'
        base64, as text, plus the media's own tokens (``media``, see ``open``)."""
        governor = self.governor
        if governor is None:
            return None, 0.0
        cap = body.get("max_tokens", body.get("max_completion_tokens"))
        media_tokens, media_chars = media
        tokens = estimate_request_tokens(
            len(payload) - media_chars, cap if isinstance(cap, int) else None,
            governor.typical_output_tokens, media_tokens=media_tokens)
        return governor.admit_now(tokens), tokens

    def _observe(self, lease: RateLease | None, response: aiohttp.ClientResponse) -> None:
        """Tell the governor what the reply's rate-limit headers said."""
        if lease is not None:
            snapshot = self._rate_headers(response.headers) if self._rate_headers else None
            lease.observe(snapshot, ok=response.status < 400)

    async def _send_with_retries(
        self, method: str, url: str, payload: bytes, headers: Mapping[str, str] | None,
        first_error: ProviderError, lease: RateLease | None = None,
        client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> Sent:
        """Retry after ``first_error`` (the first attempt's), with backoff;
        ``first_error`` itself when it may not be retried (or retries are off).
        The common case never comes here: a first attempt that succeeds pays
        nothing for the retry machinery."""
        if not retryable(first_error, self.settings) or self.settings.max_retries < 1:
            if first_error.retryable and first_error.retry_after is not None:
                _log.info("http.wait_too_long", vendor=self.vendor,
                          retry_after=first_error.retry_after,
                          max_retry_after=self.settings.max_retry_after)
            raise first_error
        pending: ProviderError | None = first_error
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.max_retries + 1),
            wait=Wait(self.settings),
            retry=retry_if_exception(partial(retryable, settings=self.settings)),
            reraise=True,
            before_sleep=lambda st: _log.info(
                "http.retry", vendor=self.vendor, attempt=st.attempt_number,
                error=type(st.outcome.exception()).__name__ if st.outcome else None,
                wait=st.next_action.sleep if st.next_action else None,
            ),
        )
        sent: Sent | None = None
        async for attempt in retrying:
            with attempt:
                if pending is not None:  # replay the first attempt's failure
                    error, pending = pending, None
                    raise error
                if lease is not None:
                    await lease.readmit()
                sent = await self._send(method, url, payload, headers, lease, client_timeout)
        assert sent is not None
        return sent

    async def _send(
        self, method: str, url: str, payload: bytes, headers: Mapping[str, str] | None,
        lease: RateLease | None = None, client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> Sent:
        """Send the request once; the 2xx reply, checked (see the module docstring).

        Raises:
            ProviderError: the reply's mapped error, or ``UnexpectedReplyError``
                (``ProviderTimeoutError``, ``ProviderConnectionError`` while
                the body is checked): retried where ``_retry`` says.
        """
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
        if self._replies:  # (a batch API's files may be large: read line by line)
            cap_reply(response, self.settings.max_reply_bytes, self.vendor)
        self._observe(lease, response)
        if 300 <= response.status < 400:
            response.release()
            raise redirect_error(self.vendor, response.status, url,
                                  response.headers.get("Location", ""))
        if response.status >= 400:
            try:
                body = await response.read()
            except (aiohttp.ClientError, TimeoutError):
                body = b""
            finally:
                response.release()
            error = server_verdict(self._map_error(response.status, response.headers, body),
                                   response.headers)
            raise self._waits(error, response, body, lease)
        if not self._replies:  # a batch API's file or operation: no model reply to check
            return response, NOT_PARSED, b""
        content_type = response.content_type  # parsed from the header: read once
        if content_type in HTML_TYPES or response.content_length == 0:
            raise await self._no_reply(response)  # retried as a 5xx is
        if content_type in STREAM_TYPES:
            ndjson = content_type == "application/x-ndjson"
            check = self._body_error
            head = await self._stream_head(response, ndjson if check is not None else None)
            if check is not None and (first := first_payload(head, ndjson)) is not None:
                early = check(response.headers, first, NOT_JSON)
                if early is not None:  # (nothing of it reached the caller: _stream_head)
                    response.release()
                    raise self._waits(early, response, first, lease)
            return response, NOT_PARSED, head
        parsed = NOT_PARSED
        if self._body_error is not None:
            try:  # the whole body, under the request's timeouts; released on failure
                body = await response.read()
            except (TimeoutError, aiohttp.ClientError) as exc:
                raise self._read_failed(
                    response, exc, f"while reading the reply from {self.vendor}",
                    f"the reply from {self.vendor} broke") from exc
            except BaseException:  # cancelled (the deadline): nobody reads it
                response.release()
                raise
            kind = response.headers.get("Content-Type", "")
            try:  # parsed once: the vendor's check reads it, the adapter takes it
                data = orjson.loads(body)  # (Exchange.parsed)
            except orjson.JSONDecodeError:
                data = NOT_JSON
            in_body = (self._body_error(response.headers, body, data)
                       or unexpected_reply(self.vendor, response.status, kind, body))
            if in_body is None:
                if data is NOT_JSON:
                    in_body = unreadable_reply(self.vendor, response.status, kind, body)
                else:
                    parsed = data
            if in_body is not None:
                response.release()
                raise in_body
        return response, parsed, b""

    def _waits(self, error: ProviderError, response: aiohttp.ClientResponse, body: bytes,
               lease: RateLease | None) -> ProviderError:
        """``error`` (the reply's, ``body`` its text), its wait implied where
        the server named none (a 429 or an overload whose message or bucket
        headers say when), the governor told of a rate limit."""
        if error.retry_after is None and isinstance(error, RateLimitedError | OverloadedError):
            error.retry_after = implied_retry_after(
                response.headers, error.message, self._bucket_reset(response.headers),
                error_message(body)[2])
        if lease is not None and isinstance(error, RateLimitedError):
            hint = error.retry_after
            lease.throttled(None if hint is None else min(hint, self.settings.max_retry_after))
        return error

    def _read_failed(self, response: aiohttp.ClientResponse, exc: BaseException, when: str,
                     broke: str) -> ProviderError:
        """The typed error of a failed read of ``response``'s body (released
        here): ``ProviderTimeoutError`` ("no data for Ns {when}") for a
        ``TimeoutError`` (aiohttp's ``ServerTimeoutError`` is one too),
        ``ProviderConnectionError`` ("{broke}: {aiohttp's error}") otherwise."""
        response.release()
        if isinstance(exc, TimeoutError):
            return ProviderTimeoutError(f"no data for {self.settings.read_timeout}s {when}",
                                        vendor=self.vendor)
        return ProviderConnectionError(f"{broke}: {type(exc).__name__}", vendor=self.vendor)

    async def _stream_head(self, response: aiohttp.ClientResponse, ndjson: bool | None
                           ) -> bytes:
        """The first bytes of an event stream, up to its first event (past
        any keep-alive comments, at most about ``HEAD_BYTES`` of them): a
        stream that ends before one is no reply, and nothing of it has
        reached the caller yet, so it is retried like an empty body.
        ``response`` is released on failure.

        With ``ndjson`` (not ``None``: the vendor checks bodies, a
        ``BodyErrorCheck``), up to the end of that first event (an NDJSON
        line when ``ndjson``): ``_send`` reads its payload with the check,
        and an error it carries (an ``{"error": ...}`` event: a 429 or an
        overload the server met once it had sent its 200) is raised as the
        refusal it stands for, not ``partial``: nothing of the stream has
        reached the caller, so the request is as safe to send again as one
        the server refused, under the same policy (``_retry``: backoff,
        ``Retry-After``, ``max_retries``; the governor told of a rate limit).
        An error event after the first is the reader's (``partial``:
        ``stream_retries``), whatever the network delivered with the first.

        Raises:
            UnexpectedReplyError: the stream ended with no event (``eventless_stream``).
            ProviderTimeoutError: no data for ``read_timeout`` seconds.
            ProviderConnectionError: the stream broke before its first event.
        """
        head = b""
        try:
            async for raw in response.content.iter_any():
                head += raw
                if len(head) > HEAD_BYTES or (has_event(head) and (
                        ndjson is None or first_payload(head, ndjson) is not None)):
                    return head
            if has_event(head):  # it ended within its first event: the reader's to judge
                return head
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise self._read_failed(
                response, exc, f"before the first event of the reply from {self.vendor}",
                f"the reply stream from {self.vendor} broke before its first event") from exc
        except BaseException:  # cancelled (the deadline): nobody reads it
            response.release()
            raise
        response.release()
        raise eventless_stream(self.vendor, response.status,
                               response.headers.get("Content-Type", ""), head)

    def _bucket_reset(self, headers: Mapping[str, str]) -> float | None:
        """Seconds until the rate-limit bucket the vendor's headers say is
        empty (``remaining`` 0) refills, the later of two; ``None`` when none
        is empty or the vendor sends no such headers."""
        snap = self._rate_headers(headers) if self._rate_headers else None
        if snap is None:
            return None
        resets = [reset for left, reset in ((snap.requests_remaining, snap.requests_reset),
                                            (snap.tokens_remaining, snap.tokens_reset))
                  if left is not None and left <= 0 and reset is not None]
        return max(resets) if resets else None

    async def _no_reply(self, response: aiohttp.ClientResponse) -> ProviderError:
        """The ``UnexpectedReplyError`` of a 2xx that is a web page (named by
        its start) or has no body; ``response`` is released."""
        try:
            page = b"" if response.content_length == 0 else await response.content.read(
                EXCERPT_BYTES)
        except (aiohttp.ClientError, TimeoutError):
            page = b""
        finally:
            response.release()
        error = unexpected_reply(self.vendor, response.status,
                                 response.headers.get("Content-Type", ""), page)
        assert error is not None  # a page, or no body: always one
        return error
