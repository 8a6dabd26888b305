"""The shared HTTP layer (providers/_http.py) against a raw local server that
writes exactly the bytes a test gives: SSE and NDJSON framing, UTF-8 split
across writes, error mapping, retries with Retry-After, timeouts."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from aiohttp import web

from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    DeadlineExceededError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
)
from agentflow.messages import Msg
from agentflow.model import GenerateOptions
from agentflow.providers import HttpSettings, _exchange
from agentflow.providers._http import (
    HttpClient,
    SSEEvent,
    default_error,
    error_message,
    iter_ndjson,
    iter_sse,
    parse_retry_after,
    read_json,
)
from agentflow.providers._http_settings import CREDENTIAL_HEADERS
from agentflow.providers._payload import dump_json

FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.02, max_retries=2, read_timeout=30)


@dataclass
class Raw:
    """One scripted response: status, headers, body written as these pieces."""

    pieces: Sequence[bytes] = (b"",)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    pause: float = 0.005  # between pieces, so they arrive as separate reads
    latency: float = 0.0  # before the status line (a model working on a whole reply)


@asynccontextmanager
async def raw_server(*responses: Raw) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A server answering each request with the next ``Raw``; yields (url, request bodies)."""
    queue = deque(responses)
    seen: list[bytes] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(await request.read())
        raw = queue.popleft()
        await asyncio.sleep(raw.latency)
        response = web.StreamResponse(status=raw.status, headers=raw.headers)
        await response.prepare(request)
        for piece in raw.pieces:
            await response.write(piece)
            await asyncio.sleep(raw.pause)
        await response.write_eof()
        return response

    async with serve(handle) as url:
        yield url, seen


@asynccontextmanager
async def serve(handle: Callable[[web.Request], Awaitable[web.StreamResponse]]
                ) -> AsyncIterator[str]:
    """``handle`` answering every POST on 127.0.0.1; yields the base URL."""
    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def sse_of(*pieces: bytes) -> list[SSEEvent]:
    async with raw_server(Raw(pieces)) as (url, _):
        client = HttpClient(url, vendor="t", settings=FAST)
        try:
            async with client.open("x", {}) as response:
                return [e async for e in iter_sse(response)]
        finally:
            await client.aclose()


# ----------------------------------------------------------------------------- SSE / NDJSON


async def test_sse_comments_and_keep_alives_ignored() -> None:
    events = await sse_of(b": keep-alive\n\n", b":ping\n", b"data: 1\n\n", b": x\n\n",
                          b"data: [DONE]\n\n")
    assert [e.data for e in events] == ["1", "[DONE]"]


async def test_sse_multi_line_data_event_and_id() -> None:
    events = await sse_of(b"event: result\nid: 7\ndata: a\ndata:b\ndata\n\n")
    assert events == [SSEEvent("result", "a\nb\n", "7")]


@pytest.mark.parametrize("eol", [b"\r\n", b"\r", b"\n"], ids=["crlf", "cr", "lf"])
async def test_sse_line_endings(eol: bytes) -> None:
    raw = b"data: one" + eol + eol + b"data: two" + eol + b"data: 2b" + eol + eol
    # cut between CR and LF, and everywhere else, across network writes
    events = await sse_of(*[raw[i:i + 3] for i in range(0, len(raw), 3)])
    assert [e.data for e in events] == ["one", "two\n2b"]


async def test_sse_utf8_split_across_writes() -> None:
    payload = "data: {\"t\": \"é中😀\"}\n\n".encode()
    cut = payload.index("中".encode()) + 1  # inside a multi-byte character
    events = await sse_of(payload[:cut], payload[cut:cut + 2], payload[cut + 2:])
    assert orjson.loads(events[0].data) == {"t": "é中😀"}


async def test_sse_last_event_without_blank_line() -> None:
    assert [e.data for e in await sse_of(b"data: a\n\ndata: b")] == ["a", "b"]


async def test_ndjson_lines_and_malformed_line() -> None:
    async with raw_server(Raw([b'{"a": 1}\r\n\n{"b"', b': "\xc3', b'\xa9"}\n']),
                          Raw([b'{"a": 1}\n{broken\n'])) as (url, _):
        client = HttpClient(url, vendor="t", settings=FAST)
        async with client.open("x", {}) as response:
            assert [v async for v in iter_ndjson(response)] == [{"a": 1}, {"b": "é"}]
        with pytest.raises(ProviderConnectionError) as info:
            async with client.open("x", {}) as response:
                _ = [v async for v in iter_ndjson(response)]
        assert info.value.partial
        await client.aclose()


