"""``async with server:`` from several tasks at once, against the real test
server (``tests/mcp_server.py``) over stdio: the pattern of a web app whose
requests each enter a server made once."""

from __future__ import annotations

import sys

import anyio
import pytest

from agentflow.errors import UsageError
from agentflow.mcp import MCPServer
from tests.mcp_servers import SERVER, child_pids


async def test_a_second_task_entering_a_running_server_is_told_how_to_share_it() -> None:
    """Both tasks started the server (a second process), and the exit of
    the task that had not started it failed with anyio's ``RuntimeError``
    ("Attempted to exit a cancel scope that isn't the current tasks's"),
    ending the task group of both. Now the second entry is a ``UsageError``
    saying how to share the server; the first task's work goes on."""
    before = child_pids()
    server = MCPServer.stdio(sys.executable, [SERVER])
    outcomes: dict[str, object] = {}
    entered = anyio.Event()

    async def first() -> None:
        async with server:
            entered.set()
            await anyio.sleep(0.3)
            outcomes["first"] = (await server.call_tool("echo", {"text": "one"})).text

    async def second() -> None:
        await entered.wait()
        try:
            async with server:
                outcomes["second"] = "entered"
        except UsageError as exc:
            outcomes["second"] = str(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        tg.start_soon(second)
    assert outcomes["first"] == "one"
    assert "running (or starting) in another task's `async with`" in str(outcomes["second"])
    assert not server.running and child_pids() <= before
    # entered anew by another task once the first left; nested in one task, shared
    async with server, server:
        assert (await server.call_tool("echo", {"text": "again"})).text == "again"


async def test_entering_while_another_task_starts_it() -> None:
    server = MCPServer.stdio(sys.executable, [SERVER])
    errors: list[BaseException] = []

    async def enter() -> None:
        try:
            async with server:
                await anyio.sleep(0.2)
        except UsageError as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(enter)
        tg.start_soon(enter)  # while the first is still starting the process
    assert len(errors) == 1 and not server.running
    with pytest.raises(UsageError, match="another task"):
        raise errors[0]
