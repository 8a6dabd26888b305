"""What the libraries under ``agentflow.mcp`` log about an HTTP server
(``agentflow._logging.mask_records``), against the real test server
(``tests/mcp_server.py``) on 127.0.0.1: no credential of its URL."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import httpx2
import pytest

from agentflow._logging import mask_records
from agentflow.mcp import MCPServer
from agentflow.mcp._session_ids import SESSION_IDS
from tests.mcp_http_faults import PROXY_COOKIE
from tests.mcp_servers import http_server

TOKEN = "tok-proxy-0a1b2c3d4e5f6789"


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG])
async def test_the_transports_records_never_hold_the_urls_credentials(
        level: int, caplog: pytest.LogCaptureFixture) -> None:
    """With INFO logging on (``logging.basicConfig(level=logging.INFO)``),
    httpx2 logged ``HTTP Request: POST http://host/mcp?api_key=<key>`` for
    every request of the session, and at DEBUG the SDK its "Connecting to
    StreamableHTTP endpoint: <url>": the key agentflow keeps out of every
    error and repr. The records now show the URL with its query cut."""
    key = "sk-mcpquery-0123456789abcdef"
    with http_server(quiet=True) as base:
        caplog.set_level(level)
        async with MCPServer.http(f"{base}/mcp?api_key={key}",
                                  headers={"Authorization": "Bearer tok-mcphdr-0123456789"}
                                  ) as server:
            assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
    http = [r.getMessage() for r in caplog.records if r.name == "httpx2"]
    assert any(f"POST {base}/mcp?\u2026" in m for m in http)  # the request, its query cut
    for record in caplog.records:
        message = record.getMessage()
        assert "0123456789abcdef" not in message and "mcphdr" not in message, record.name


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG])
async def test_no_record_holds_the_session_id(level: int,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """The SDK logged ``Received session ID: <id>`` at INFO: the
    ``mcp-session-id`` whoever holds may act in the session (the test
    server's are ``uuid4().hex``). It is masked in every record now, the
    session's end (its DELETE) included."""
    with http_server(quiet=True) as base:
        caplog.set_level(level)
        async with MCPServer.http(f"{base}/mcp") as server:
            assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
            await server.list_tools()
    messages = [r.getMessage() for r in caplog.records]
    assert "Received session ID: ***" in messages  # (the record is there, its id masked)
    leaked = [m for m in messages if re.search(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", m)]
    assert leaked == []


async def test_no_record_holds_the_cookie_a_proxy_sets(caplog: pytest.LogCaptureFixture) -> None:
    """httpcore2 logs each response's headers at DEBUG; the session cookie an
    authenticating proxy (or a load balancer) sets, ``set-cookie``, was
    shown whole (only ``mcp-session-id`` was masked there). Every credential
    header's value is masked now, the token sent in ``Authorization`` too."""
    with http_server("--token", TOKEN, quiet=True) as base:
        caplog.set_level(logging.DEBUG)
        async with MCPServer.http(f"{base}/mcp",
                                  headers={"Authorization": f"Bearer {TOKEN}"}) as server:
            assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
    headers = [r.getMessage() for r in caplog.records if r.name == "httpcore2.http11"
               and "receive_response_headers.complete" in r.getMessage()]
    assert any("(b'set-cookie', b'***')" in m for m in headers)  # (the header is there)
    assert PROXY_COOKIE not in caplog.text and TOKEN not in caplog.text


def test_a_logged_exceptions_traceback_is_masked(caplog: pytest.LogCaptureFixture) -> None:
    """The SDK logs ``GET stream error`` at DEBUG with ``exc_info=True`` when
    its GET stream is refused (a session that expired answers 404), and
    httpx2's ``HTTPStatusError`` quotes the URL it sent to, query included:
    the traceback a handler prints held the key. It is masked as the
    message is (the real exception, logged on the SDK's own logger)."""
    key = "sk-mcpquery-fedcba9876543210"
    url = f"http://127.0.0.1:9/mcp?api_key={key}"
    mask_records("mcp.client.streamable_http")  # as opening an HTTP server does
    caplog.set_level(logging.DEBUG)
    try:
        httpx2.Response(404, request=httpx2.Request("GET", url)).raise_for_status()
    except httpx2.HTTPStatusError:
        logging.getLogger("mcp.client.streamable_http").debug("GET stream error", exc_info=True)
    assert "for url 'http://127.0.0.1:9/mcp?\u2026'" in caplog.text  # (the traceback is there)
    assert "fedcba9876543210" not in caplog.text
    assert "fedcba9876543210" not in logging.Formatter().format(caplog.records[-1])


async def test_every_sdk_logger_is_masked(caplog: pytest.LogCaptureFixture) -> None:
    """Only the transports' loggers were masked, and a logger's filter never
    sees its children's records: the SDK's dispatcher logs failures
    (``logger.exception``) on its own module logger. Every SDK logger
    imported by the time a server opens is masked now (a record on
    ``mcp.shared.jsonrpc_dispatcher`` quoting the URL)."""
    key = "sk-mcpsess-0123456789fedcba"
    with http_server(quiet=True) as base:
        caplog.set_level(logging.DEBUG)
        async with MCPServer.http(f"{base}/mcp?api_key={key}") as server:
            assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
            logging.getLogger("mcp.shared.jsonrpc_dispatcher").warning(
                "Failed to validate notification from %s", f"{base}/mcp?api_key={key}")
    assert f"Failed to validate notification from {base}/mcp?\u2026" in caplog.messages
    assert "0123456789fedcba" not in caplog.text


def test_a_session_id_is_masked_in_child_loggers_tracebacks_and_stacks(
        caplog: pytest.LogCaptureFixture) -> None:
    """The session-id mask was a filter of its own on the exact logger names
    (``mcp``, not ``mcp.shared.jsonrpc_dispatcher``, where the SDK logs its
    failures) and masked the message only: a logged exception quoting the id,
    or a record's stack, showed it. It is a mask of ``mask_records``' filter
    now: each logger family, message, traceback and stack alike."""
    session_id = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    child = logging.getLogger("mcp.shared.jsonrpc_dispatcher")
    SESSION_IDS.watch("mcp")  # as opening an HTTP server does
    SESSION_IDS.hold(session_id)
    caplog.set_level(logging.DEBUG)
    try:
        try:
            raise RuntimeError(f"session {session_id} is gone")
        except RuntimeError:
            child.debug("request in %s failed", session_id, exc_info=True, stack_info=True)
    finally:
        SESSION_IDS.drop(session_id)
    record = caplog.records[-1]
    assert record.getMessage() == "request in *** failed"
    assert "RuntimeError: session *** is gone" in caplog.text  # (the traceback is there)
    assert session_id not in logging.Formatter().format(record)
    assert session_id not in caplog.text


async def test_the_sdk_client_sessions_records_are_masked_over_stdio_too(
        caplog: pytest.LogCaptureFixture) -> None:
    """The SDK's client session logs on ``"client"`` (not under ``mcp``): a
    notification it cannot read is a warning whose traceback quotes the
    server's values, and only an HTTP server's opening masked any SDK logger.
    A secret the server echoes there (a raw stdio server sending its token as
    a log level) is masked now; another ``"client"`` record (an
    application's own logger of that name) is left as it is."""
    token = "tok-stdio-0a1b2c3d4e5f67890"
    raw = str(Path(__file__).with_name("mcp_raw_server.py"))
    caplog.set_level(logging.DEBUG)
    async with MCPServer.stdio(sys.executable, [raw], env={"API_TOKEN": token}) as server:
        await server.call_tool("echo", {"text": token, "garble": True})
        logging.getLogger("client").info("the app's own record: %s", token)
    [warning] = [r for r in caplog.records
                 if r.name == "client" and r.getMessage().startswith("Failed to validate")]
    assert warning.exc_info is None and "ValidationError" in (warning.exc_text or "")
    assert token not in logging.Formatter().format(warning)
    assert f"the app's own record: {token}" in caplog.messages  # (not the SDK's: untouched)