# ----------------------------------------------------------------------------- request bodies


async def test_lone_surrogates_in_the_body_are_replaced_not_fatal() -> None:
    body = {"content": "caf\udce9.txt", "caf\udce9": ["\ud83d\ude00", ("x\ud800",)], "n": 1}
    async with raw_server(Raw([b"{}"])) as (url, seen):
        client = HttpClient(url, vendor="t", settings=FAST)
        async with client.open("x", body) as response:
            assert await read_json(response) == {}
        await client.aclose()
    assert orjson.loads(seen[0]) == {"content": "caf\ufffd.txt", "caf\ufffd": ["😀", ["x\ufffd"]],
                                     "n": 1}


def test_dump_json_leaves_clean_values_alone() -> None:
    value = {"a": ["é😀", 1, None, 2.5]}
    assert dump_json(value) == orjson.dumps(value)
    assert dump_json({"b": 1, "a": "\udce9"}, option=orjson.OPT_SORT_KEYS) == (
        '{"a":"\ufffd","b":1}'.encode())


async def test_a_body_json_cannot_carry_is_a_bad_request_never_sent() -> None:
    async with raw_server(Raw([b"{}"])) as (url, seen):
        client = HttpClient(url, vendor="t", settings=FAST)
        with pytest.raises(BadRequestError, match="not JSON") as info:
            async with client.open("x", {"tags": {1, 2}}):
                pass
        await client.aclose()
    assert seen == [] and info.value.vendor == "t" and info.value.status is None


# ----------------------------------------------------------------------------- mapping


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "250"}, 0.25), ({"Retry-After": "3"}, 3.0),
    ({"retry-after": "-2"}, 0.0), ({"Retry-After": "soon"}, None), ({}, None),
    # garbage numbers are no delay: the default backoff, never a storm or an endless wait
    ({"retry-after": "nan"}, None), ({"retry-after": "inf"}, None),
    ({"retry-after": "1e999"}, None), ({"retry-after-ms": "NaN", "retry-after": "2"}, 2.0),
    ({"retry-after-ms": "Infinity"}, None),
])
def test_parse_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers) == seconds


def test_parse_retry_after_http_date() -> None:
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    value = parse_retry_after({"Retry-After": when})
    assert value is not None and 25 < value <= 31


@pytest.mark.parametrize(("body", "message", "code"), [
    (b'{"error": {"message": "m", "code": "c", "type": "t"}}', "m", "c"),
    (b'{"error": {"message": "m", "type": "t"}}', "m", "t"),
    (b'{"error": "plain"}', "plain", None),
    (b'{"message": "m", "code": "InvalidApiKey"}', "m", "InvalidApiKey"),
    (b'[{"error": {"code": 400, "message": "m", "status": "INVALID_ARGUMENT"}}]', "m", "400"),
    (b"<html>bad gateway</html>", "<html>bad gateway</html>", None),
    (b"<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>"
     b"<center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center>"
     b"</body></html>", "413 Request Entity Too Large (an HTML error page)", None),
    (b'<!DOCTYPE html><html><head><TITLE>\n 502 Bad\n Gateway </TITLE></head></html>',
     "502 Bad Gateway (an HTML error page)", None),
    # FastAPI-based servers (llama-cpp-python, proxies)
    (b'{"detail": "Unauthorized"}', "Unauthorized", None),
    (b'{"detail": [{"loc": ["body", "messages", 0, "role"], "msg": "field required", '
     b'"type": "value_error.missing"}, {"loc": ["body", "model"], "msg": "str type expected"}]}',
     "body.messages.0.role: field required; body.model: str type expected", None),
    (b"null", "(null body)", None),
    (b"", "(empty body)", None),
    # OpenRouter wraps the vendor's error: its words must still reach the classifier
    (b'{"error": {"message": "Provider returned error", "code": 400, "metadata": '
     b'{"provider_name": "DeepSeek", "raw": "{\\"error\\": {\\"message\\": \\"Thinking mode '
     b'does not support this tool_choice\\"}}"}}}',
     "Provider returned error: Thinking mode does not support this tool_choice", "400"),
    (b'{"error": {"message": "Provider returned error", "code": 400, "metadata": '
     b'{"raw": {"error": {"code": 400, "message": "Tool choice must be auto"}}}}}',
     "Provider returned error: Tool choice must be auto", "400"),
    (b'{"error": {"message": "Provider returned error", "code": 502, "metadata": '
     b'{"raw": "upstream timed out"}}}', "Provider returned error: upstream timed out", "502"),
])
def test_error_message_shapes(body: bytes, message: str, code: str | None) -> None:
    assert error_message(body)[:2] == (message, code)


