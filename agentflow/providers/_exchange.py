"""``Exchange``: one HTTP request and its reply, as the async context manager
``HttpClient.open`` returns.

A plain class rather than an ``@asynccontextmanager`` generator: the request
body is dropped as soon as it is sent (a generator context manager keeps its
arguments, the body among them, until the reply has been read), and a call
pays for no generator, no generator-finaliser registration and no
``contextlib`` layer; its deadline is ``_Deadline``, ``asyncio.timeout``'s
rules without its coroutines. What it does is ``open``'s contract: the whole exchange
(connection, retries, reading the reply inside the ``async with``) within
its deadline (``settings.deadline`` unless the request set its own); read
timeouts and broken streams while the reply is read become typed errors;
the response and the rate governor's lease are released on the way out,
whatever happens. What the HTTP layer read of the reply to check it is
the exchange's to hand on (``parsed``, ``head``, ``stream``), not read again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import aiohttp

from agentflow.errors import (
    DeadlineExceededError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)
from agentflow.providers._payload import NOT_PARSED
from agentflow.providers._streams import HeadedResponse
from agentflow.ratelimit import RateGovernor, RateLease

if TYPE_CHECKING:
    from agentflow.providers._http_settings import HttpSettings
    from agentflow.providers._sending import Sent

__all__ = ["Exchange", "ExchangeClient"]


class ExchangeClient(Protocol):
    """What an ``Exchange`` needs of the client that opened it (``HttpClient``):
    its settings and vendor name, and its request steps (prepare, admit, send)."""

    vendor: str
    settings: HttpSettings
    _whole_timeout: aiohttp.ClientTimeout
    _open: set[aiohttp.ClientResponse]

    def _prepare(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None,
        raw: bytes | None,
    ) -> tuple[str, bytes, Mapping[str, str] | None]: ...

    governor: RateGovernor | None

    def _admit_now(self, body: Mapping[str, Any], payload: bytes,
                   media: tuple[int, int] = (0, 0)) -> tuple[RateLease | None, float]: ...

    async def _send(
        self, method: str, url: str, payload: bytes, headers: Mapping[str, str] | None,
        lease: RateLease | None = None, client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> Sent: ...

    async def _send_with_retries(
        self, method: str, url: str, payload: bytes, headers: Mapping[str, str] | None,
        first_error: ProviderError, lease: RateLease | None = None,
        client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> Sent: ...


class _Deadline:
    """The deadline of one exchange: ``asyncio.timeout``'s rules (when it
    passes, the task is cancelled; leaving the scope with that cancellation,
    and no other cancel asked for since, means the deadline passed), entered
    and left without a coroutine or an enum state per request."""

    __slots__ = ("_cancelling", "_handle", "_task", "expired")

    def __init__(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("an Exchange with a deadline runs inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self.expired = False
        when = loop.time() + delay
        self._handle: asyncio.Handle | None = (
            loop.call_soon(self._fire) if when <= loop.time() else loop.call_at(when, self._fire))

    def _fire(self) -> None:
        self._handle = None
        self.expired = True
        self._task.cancel()

    def leave(self, exc: BaseException | None) -> bool:
        """Leave with ``exc`` in flight: whether it is this deadline's own
        cancellation (``asyncio.timeout`` would raise ``TimeoutError`` from it)."""
        handle = self._handle
        if handle is not None:
            handle.cancel()
            self._handle = None
        return (self.expired and self._task.uncancel() <= self._cancelling
                and type(exc) is asyncio.CancelledError)


class Exchange:
    """``async with client.open(...) as response``: see ``HttpClient.open``.

    Raises (on entry or exit):
        DeadlineExceededError: the deadline passed (``partial=True`` once the
            reply had started); never retried.
        ProviderTimeoutError: no data for ``read_timeout`` seconds while the
            reply was read.
        ProviderConnectionError: the reply stream broke (``partial=True``).
        ProviderError: the mapped error, after retries where allowed;
            ``BadRequestError`` (never sent) for a body JSON cannot carry.
    """

    __slots__ = ("_client", "_deadline_s", "_lease", "_request", "_response", "_scope", "parsed",
                 "response")

    def __init__(self, client: ExchangeClient, path: str, body: Mapping[str, Any],
                 options: dict[str, Any]) -> None:
        self._client = client
        self._request: tuple[str, Mapping[str, Any], dict[str, Any]] | None = (
            path, body, options)
        self._scope: _Deadline | None = None
        self._deadline_s: float | None = options["deadline"]
        self._response: aiohttp.ClientResponse | None = None
        self._lease: RateLease | None = None
        self.response: aiohttp.ClientResponse | None = None
        """What ``start`` returned (and entering gives), until the exchange ends."""
        self.parsed: Any = NOT_PARSED
        """The reply's whole body parsed as JSON, once started, when the HTTP
        layer read it to check it (a vendor's ``BodyErrorCheck``): take it
        rather than parse the body again (``NOT_PARSED`` otherwise)."""

    async def __aenter__(self) -> aiohttp.ClientResponse:
        if self.response is not None:  # ``start`` sent it already
            return self.response
        return await self.start()

    async def start(self) -> aiohttp.ClientResponse:
        """Send the request and return the 2xx response, as entering does; the
        ``async with`` that follows gets the same response and releases it.
        A caller that must look at a refusal before it holds the exchange
        (``BadRequestError`` here, nothing to release) starts it first. An
        event stream's first bytes, read to see that it holds an event, are
        read again first from the response returned (``HeadedResponse``).

        Raises: as the class says for entry.
        """
        request, self._request = self._request, None  # sent: the body is not kept
        if request is None:
            raise RuntimeError("an Exchange is entered once")
        client = self._client
        deadline = self._deadline_s
        if deadline is not None:  # no deadline: no scope (nor its timer) per request
            self._scope = _Deadline(deadline)
        try:  # inline, not a coroutine of the client's: one frame fewer per request in flight
            path, body, options = request
            del request
            url, payload, headers = client._prepare(path, body, options["headers"], options["raw"])
            lease, tokens = client._admit_now(body, payload, options["media"])
            if lease is None and client.governor is not None:  # no room now: wait for it
                lease = await client.governor.admit(tokens)
            del body  # sent from here on as ``payload``: the body is not kept
            method = options["method"]
            timeout = client._whole_timeout if options["whole"] and deadline is not None else None
            try:
                try:
                    response, self.parsed, head = await client._send(
                        method, url, payload, headers, lease, timeout)
                except ProviderError as exc:  # retried, or raised again, there
                    response, self.parsed, head = await client._send_with_retries(
                        method, url, payload, headers, exc, lease, timeout)
            except BaseException:
                if lease is not None:
                    lease.release()
                raise
        except BaseException as exc:
            self._leave(exc, started=False)
            raise
        self._response, self._lease = response, lease
        client._open.add(response)  # until released: aclose() fails its reader
        if head:  # the response's stand-in, typed as the response
            response = HeadedResponse(head, response)  # type: ignore[assignment]
        self.response = response
        return response

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        self.end(exc)
        return False

    def end(self, exc: BaseException | None) -> None:
        """Leave the exchange (``__aexit__``'s body, with no coroutine: a caller
        that started it with ``start`` may end it so, ``exc`` in flight or
        ``None``): the response and the lease released, the deadline's scope
        left. Returns when ``exc`` goes on as it is (the caller raises it).

        Raises: as the class says for exit (the typed error ``exc`` stands for).
        """
        response, lease = self._response, self._lease
        self._response = self._lease = self.response = None
        error = exc
        try:
            if exc is None:
                pass
            elif isinstance(exc, TimeoutError):  # first: a ServerTimeoutError is both
                raise ProviderTimeoutError(
                    f"no data for {self._client.settings.read_timeout}s while reading the reply",
                    vendor=self._client.vendor,
                ) from exc
            elif isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ClientConnectionError):
                raise ProviderConnectionError(
                    f"the reply stream broke: {type(exc).__name__}: {exc}", partial=True,
                    vendor=self._client.vendor,
                ) from exc
        except ProviderError as mapped:
            error = mapped
        finally:
            if response is not None:
                self._client._open.discard(response)
                response.release()
            if lease is not None:
                lease.release()
        self._leave(error, started=True)
        if error is not exc:
            assert error is not None
            raise error

    def _leave(self, exc: BaseException | None, *, started: bool) -> None:
        """Leave the deadline scope with ``exc`` in flight, as ``async with``
        would; a deadline that passed raises ``DeadlineExceededError``. Without a
        deadline there is no scope: ``exc`` goes on as it is."""
        scope = self._scope
        if scope is None:
            return
        if scope.leave(exc):  # its own cancellation: a TimeoutError, as asyncio.timeout's
            timeout = TimeoutError()
            timeout.__cause__ = exc
            raise self._deadline(started) from timeout
        if isinstance(exc, TimeoutError) and scope.expired:
            raise self._deadline(started) from exc

    def _deadline(self, started: bool) -> DeadlineExceededError:
        deadline = self._deadline_s
        return DeadlineExceededError(
            f"the request to {self._client.vendor} did not finish within its deadline of "
            f"{deadline or 0.0:g}s (HttpSettings.deadline, or the model's per request)",
            deadline=deadline or 0.0, partial=started, vendor=self._client.vendor,
        )
