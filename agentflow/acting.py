"""Acting: running the tool calls of a reply, concurrently, and the per-tool
retry budget of a call (the *act* step of ``ReActAgent``'s loop); in a
streamed call, the tools' progress as they report it (``tool_progress``)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, Callable, Collection, Mapping
from contextlib import AbstractContextManager, aclosing, nullcontext, suppress

import anyio

from agentflow._anyio_fast import produced
from agentflow.errors import ToolRetriesExceededError
from agentflow.events import ToolProgress
from agentflow.execution import CallExecution
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.telemetry import Telemetry
from agentflow.tools import Toolkit
from agentflow.tools.progress import reporting

__all__ = ["count_failures", "not_executed", "progress_of", "run_tool_calls", "tool_progress"]


def progress_of(call: ToolUseBlock, progress: Callable[[ToolProgress], None] | None,
                ) -> AbstractContextManager[None]:
    """Within the block (``call``'s run), what its tool reports
    (``agentflow.tools.report_progress``, an MCP server's notifications) goes
    to ``progress`` as ``ToolProgress`` events; ``None``: nobody reads it.
    Every tool run that reports goes through here: an agent's step
    (``run_tool_calls``) and an approved call's (``agentflow.approvals``)."""
    if progress is None:
        return nullcontext()
    return reporting(lambda done, total, message: progress(
        ToolProgress(call.id, call.name, done, total, message)))


async def run_tool_calls(
    ex: CallExecution,
    toolkit: Toolkit,
    telemetry: Telemetry,
    calls: list[ToolUseBlock],
    supplied: Mapping[str, ToolResultBlock],
    progress: Callable[[ToolProgress], None] | None = None,
) -> list[ToolResultBlock]:
    """Run the tool calls concurrently; one result per call, in call order.

    Calls answered by middleware (``supplied``) are not run; a call to an
    unknown tool gets an error result naming the available tools.
    ``progress``: takes each ``ToolProgress`` a tool reports
    (``agentflow.tools.progress``); ``None``: nobody reads it.
    """
    if len(calls) == 1 and calls[0].id in supplied:  # the output call, answered: no task
        return [supplied[calls[0].id]]
    results: list[ToolResultBlock | None] = [supplied.get(c.id) for c in calls]

    async def run(position: int, call: ToolUseBlock) -> None:
        tool = toolkit.get(call.name)
        with telemetry.tool(ex, call, tool) as traced:
            if tool is None:
                available = ", ".join(toolkit.names) or "none"
                result = ToolResultBlock(
                    call.id,
                    f"Tool {call.name!r} not found. Available tools: {available}.",
                    is_error=True,
                    name=call.name,
                )
            else:
                with progress_of(call, progress):
                    result = await tool.run(call)
            traced(result)
        results[position] = result

    pending = [(i, c) for i, c in enumerate(calls) if results[i] is None]
    if len(pending) == 1:
        await run(*pending[0])
    elif pending:
        async with anyio.create_task_group() as tg:
            for position, call in pending:
                tg.start_soon(run, position, call)
    return [r for r in results if r is not None]


async def tool_progress(
    ex: CallExecution,
    toolkit: Toolkit,
    telemetry: Telemetry,
    calls: list[ToolUseBlock],
    supplied: Mapping[str, ToolResultBlock],
    results: list[ToolResultBlock],
) -> AsyncGenerator[ToolProgress, None]:
    """``run_tool_calls`` in a task of its own (no cancel scope held across
    this generator's yields), each ``ToolProgress`` its tools report yielded
    as it comes; ``results`` gets their results at the end. Closed early
    (``aclosing``), the tools are cancelled and waited for."""
    if all(c.id in supplied for c in calls):  # nothing runs: nothing reports
        results.extend(await run_tool_calls(ex, toolkit, telemetry, calls, supplied))
        return
    send, receive = anyio.create_memory_object_stream[ToolProgress | BaseException](math.inf)

    def report(event: ToolProgress) -> None:
        # (a report after its tool ended, an MCP notification late: nobody reads it)
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            send.send_nowait(event)

    async def run() -> None:
        with send:
            results.extend(await run_tool_calls(ex, toolkit, telemetry, calls, supplied,
                                                report))

    async with aclosing(produced(receive, asyncio.ensure_future(run()))) as events:
        async for event in events:
            yield event


def count_failures(
    ex: CallExecution,
    toolkit: Toolkit,
    tool_retries: int,
    calls: list[ToolUseBlock],
    results: Msg,
    supplied: Mapping[str, ToolResultBlock],
    failed: Collection[str] = (),
) -> None:
    """The per-tool retry budget: failed calls of each tool add up over the
    call: those the agent ran, and those a middleware answered with their
    failure (``failed``: ids from ``Act.failed``, e.g. a client tool's bad
    arguments); other answers of middleware (``supplied``) never count.

    Raises:
        ToolRetriesExceededError: a tool failed more often than its
            ``max_retries`` (else ``tool_retries``) allows.
    """
    names: dict[str, str] | None = None  # made at the first failure only
    for block in results.tool_results:
        if not block.is_error or (block.tool_use_id in supplied
                                  and block.tool_use_id not in failed):
            continue
        if names is None:
            names = {c.id: c.name for c in calls}
        name = names.get(block.tool_use_id, block.name)
        failures = ex.tool_failures[name] = ex.tool_failures.get(name, 0) + 1
        tool = toolkit.get(name)
        budget = tool.max_retries if tool and tool.max_retries is not None else tool_retries
        if failures > budget:
            ex.log.warning("call.tool_retries_exceeded", tool=name, failures=failures)
            raise ToolRetriesExceededError(name, failures=failures, last_error=block.output)


def not_executed(calls: list[ToolUseBlock]) -> Msg:
    """Results for calls a middleware decided not to run, so that every tool
    call in memory keeps its result."""
    return Msg(
        "tool",
        [
            ToolResultBlock(c.id, "Not executed: the agent did not run this call.",
                            is_error=True, name=c.name)
            for c in calls
        ],
    )