@pytest.mark.parametrize(("status", "kind"), [
    (400, BadRequestError), (422, BadRequestError), (401, AuthenticationError),
    (402, QuotaExceededError), (403, PermissionDeniedError), (404, NotFoundError),
    (408, ServerError), (409, ServerError), (429, RateLimitedError), (500, ServerError),
    (502, ServerError), (503, OverloadedError), (529, OverloadedError), (418, BadRequestError),
])
def test_default_error_by_status(status: int, kind: type[ProviderError]) -> None:
    error = default_error("v", status, {"Retry-After": "2"}, b'{"error": {"message": "m"}}')
    assert type(error) is kind and error.status == status and error.vendor == "v"
    assert error.retryable == (status in (408, 409, 429) or status >= 500)
    if error.retryable:
        assert error.retry_after == 2.0  # type: ignore[attr-defined]


def test_insufficient_quota_429_is_quota() -> None:
    body = b'{"error": {"message": "m", "type": "insufficient_quota"}}'
    assert isinstance(default_error("v", 429, {}, body), QuotaExceededError)


async def test_a_started_exchange_is_entered_with_its_response_and_released_on_exit() -> None:
    async with raw_server(Raw([b'{"ok": 1}']), Raw([b"{}"], 400), Raw([b'{"ok": 2}'])) as (
            url, seen):
        client = HttpClient(url, vendor="t", settings=FAST)
        exchange = client.open("x", {"q": 1})
        response = await exchange.start()
        assert response.status == 200 and len(seen) == 1  # sent by start, not by entering
        async with exchange as entered:
            assert entered is response
            assert await read_json(entered) == {"ok": 1}
        assert response.closed
        assert len(seen) == 1
        with pytest.raises(RuntimeError, match="entered once"):
            async with exchange:
                pass
        refused = client.open("x", {})
        with pytest.raises(BadRequestError):  # nothing held: no exit to run
            await refused.start()
        async with client.open("x", {}) as response:
            assert await read_json(response) == {"ok": 2}
        await client.aclose()


# ----------------------------------------------------------------------------- retries


async def test_retries_5xx_then_succeeds() -> None:
    async with raw_server(Raw([b"{}"], 503), Raw([b"{}"], 500), Raw([b'{"ok": 1}'])) as (url,
                                                                                       seen):
        client = HttpClient(url, vendor="t", settings=FAST)
        async with client.open("x", {"q": 1}) as response:
            assert await read_json(response) == {"ok": 1}
        await client.aclose()
    assert seen == [b'{"q":1}'] * 3


async def test_retry_after_ms_honoured() -> None:
    async with raw_server(Raw([b"{}"], 429, {"retry-after-ms": "200"}), Raw([b"{}"])) as (url, _):
        client = HttpClient(url, vendor="t", settings=FAST)
        start = time.monotonic()
        async with client.open("x", {}):
            pass
        assert 0.2 <= time.monotonic() - start < 20  # read as seconds, it would be 200 s
        await client.aclose()


async def test_a_wait_past_max_retry_after_is_raised_at_once() -> None:
    """A server asking for a longer wait than ``max_retry_after`` is not slept on
    and asked again (the openai SDK's rule too): the error says when."""
    settings = HttpSettings(backoff_initial=0.01, max_retries=1, max_retry_after=0.05)
    async with raw_server(Raw([b"{}"], 429, {"Retry-After": "30"}), Raw([b"{}"])) as (url,
                                                                                      seen):
        client = HttpClient(url, vendor="t", settings=settings)
        start = time.monotonic()
        with pytest.raises(RateLimitedError) as info:
            async with client.open("x", {}):
                pass
        assert time.monotonic() - start < 10  # not slept on: 30 s were asked
        await client.aclose()
    assert info.value.retry_after == 30 and info.value.retryable and len(seen) == 1


