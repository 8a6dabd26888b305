"""Bounded, well-formed requests: the example app (examples/web/app.py) on a
real server (uvicorn on 127.0.0.1) refuses oversized, malformed,
cross-site, misdirected and unauthenticated requests with a 4xx naming the
problem (no 500, no traceback in the log), and binds conversations to
their owner under unguessable ids."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import uvicorn
from starlette.requests import Request

from agentflow import ReActAgent
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import SQLiteStateStore
from agentflow.web.requests import json_depth
from examples.web.app import MAX_BODY, create_app

CONTACT = {"name": "Ada", "email": "ada@x.org", "company": "AE", "phone": None, "city": "London"}


async def answer(request: RecordedRequest) -> Reply:
    return Reply(tool_calls=[Call("generate_response", CONTACT)], chunk_size=8)


async def bearer_user(request: Request) -> str | None:
    """A test authentication hook: ``Authorization: Bearer <user>``."""
    scheme, _, user = request.headers.get("authorization", "").partition(" ")
    return user if scheme == "Bearer" and user else None


class App:
    url: str
    store: SQLiteStateStore
    app: Any


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    async with SQLiteStateStore(tmp_path / "s.db") as store:
        running = App()
        running.store = store
        running.app = create_app(ReActAgent("web", FunctionModel(answer)), store,
                                 authenticate=bearer_user)
        config = uvicorn.Config(running.app, host="127.0.0.1", port=0, log_level="info",
                                lifespan="off")
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve())
        async with asyncio.timeout(10):  # a server that cannot start fails the test
            while not server.started:  # noqa: ASYNC110 - uvicorn offers no event
                await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        running.url = f"http://127.0.0.1:{port}/extract"
        try:
            yield running
        finally:
            server.should_exit = True
            await task


def headers(user: str = "alice", **extra: str) -> dict[str, str]:
    return {"authorization": f"Bearer {user}", "content-type": "application/json", **extra}


async def post(url: str, body: bytes | Any, hdrs: dict[str, str]) -> tuple[int, Any, Any]:
    async with aiohttp.ClientSession() as http:
        data = body if isinstance(body, bytes) else None
        async with http.post(url, data=data, headers=hdrs) as response:
            raw = await response.read()
            kind = response.headers.get("content-type", "")
            parsed = (await response.json() if kind.startswith("application/json")
                      else raw.decode())
            return response.status, parsed, response.headers


@pytest.fixture
def server_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO)
    return caplog


def assert_no_traceback(log: pytest.LogCaptureFixture) -> None:
    bad = [r for r in log.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]


@pytest.mark.parametrize(("body", "status", "kind"), [
    (b"", 400, "empty_body"),
    (b"   \n", 400, "empty_body"),
    (b'{"text": "hi"', 400, "malformed_json"),
    (b"\xff\xfe{}", 400, "invalid_utf8"),
    (b'{"text": "caf\xe9"}', 400, "invalid_utf8"),
    (b"[" * 40 + b"]" * 40, 400, "too_deep"),
    (b"[" * 100_000 + b"]" * 100_000, 413, "payload_too_large"),
    (b"[" * 5000 + b"]" * 5000, 400, "too_deep"),  # past orjson's own limit
    (b'{"text": 5}', 400, "invalid_request"),
    (b'["text"]', 400, "invalid_request"),
    (b'{"text": "hi", "conversation_id": "../../etc"}', 400, "invalid_request"),
])
async def test_malformed_bodies_are_400s_that_name_the_problem(
        app: App, server_log: pytest.LogCaptureFixture, body: bytes, status: int,
        kind: str) -> None:
    got, parsed, _ = await post(app.url, body, headers())
    assert (got, parsed["error"]["type"]) == (status, kind), parsed
    assert parsed["error"]["message"]
    assert_no_traceback(server_log)


async def test_oversized_bodies_are_413_without_being_read(
        app: App, server_log: pytest.LogCaptureFixture) -> None:
    big = b'{"text": "' + b"x" * (MAX_BODY + 1) + b'"}'
    status, parsed, _ = await post(app.url, big, headers())
    assert (status, parsed["error"]["type"]) == (413, "payload_too_large")
    # says how to take more: a chat's history grows past the default with each message
    assert f"larger than {MAX_BODY} bytes" in parsed["error"]["message"]
    assert "max_bytes=" in parsed["error"]["message"]

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted while read
        yield b'{"text": "'
        for _ in range(64):
            yield b"y" * 4096

    async with aiohttp.ClientSession() as http, http.post(
            app.url, data=chunked(), headers=headers()) as response:
        assert response.status == 413
        assert (await response.json())["error"]["type"] == "payload_too_large"
    assert_no_traceback(server_log)


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""])
async def test_simple_request_content_types_are_refused(app: App, content_type: str) -> None:
    # the bodies a cross-site form or a no-preflight fetch can send
    status, parsed, _ = await post(app.url, b'{"text": "hi"}',
                                   headers(**{"content-type": content_type}))
    assert (status, parsed["error"]["type"]) == (415, "unsupported_media_type")


async def test_origin_and_host_checks(app: App) -> None:
    body = b'{"text": "Ada, ada@x.org"}'
    port = app.url.split(":")[2].split("/")[0]
    status, parsed, _ = await post(app.url, body, headers(origin="https://evil.example"))
    assert (status, parsed["error"]["type"]) == (403, "cross_origin")
    # the message names the origin and the way to allow it (a React dev server's port)
    assert '"https://evil.example"' in parsed["error"]["message"]
    assert "allowed_origins=" in parsed["error"]["message"]
    status, parsed, _ = await post(app.url, body, headers(origin="null"))
    assert status == 403
    # DNS rebinding: a hostile name resolving to 127.0.0.1 carries its own Host
    status, parsed, _ = await post(app.url, body, headers(host=f"evil.example:{port}"))
    assert (status, parsed["error"]["type"]) == (421, "misdirected_host")
    assert f'"evil.example:{port}"' in parsed["error"]["message"]
    assert "allowed_hosts=" in parsed["error"]["message"]
    status, _, _ = await post(app.url, body, headers(origin=f"http://127.0.0.1:{port}"))
    assert status == 200
    status, _, _ = await post(app.url, body, headers(host=f"localhost:{port}"))
    assert status == 200


async def test_authentication_hook(app: App) -> None:
    status, parsed, _ = await post(app.url, b'{"text": "hi"}',
                                   {"content-type": "application/json"})
    assert (status, parsed["error"]["type"]) == (401, "unauthenticated")


async def test_conversations_are_unguessable_and_bound_to_their_owner(app: App) -> None:
    status, text, hdrs = await post(app.url, b'{"text": "Ada, ada@x.org"}', headers("alice"))
    assert status == 200 and '"type":"complete"' in text
    conversation = hdrs["x-conversation-id"]
    assert len(conversation) >= 43  # 32 random bytes
    _, _, hdrs2 = await post(app.url, b'{"text": "Ada again, ada@x.org"}', headers("alice"))
    assert hdrs2["x-conversation-id"] != conversation
    # the demo's e-mail field is copied from the text (examples/web/app.py: PINNED)
    body = b'{"text": "more: Ada, ada@x.org", "conversation_id": "%s"}' % conversation.encode()
    status, text, _ = await post(app.url, body, headers("alice"))  # the owner continues it
    assert status == 200 and '"type":"complete"' in text
    status, parsed, _ = await post(app.url, body, headers("mallory"))  # another user cannot
    assert (status, parsed["error"]["type"]) == (404, "not_found")
    made_up = b'{"text": "x", "conversation_id": "%s"}' % (b"A" * 43)
    status, parsed, _ = await post(app.url, made_up, headers("alice"))
    assert status == 404  # ids are the server's, never the client's choice
    owned = [key for key, outcome in app.app.state.outcomes if outcome == "completed"]
    assert len(owned) == 3 and len(set(owned)) == 2
    assert all(conversation not in key or key.endswith(conversation) for key in owned)


def test_json_depth() -> None:
    assert json_depth(1, 5) == 0
    assert json_depth({"a": [1, {"b": []}]}, 5) == 4
    assert json_depth([[[[[[]]]]]], 3) == 4  # stops counting past the limit
