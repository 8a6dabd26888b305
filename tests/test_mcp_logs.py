"""What the libraries under ``agentflow.mcp`` log about an HTTP server
(``agentflow._logging.mask_records``), against the real test server
(``tests/mcp_server.py``) on 127.0.0.1: no credential of its URL."""

from __future__ import annotations

import logging

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