@pytest.mark.parametrize("status", [400, 401, 402, 404])
async def test_4xx_never_retried(status: int) -> None:
    async with raw_server(Raw([b'{"error": {"message": "no"}}'], status)) as (url, seen):
        client = HttpClient(url, vendor="t", settings=FAST)
        with pytest.raises(ProviderError) as info:
            async with client.open("x", {}):
                pass
        await client.aclose()
    assert info.value.status == status and len(seen) == 1


async def test_retries_exhausted_raise_the_last_error() -> None:
    async with raw_server(*[Raw([b"{}"], 500)] * 3) as (url, seen):
        client = HttpClient(url, vendor="t", settings=FAST)
        with pytest.raises(ServerError):
            async with client.open("x", {}):
                pass
        await client.aclose()
    assert len(seen) == 3


async def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = HttpClient(f"http://127.0.0.1:{port}", vendor="t", settings=FAST)
    with pytest.raises(ProviderConnectionError) as info:
        async with client.open("x", {}):
            pass
    assert not info.value.partial
    await client.aclose()


async def test_read_timeout_mid_stream() -> None:
    settings = HttpSettings(read_timeout=0.2, max_retries=0)
    async with raw_server(Raw([b"data: 1\n\n", b"data: 2\n\n"], pause=0.6)) as (url, _):
        client = HttpClient(url, vendor="t", settings=settings)
        with pytest.raises(ProviderTimeoutError):
            async with client.open("x", {}) as response:
                _ = [e async for e in iter_sse(response)]
        await client.aclose()


async def test_closing_the_client_fails_a_reply_still_being_read() -> None:
    """aiohttp closes a session's connections without telling a reader that
    waits for data; the client's close fails the reader with a typed error
    instead of leaving it until the read timeout (a slow model mid-reply)."""
    settings = HttpSettings(read_timeout=600, max_retries=0)
    done = asyncio.Event()  # the server's reply goes on until the test is over

    async def handle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"data: 1\n\n")
        await done.wait()
        return response

    async with serve(handle) as url:
        try:
            client = HttpClient(url, vendor="t", settings=settings)
            first = asyncio.Event()

            async def read() -> list[SSEEvent]:
                async with client.open("x", {}) as response:
                    events = []
                    async for event in iter_sse(response):
                        events.append(event)
                        first.set()
                    return events

            reader = asyncio.create_task(read())
            await first.wait()
            await client.aclose()
            with pytest.raises(ProviderConnectionError, match="client was closed") as info:
                await reader
            assert info.value.partial
        finally:
            done.set()


async def test_a_whole_reply_waits_past_the_read_timeout_within_the_deadline() -> None:
    """A whole reply sends nothing until the model is done: the deadline bounds
    the wait, not the read timeout (which still bounds a stream's silences)."""
    settings = HttpSettings(read_timeout=0.2, max_retries=0, deadline=5)
    slow = Raw([b'{"v": 1}'], headers={"content-type": "application/json"}, latency=0.6)
    async with raw_server(slow, slow) as (url, _):
        client = HttpClient(url, vendor="t", settings=settings)
        async with client.open("x", {}, whole=True) as response:
            assert orjson.loads(await response.read()) == {"v": 1}
        with pytest.raises(ProviderTimeoutError):
            async with client.open("x", {}) as response:
                await response.read()
        await client.aclose()


async def test_body_error_check_is_retried() -> None:
    def check(headers: Any, body: bytes, data: Any) -> ProviderError | None:
        assert data == orjson.loads(body)  # the HTTP layer's parse
        return RateLimitedError("busy", vendor="t") if data.get("busy") else None

    async with raw_server(Raw([b'{"busy": true}'], headers={"content-type": "application/json"}),
                          Raw([b'{"busy": false, "v": 1}'],
                              headers={"content-type": "application/json"})) as (url, seen):
        client = HttpClient(url, vendor="t", settings=FAST, body_error=check)
        async with client.open("x", {}) as response:
            assert (await response.json())["v"] == 1
        await client.aclose()
    assert len(seen) == 2


def test_client_repr_has_no_secret() -> None:
    client = HttpClient("http://h", headers={"authorization": "Bearer sk-secret"}, vendor="t")
    assert "sk-secret" not in repr(client)


