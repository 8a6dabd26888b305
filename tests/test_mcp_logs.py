"""What the libraries under ``agentflow.mcp`` log about an HTTP server
(``agentflow._logging.mask_records``), against the real test server
(``tests/mcp_server.py``) on 127.0.0.1: no credential of its URL."""

from __future__ import annotations

import logging
import re

import pytest

from agentflow.mcp import MCPServer
from tests.mcp_servers import http_server


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