def test_env_keys_only_for_the_vendors_own_host(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentflow.providers.anthropic import AnthropicChatModel
    from agentflow.providers.gemini import GeminiChatModel
    from agentflow.providers.ollama import OllamaChatModel

    for var in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OLLAMA_API_KEY"):
        monkeypatch.setenv(var, "sk-secret-env")
    own = [AnthropicChatModel("claude-sonnet-4-5"), GeminiChatModel("gemini-2.5-flash"),
           OllamaChatModel("qwen3", base_url="https://ollama.com")]
    other = [AnthropicChatModel("claude-sonnet-4-5", base_url="http://127.0.0.1:9"),
             GeminiChatModel("gemini-2.5-flash", base_url="http://127.0.0.1:9"),
             OllamaChatModel("qwen3")]
    for model in own:
        assert "sk-secret-env" in str(model._client._headers.values())  # type: ignore[attr-defined]
    for model in other:
        assert "sk-secret-env" not in str(model._client._headers.values())  # type: ignore[attr-defined]



def test_a_vendors_own_host_written_another_way_is_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hosts compare as URLs: ``OLLAMA_HOST=https://ollama.com`` is read as
    ``https://ollama.com:443`` (as the official client reads it), which was
    another host, so Ollama cloud was asked without the key; so was
    ``https://API.openai.com:443/v1``. Another port or host stays foreign."""
    from agentflow.providers.ollama import OllamaChatModel
    from agentflow.providers.openai import OpenAIChatModel

    monkeypatch.setenv("OLLAMA_API_KEY", "sk-secret-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-env")
    monkeypatch.setenv("OLLAMA_HOST", "https://ollama.com")
    own = [OllamaChatModel("qwen3")._client,
           OpenAIChatModel("gpt-4o", base_url="https://API.openai.com:443/v1")._http]
    other = [OllamaChatModel("qwen3", base_url="https://ollama.com:8443")._client,
             OpenAIChatModel("gpt-4o", base_url="https://api.openai.com.example.net/v1")._http,
             OpenAIChatModel("gpt-4o", base_url="https://example.net/api.openai.com")._http]
    for client in own:
        assert "sk-secret-env" in str(client._headers.values())
    for client in other:
        assert "sk-secret-env" not in str(client._headers.values())

@asynccontextmanager
async def header_recorder() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    """A second origin that records the headers of every request it gets."""
    seen: list[dict[str, str]] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("status", [307, 308, 302])
async def test_redirects_are_refused_and_credentials_never_reach_another_origin(
    status: int,
) -> None:
    from agentflow.errors import RedirectError

    credentials = {"authorization": "Bearer sk-redirect-0123456789", "x-api-key": "sk-ant-x1y2z3w4",
                   "x-goog-api-key": "AIzaRedirect123456", "api-key": "azure-key-987654321"}
    async with header_recorder() as (other, seen):
        target = f"{other}/v1/steal"
        async with raw_server(*[Raw(status=status, headers={"Location": target})] * 3) as (
                url, _):
            client = HttpClient(url, headers=credentials, vendor="x", settings=FAST)
            try:
                with pytest.raises(RedirectError) as info:
                    async with client.open("/v1/chat", {"a": 1}):
                        pass
            finally:
                await client.aclose()
    assert seen == []  # the other origin got nothing, not even a header-less request
    error = info.value
    assert error.status == status and error.location == target and target in str(error)
    assert not error.retryable


async def test_an_adapter_refuses_a_redirect_too() -> None:
    from agentflow import ReActAgent
    from agentflow.errors import RedirectError
    from agentflow.providers.anthropic import AnthropicChatModel

    async with header_recorder() as (other, seen), raw_server(
            Raw(status=307, headers={"Location": f"{other}/v1/messages"})) as (url, _):
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=url,
                                   api_key="sk-ant-redirect-5678")
        try:
            with pytest.raises(RedirectError):
                await ReActAgent("a", model).call("hi")
        finally:
            await model.aclose()
    assert seen == []


# ----------------------------------------------------------------------------- the exchange


class _Body(dict[str, Any]):
    """A request body a test can hold a weak reference to."""


async def test_the_request_body_is_dropped_once_sent() -> None:
    """Nothing of the exchange keeps the body alive while the reply is read
    (a generator context manager kept its arguments until the end)."""
    async with raw_server(Raw([b"{}"], headers={"content-type": "application/json"})) as (url, _):
        client = HttpClient(url, vendor="t", settings=HttpSettings(read_timeout=30))
        body = _Body(q="x" * 1000)
        alive = weakref.ref(body)
        exchange = client.open("x", body)
        del body
        async with exchange as response:
            assert alive() is None  # no cycle holds it: freed when the last reference went
            assert await read_json(response) == {}
        await client.aclose()


def record_exchange_scopes(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The delay of every deadline scope an exchange opens from now on
    (``_exchange._Deadline``: ours, not aiohttp's), in order."""
    scopes: list[float | None] = []

    class Recording(_exchange._Deadline):
        __slots__ = ()

        def __init__(self, delay: float) -> None:
            scopes.append(delay)
            super().__init__(delay)

    monkeypatch.setattr(_exchange, "_Deadline", Recording)
    return scopes


@pytest.mark.parametrize("latency, partial", [(1.0, False), (0.0, True)],
                         ids=["before-the-reply", "while-reading"])
async def test_the_deadline_bounds_the_whole_exchange(latency: float, partial: bool) -> None:
    settings = HttpSettings(read_timeout=30, max_retries=0, deadline=0.3)
    slow = Raw([b"data: 1\n\n"] * 40, latency=latency, pause=0.05)
    async with raw_server(slow) as (url, _):
        client = HttpClient(url, vendor="t", settings=settings)
        with pytest.raises(DeadlineExceededError) as info:
            async with client.open("x", {}) as response:
                _ = [e async for e in iter_sse(response)]
        await client.aclose()
    assert info.value.partial is partial and info.value.deadline == 0.3
    assert isinstance(info.value.__cause__, TimeoutError)


async def test_without_a_deadline_no_scope_is_entered_and_errors_still_map(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``deadline=None``: no deadline scope (nor its timer) per request,
    and the exchange behaves as with one: the reply, a read timeout as a
    ``ProviderTimeoutError``, a reader's own error passed through, the reply
    released. With a deadline, one scope per request."""
    scopes = record_exchange_scopes(monkeypatch)
    json_headers = {"content-type": "application/json"}
    replies = [Raw([b'{"ok": 1}'], headers=json_headers),
               Raw([b"data: 1\n\n", b"data: 2\n\n"], pause=0.6), Raw([b"{}"])]
    async with raw_server(*replies) as (url, _):
        client = HttpClient(url, vendor="t", settings=HttpSettings(
            read_timeout=0.2, max_retries=0, deadline=None))
        async with client.open("x", {}) as response:
            assert await read_json(response) == {"ok": 1}
        with pytest.raises(ProviderTimeoutError):
            async with client.open("x", {}) as response:
                _ = [e async for e in iter_sse(response)]
        error = ValueError("the reader's own")
        with pytest.raises(ValueError) as info:
            async with client.open("x", {}) as response:
                raise error
        assert info.value is error and response.closed
        await client.aclose()
    assert scopes == []
    async with raw_server(Raw([b"{}"], headers=json_headers)) as (url, _):
        client = HttpClient(url, vendor="t", settings=HttpSettings(deadline=7.0))
        async with client.open("x", {}) as response:
            assert await read_json(response) == {}
        await client.aclose()
    assert scopes == [7.0]


async def test_an_error_of_the_reader_passes_through_and_releases_the_reply() -> None:
    async with raw_server(Raw([b"{}"] * 3)) as (url, _):
        client = HttpClient(url, vendor="t", settings=FAST)
        error = ValueError("the reader's own")
        with pytest.raises(ValueError) as info:
            async with client.open("x", {}) as response:
                raise error
        assert info.value is error and response.closed
        await client.aclose()


@pytest.mark.parametrize("vendor", ["openai", "deepseek", "ollama", "glm", "minimax"])
def test_user_info_in_base_url_with_an_api_key_is_a_typed_error(vendor: str) -> None:
    # aiohttp refuses credentials in the URL beside an Authorization header with a
    # bare ValueError at the first request; say so at construction, URL redacted.
    # (Anthropic's x-api-key and Gemini's x-goog-api-key go beside them fine.)
    from agentflow.errors import InvalidModelError
    from agentflow.providers.registry import get_model

    with pytest.raises(InvalidModelError) as info:
        get_model(f"{vendor}:m", base_url="http://gw:pw-0123456789abcdef@127.0.0.1:9/v1",
                  api_key="k-0123456789abcdef")
    assert "0123456789abcdef" not in str(info.value) and "user:password@" in str(info.value)


async def test_user_info_in_base_url_without_a_key_is_basic_auth() -> None:
    # a gateway in front of Ollama behind HTTP basic auth: the URL's user info
    # is sent as a Basic Authorization header, and shown nowhere
    import base64

    from agentflow.providers.registry import get_model

    async with header_recorder() as (url, seen):
        with_user = url.replace("http://", "http://gw:pw-0123456789abcdef@", 1)
        model = get_model("ollama:m", base_url=with_user)
        failure: BaseException | None = None
        try:
            async for _ in model.stream([Msg.user("hi")], [], GenerateOptions()):
                pass
        except Exception as exc:  # the recorder answers no chat: only the headers count
            failure = exc
        finally:
            await model.aclose()
    assert seen, "no request reached the 127.0.0.1 recorder"
    sent = {k.lower(): v for k, v in seen[0].items()}
    assert sent.get("authorization") == "Basic " + base64.b64encode(
        b"gw:pw-0123456789abcdef").decode(), sent
    assert failure is not None  # {"ok": true} is no answer: an error to look in
    shown = [repr(model), str(model), str(failure), repr(failure)]
    assert not any("0123456789abcdef" in text for text in shown), shown


VENDORS_WITH_KEYS = ["openai", "deepseek", "dashscope", "glm", "minimax", "anthropic",
                     "gemini", "ollama"]


@pytest.mark.parametrize("vendor", VENDORS_WITH_KEYS)
@pytest.mark.parametrize("given", [" k-0123456789abcdef\n", "k-0123456789abcdef\r",
                                   "\tk-0123456789abcdef  "])
async def test_a_key_with_outer_whitespace_is_sent_without_it(vendor: str, given: str) -> None:
    # a key read from a file, or a .env with CRLF line ends: aiohttp refused the
    # trailing line break at every request with a bare ValueError
    from agentflow.providers.registry import get_model

    async with header_recorder() as (url, seen):
        model = get_model(f"{vendor}:m", base_url=url, api_key=given)
        try:
            with contextlib.suppress(Exception):  # no vendor answers: only the headers count
                async for _ in model.stream([Msg.user("hi")], [], GenerateOptions()):
                    pass
        finally:
            await model.aclose()
    sent = {k.lower(): v for k, v in seen[0].items()}
    creds = [v for k, v in sent.items() if k in CREDENTIAL_HEADERS]
    assert creds and set(creds) <= {"Bearer k-0123456789abcdef", "k-0123456789abcdef"}, sent


@pytest.mark.parametrize("vendor", VENDORS_WITH_KEYS)
def test_a_key_with_a_line_break_inside_is_a_typed_error_before_any_request(vendor: str) -> None:
    from agentflow.errors import InvalidModelError
    from agentflow.providers.registry import get_model

    with pytest.raises(InvalidModelError, match="API key holds a control character") as info:
        get_model(f"{vendor}:m", base_url="http://127.0.0.1:9",
                  api_key="k-0123456789abcdef\r\nX-Injected: 1")
    assert "0123456789abcdef" not in str(info.value)


def test_a_header_with_a_control_character_is_named() -> None:
    from agentflow.errors import InvalidModelError

    with pytest.raises(InvalidModelError, match="'x-team'"):
        HttpClient("http://h", headers={"x-team": "a\nb"}, vendor="t")
    client = HttpClient("http://h", headers={"x-team": " a\tb \n"}, vendor="t")
    assert client._headers["x-team"] == "a\tb"


def test_settings_repr_never_shows_a_credential_header() -> None:
    # HttpSettings(extra_headers=...) printed an Azure api-key or a gateway token as is
    settings = HttpSettings(extra_headers={"api-key": "az-0123456789abcdef",
                                           "X-Portkey-Api-Key": "pk-0123456789abcdef",
                                           "X-Auth-Token": "tk-0123456789abcdef",
                                           "X-Team": "blue"})
    shown = repr(settings)
    assert "0123456789abcdef" not in shown
    assert "'X-Team': 'blue'" in shown and "'api-key': '***'" in shown
    assert shown.startswith("HttpSettings(connect_timeout=10.0, ")


def test_a_gateways_own_credential_header_is_masked_in_errors() -> None:
    from agentflow._secrets import mask_secrets

    HttpClient("http://h", headers={"X-Portkey-Api-Key": "pk-9876543210fedcba"}, vendor="t")
    assert "9876543210fedcba" not in mask_secrets("echo: pk-9876543210fedcba was refused")
