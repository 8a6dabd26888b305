"""MCP servers as tool sources (``agentflow.mcp``), against a real MCP server
built on the SDK's low-level ``Server`` (``tests/mcp_server.py``) that the
tests start: over stdio, streamable HTTP and SSE on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.content import ImageBlock
from agentflow.errors import (
    MCPConnectionError,
    MCPNotRunningError,
    MCPReconnectError,
    MCPServerStartError,
    MCPTimeoutError,
    MCPToolSchemaError,
    ToolDefinitionError,
    ToolNameError,
)
from agentflow.events import ToolResult
from agentflow.mcp import MCPServer
from agentflow.model_profile import ModelProfile
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel
from tests.leak_watch import collect_earlier_garbage
from tests.mcp_servers import SERVER, child_pids, http_server, open_and_close, open_fds


def stdio(*flags: str, **options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [SERVER, *flags], **options)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """One streamable HTTP server for the module's tests that do not kill it
    (an HTTP session costs no process: most tests use one)."""
    with http_server() as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def odd_url() -> Iterator[str]:
    """A server that also lists tools with schemas no model takes, and one
    called ``generate_response``."""
    with http_server("--bad-schema", "--reserved-name") as base:
        yield f"{base}/mcp"


class Price(BaseModel):
    sku: str
    price: float


def tool_names(request: RecordedRequest) -> list[str]:
    return [t.name for t in request.tools]


# ---------------------------------------------------------------------------- listing


async def test_tools_listed_with_schemas_prefixed_and_filtered() -> None:
    async with stdio(prefix="shop", exclude=["crash"]) as server:
        tools = {t.name: t for t in server.tools}
        assert "shop_crash" not in tools
        assert {"shop_add", "shop_lookup", "shop_unlock"} <= set(tools)
        lookup = tools["shop_lookup"]
        assert lookup.description == "The price of a product, by SKU."
        assert lookup.parameters["properties"]["sku"] == {"type": "string",
                                                          "description": "the SKU"}
        assert lookup.parameters["required"] == ["sku"]
        # "text.upper" is a valid MCP name but not a vendor's: made valid, kept distinct
        upper = next(n for n in tools if n.startswith("shop_text_upper"))
        result = await tools[upper].run(_use(upper, {"text": "abc"}))
        assert result.output == "ABC" and not result.is_error
    async with stdio(include=["add", "echo"]) as server:
        assert [t.name for t in server.tools] == ["add", "echo"]


async def test_include_naming_a_missing_tool_is_an_error_at_start() -> None:
    before = child_pids()
    with pytest.raises(ToolDefinitionError, match=r"has no tool 'nope'.*it lists: add, echo"):
        async with stdio(include=["add", "nope"]):
            pass
    assert child_pids() <= before


def _use(name: str, arguments: dict[str, Any]) -> Any:
    from agentflow.messages import ToolUseBlock

    return ToolUseBlock("call-1", name, arguments)


# ---------------------------------------------------------------------------- results


async def test_call_results_structured_text_image_and_error(http_url: str) -> None:
    async with MCPServer.http(http_url) as server:
        added = await server.call_tool("add", {"a": 2, "b": 3})
        assert added.structured == {"sum": 5} and added.text == '{"sum":5}'
        assert not added.is_error
        echoed = await server.call_tool("echo", {"text": "hi"})
        assert echoed.text == "hi" and echoed.structured is None
        image = await server.call_tool("image")
        assert image.text.startswith("a red pixel\n\n[image: image/png, 68 bytes;")
        assert len(image.images) == 1 and isinstance(image.images[0], ImageBlock)
        assert image.images[0].media_type == "image/png"
        failed = await server.call_tool("fail", {"reason": "disk full"})
        assert failed.is_error and failed.text == "failed: disk full"


async def test_agent_tool_results_and_arguments(http_url: str) -> None:
    """The agent reads the same text; an ``isError`` result and bad arguments
    are error results the model sees; ``"2"`` for an integer is read as 2."""
    model = ScriptedModel([
        Reply(tool_calls=[Call("add", {"a": "2", "b": 3}), Call("fail", {"reason": "x"}),
                          Call("add", {"a": "two", "b": 3}), Call("image", {})]),
        "done",
    ])
    async with MCPServer.http(http_url) as server:
        agent = ReActAgent("a", model, tools=[server])
        await agent.call("go")
    results = model.requests[1].messages[-1].tool_results
    assert [(r.output[:12], r.is_error) for r in results] == [
        ('{"sum":5}', False), ("failed: x", True), ("Invalid argu", True), ("a red pixel\n", False)]
    assert "a: 'two' is not of type 'integer'" in results[2].output


async def test_an_error_result_is_masked_as_a_python_tool_exception_is() -> None:
    """A remote tool's failure (FastMCP sends an exception's text as its
    ``isError`` result) quoting a database URL with its password reached the
    model, the ``ToolResult`` event and so the UI streams, while the same
    failure of a Python tool is masked."""
    from agentflow._secrets import register_secret

    register_secret("sk-mcpflag-9Qw3Rt6Yu1Io4Pa7")
    leaky = ("cannot reach postgres://admin:hunter2pw@db.internal/x?token=tok123456 "
             "with key sk-mcpflag-9Qw3Rt6Yu1Io4Pa7")
    model = ScriptedModel([Reply(tool_calls=[Call("fail", {"reason": leaky})]), "done"])
    async with stdio(include=["fail"]) as server:
        events = [e async for e in ReActAgent("a", model, tools=[server]).stream("go")]
        direct = await server.call_tool("fail", {"reason": leaky})
    [shown] = [e for e in events if isinstance(e, ToolResult)]
    [read] = model.requests[1].messages[-1].tool_results
    for text in (shown.output, read.output):
        assert text.startswith("failed: cannot reach postgres://") and text.endswith("***")
        for secret in ("hunter2pw", "tok123456", "sk-mcpflag-9Qw3Rt6Yu1Io4Pa7"):
            assert secret not in text
    assert shown.is_error and read.is_error
    assert direct.text == f"failed: {leaky}"  # a caller of call_tool reads the server's own text


# ---------------------------------------------------------------------------- structured output


async def test_agent_with_mcp_tools_returns_a_validated_schema() -> None:
    """A model that reads the MCP tool's result and answers with it: the
    output is a validated ``Price`` (tool strategy, then native)."""

    def answer(request: RecordedRequest) -> Reply:
        last = request.messages[-1]
        if not last.tool_results:
            return Reply(tool_calls=[Call("shop_lookup", {"sku": "A-1"})])
        import orjson

        data = orjson.loads(last.tool_results[0].output)
        return Reply(tool_calls=[Call("generate_response", data)])

    async with stdio(prefix="shop") as server:
        model = FunctionModel(answer)
        agent = ReActAgent("a", model, tools=[server])
        reply = await agent.call("What does A-1 cost?", Price)
        assert reply.output == Price(sku="A-1", price=12.5)
        assert "shop_lookup" in tool_names(model.requests[0])
        assert "generate_response" in tool_names(model.requests[0])

        native = ScriptedModel(
            [Reply(tool_calls=[Call("shop_lookup", {"sku": "B-2"})]),
             Reply(text='{"sku": "B-2", "price": 3.0}')],
            profile=ModelProfile(native_output="json_schema", native_output_with_tools=True))
        agent = ReActAgent("b", native, tools=[server])
        reply = await agent.call("What does B-2 cost?", Price, strategy="native")
        assert reply.output == Price(sku="B-2", price=3.0)
        assert native.requests[1].messages[-1].tool_results[0].output == (
            '{"sku":"B-2","price":3.0}')


# ---------------------------------------------------------------------------- failures


async def test_slow_tool_past_its_timeout(http_url: str) -> None:
    async with MCPServer.http(http_url, timeout=0.5) as server:
        with pytest.raises(MCPTimeoutError,
                           match=r"tool 'slow' gave no result within 0.5 s") as info:
            await server.call_tool("slow", {"seconds": 30})
        assert info.value.tool == "slow" and info.value.timeout == 0.5
        # the session goes on; a call may take its own timeout
        assert (await server.call_tool("slow", {"seconds": 0.01}, timeout=10)).text == "done"
        model = ScriptedModel([Reply(tool_calls=[Call("slow", {"seconds": 30})]), "gave up"])
        agent = ReActAgent("a", model, tools=[server])
        reply = await agent.call("go")
        assert reply.text == "gave up"
        result = model.requests[1].messages[-1].tool_results[0]
        assert result.is_error and "MCPTimeoutError" in result.output


async def test_no_timeout_is_no_limit(http_url: str) -> None:
    """``timeout=None`` ("no limit") was the SDK's session timeout, the
    ``connect_timeout``: a call longer than it failed with ``MCPTimeoutError``."""
    async with MCPServer.http(http_url, timeout=None, connect_timeout=1) as server:
        assert (await server.call_tool("slow", {"seconds": 1.5})).text == "done"
    async with MCPServer.http(http_url, connect_timeout=1) as server:
        assert (await server.call_tool("slow", {"seconds": 1.5}, timeout=None)).text == "done"


async def test_stdio_server_crash_mid_call_then_restarted_by_the_next_call(
        tmp_path: Path) -> None:
    """The call that crashed the process is an error the model reads; the
    next call starts the server again (a crashed server used to fail every
    later call); a server that cannot start again is a typed error naming it,
    and each later call tries once more."""
    before = child_pids()
    once = tmp_path / "started"
    async with stdio("--once", str(once)) as server:
        once.unlink()  # it may start once more
        model = ScriptedModel([Reply(tool_calls=[Call("crash", {})]),
                               Reply(tool_calls=[Call("add", {"a": 2, "b": 3})]), "done"])
        agent = ReActAgent("a", model, tools=[server])
        assert (await agent.call("go")).text == "done"
        crashed = model.requests[1].messages[-1].tool_results[0]
        assert crashed.is_error and "MCPConnectionError" in crashed.output
        assert "closed the connection during tool 'crash'" in crashed.output
        assert "the next call reconnects" in crashed.output
        added = model.requests[2].messages[-1].tool_results[0]
        assert not added.is_error and "5" in added.output
        assert server.reconnects == 1 and server.lost is None
        # --once: the restarted process (the file exists) exits at start
        with pytest.raises(MCPConnectionError):
            await server.call_tool("crash", {})
        with pytest.raises(MCPReconnectError) as info:
            await server.call_tool("add", {"a": 1, "b": 1})
        assert info.value.server == server.name and "could not reconnect" in str(info.value)
        assert "exited" in info.value.lost and "connection lost" in repr(server)
        assert server.lost is not None and "exited" in server.lost  # why it was lost, kept
        with pytest.raises(MCPReconnectError) as again:  # each call tries once more
            await server.call_tool("add", {"a": 1, "b": 1})
        assert again.value.lost == info.value.lost
        once.unlink()
        assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
        assert server.reconnects == 2
    assert not server.running
    assert child_pids() <= before


async def test_http_server_gone_then_back_is_reconnected_by_the_next_call() -> None:
    """An HTTP server that went away fails the call that met it; while it is
    down, each call is one failed reconnection (``MCPReconnectError``); once
    it is back, the next call opens a new session. A server restarted
    unseen answers the old session id with 404: the call starts a new
    session and is sent again (the spec's rule; tests/test_mcp_sessions.py)."""
    with ExitStack() as servers:
        base = servers.enter_context(http_server(quiet=True))
        port = base.rsplit(":", 1)[1]
        async with MCPServer.http(f"{base}/mcp", timeout=10) as server:
            assert (await server.call_tool("echo", {"text": "hi"})).text == "hi"
            servers.close()  # killed
            with pytest.raises(MCPConnectionError, match="closed the connection during tool 'add'"):
                await server.call_tool("add", {"a": 1, "b": 1})
            with pytest.raises(MCPReconnectError, match=r"MCP server '127.0.0.1' lost its conn"):
                await server.call_tool("add", {"a": 1, "b": 1})
            servers.enter_context(http_server("--port", port, quiet=True))
            assert (await server.call_tool("echo", {"text": "back"})).text == "back"
            assert server.reconnects == 1
            servers.close()  # restarted: the new process does not know the session
            servers.enter_context(http_server("--port", port, quiet=True))
            assert (await server.call_tool("echo", {"text": "anew"})).text == "anew"
            assert server.reconnects == 2


async def test_no_reconnect_keeps_a_lost_server_lost() -> None:
    async with stdio(reconnect=False) as server:
        with pytest.raises(MCPConnectionError):
            await server.call_tool("crash", {})
        with pytest.raises(MCPConnectionError, match="lost its connection") as info:
            await server.call_tool("add", {"a": 1, "b": 1})
        assert not isinstance(info.value, MCPReconnectError) and server.reconnects == 0


async def test_start_errors_name_the_command_or_url_never_a_secret() -> None:
    with pytest.raises(MCPServerStartError, match=r"over stdio \(/nonexistent/server --port 1\)"):
        async with MCPServer.stdio("/nonexistent/server", ["--port", "1"]):
            pass
    with pytest.raises(MCPServerStartError, match=r"closed the connection during initialize") \
            as exited:
        async with MCPServer.stdio(sys.executable, ["-c", "raise SystemExit(2)"],
                                   env={"SERVICE_API_KEY": "sk-live-0123456789abcdef"}):
            pass
    assert "sk-live" not in str(exited.value) and "SERVICE_API_KEY" not in str(exited.value)
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # never answers initialize
    with pytest.raises(MCPServerStartError, match=r"initialize gave no result within 0.5 s") \
            as hung:
        async with MCPServer.stdio(silent[0], silent[1:], connect_timeout=0.5):
            pass
    assert isinstance(hung.value.__cause__, MCPTimeoutError)
    with anyio.fail_after(20):
        with pytest.raises(MCPServerStartError) as refused:
            async with MCPServer.http("http://user:pw@127.0.0.1:9/mcp?token=abc",
                                      headers={"Authorization": "Bearer tok-0123456789abcdef"}):
                pass
    message = str(refused.value)
    assert "127.0.0.1:9/mcp" in message and refused.value.target.startswith("http://127.0.0.1")
    for secret in ("tok-0123456789abcdef", "token=abc", "pw@"):
        assert secret not in message and secret not in repr(refused.value)


# ---------------------------------------------------------------------------- schemas


async def test_tool_schemas_no_dialect_takes(odd_url: str) -> None:
    with pytest.raises(MCPToolSchemaError, match=r"tool 'remote_ref'.*not local") as info:
        async with MCPServer.http(odd_url, prefix="x"):
            pass
    assert info.value.tool == "remote_ref" and info.value.dialect is None
    async with MCPServer.http(odd_url, prefix="x", on_invalid_schema="skip") as server:
        assert set(server.skipped) == {"remote_ref", "unknown_type", "never_fits"}
        assert "not a valid JSON Schema" in server.skipped["unknown_type"]
        assert "the 'openai_strict' schema dialect cannot express" in server.skipped["never_fits"]
        assert {"x_add", "x_bool_branch"} <= {t.name for t in server.tools}
    with pytest.raises(MCPToolSchemaError, match="openai_strict") as dialect:
        async with MCPServer.http(odd_url, prefix="x", exclude=["remote_ref", "unknown_type"]):
            pass
    assert dialect.value.dialect == "openai_strict"


@pytest.mark.parametrize("dialect", ["plain", "openai_strict", "gemini"])
async def test_tools_whose_schemas_point_into_themselves(dialect: str) -> None:
    """A TypeScript server's schemas (zod-to-json-schema: a sub-schema used
    twice is ``{"$ref": "#/properties/from"}``, a recursion one to its own
    property) stopped the server at start (``MCPToolSchemaError``: 'recursive
    or points to nothing'); now each tool is declared, the model is sent the
    schema with the pointers followed, and the arguments are validated
    against it before the server is called."""
    model = ScriptedModel([
        Reply(tool_calls=[
            Call("route", {"from": {"lat": "1", "lng": 2}, "to": {"lat": 2, "lng": 2},
                           "stops": [{"lat": 1.5, "lng": 2}]}),
            Call("route", {"from": {"lat": 1, "lng": 2}, "to": {"lat": 2}}),
            Call("outline", {"section": {"title": "a", "parts": [
                {"title": "b", "parts": [{"title": "c"}]}, {"title": "d"}]}}),
        ]),
        "done",
    ], profile=ModelProfile(schema_dialect=dialect))  # type: ignore[arg-type]
    async with stdio("--generated-schemas", include=["route", "outline"]) as server:
        await ReActAgent("a", model, tools=[server]).call("how far, and how long?")
    sent = {t.name: t.parameters for t in model.requests[0].tools}
    assert "#/properties" not in str(sent)
    assert sent["route"]["properties"]["to"]["required"] == ["lat", "lng"]
    results = [(r.output, r.is_error) for r in model.requests[1].messages[-1].tool_results]
    assert results[0] == ("111 km", False)  # "1" read as 1, as every tool's arguments
    assert results[1][1] and "to: 'lng' is a required property" in results[1][0]
    assert results[2] == ("4 sections", False)


async def test_numbers_as_strings_are_read_inside_unions_as_pydantic_reads_them() -> None:
    """C27 for a FastMCP server's tool: ``limit: int | None = None`` is
    ``anyOf [integer, null]``, and ``"5"`` was an error result the model had
    to answer again (``'5' is not valid under any of the given schemas``),
    inside a discriminated union too; pydantic's smart mode reads it as 5,
    and keeps ``"7"`` a string where a branch takes strings."""
    model = ScriptedModel([
        Reply(tool_calls=[
            Call("search", {"q": "tea", "limit": "5", "sort": "7",
                            "filter": {"kind": "price", "max": "9.5"}}),
            Call("search", {"q": "tea", "filter": {"kind": "stock", "only": "yes"}}),
            Call("search", {"q": "tea", "limit": "five"}),
            Call("search", {"q": "tea", "filter": {"kind": "price", "max": "cheap"}}),
        ]),
        "done",
    ])
    async with stdio("--generated-schemas", include=["search"]) as server:
        await ReActAgent("a", model, tools=[server]).call("find tea")
    results = [(r.output, r.is_error) for r in model.requests[1].messages[-1].tool_results]
    assert results[0] == ('{"q":"tea","limit":5,"sort":"7","filter":{"kind":"price","max":9.5}}',
                          False)
    assert results[1] == ('{"q":"tea","filter":{"kind":"stock","only":true}}', False)
    assert results[2][1] and "limit: fits no branch of anyOf (integer | null): got a string" \
        in results[2][0]
    # a union's error names its branches and the closest one's failing path (it said only
    # "... is not valid under any of the given schemas")
    assert results[3][1] and ("filter: fits no branch of oneOf (Price | InStock); closest, "
                              "Price: filter.max: 'cheap' is not of type 'number'") \
        in results[3][0] and "only" not in results[3][0]


async def test_bad_schema_stops_a_stdio_server_cleanly() -> None:
    before = child_pids()
    with pytest.raises(MCPToolSchemaError, match=r"tool 'remote_ref'"):
        async with stdio("--bad-schema"):
            pass
    assert child_pids() <= before


# ---------------------------------------------------------------------------- names


async def test_name_collisions_are_errors_at_set_up(http_url: str, odd_url: str) -> None:
    async with MCPServer.http(http_url, name="one") as one, \
            MCPServer.http(http_url, name="two") as two:
        with pytest.raises(ToolNameError, match=r"'add'.*tool source 'one' and from tool "
                                                r"source 'two'.*prefix"):
            ReActAgent("a", ScriptedModel([]), tools=[one, two])

        def add(a: int, b: int) -> int:
            return a + b

        with pytest.raises(ToolNameError, match=r"'add'.*the agent's own tools"):
            ReActAgent("a", ScriptedModel([]), tools=[add, one])
    async with MCPServer.http(http_url, prefix="a") as one, \
            MCPServer.http(http_url, prefix="b") as two:
        agent = ReActAgent("a", ScriptedModel([]), tools=[one, two])
        assert {"a_add", "b_add"} <= set(agent.toolkit.names)
    with pytest.raises(ToolNameError, match=r"'generate_response'.*reserved for structured"):
        async with MCPServer.http(odd_url, on_invalid_schema="skip"):
            pass
    async with MCPServer.http(odd_url, prefix="srv", on_invalid_schema="skip") as server:
        assert "srv_generate_response" in [t.name for t in server.tools]
    with pytest.raises(ToolNameError, match="invalid tool prefix"):
        stdio(prefix="9lives")


async def test_tools_used_outside_async_with(http_url: str) -> None:
    server = MCPServer.http(http_url)
    model = ScriptedModel(["fine"])
    agent = ReActAgent("a", model, tools=[server])  # built before the server runs
    with pytest.raises(MCPNotRunningError, match="not running"):
        await agent.call("go")
    async with server:
        assert (await agent.call("go")).text == "fine"
        assert "add" in tool_names(model.requests[0])
    with pytest.raises(MCPNotRunningError):
        await server.call_tool("add", {"a": 1, "b": 2})


# ---------------------------------------------------------------------------- refresh


async def test_tools_list_changed_reaches_the_next_request() -> None:
    def step(request: RecordedRequest) -> Reply | str:
        names = tool_names(request)
        if "secret" not in names:
            return Reply(tool_calls=[Call("unlock", {})])
        if not request.messages[-1].tool_results or request.messages[-1].tool_results[0].name \
                != "secret":
            return Reply(tool_calls=[Call("secret", {})])
        return f"the secret is {request.messages[-1].tool_results[0].output}"

    async with stdio() as server:
        model = FunctionModel(step)
        agent = ReActAgent("a", model, tools=[server])
        revision = server.tools_revision
        reply = await agent.call("find the secret")
        assert reply.text == "the secret is 42"
        assert "secret" not in tool_names(model.requests[0])
        assert "secret" in tool_names(model.requests[1])
        assert server.tools_revision == revision + 1


# ---------------------------------------------------------------------------- concurrency


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_100_concurrent_calls_over_one_session(transport: str, http_url: str) -> None:
    server = stdio() if transport == "stdio" else MCPServer.http(http_url)
    async with server:
        results: dict[int, Any] = {}

        async def call(i: int) -> None:
            results[i] = await server.call_tool("add", {"a": i, "b": 1000})

        async with anyio.create_task_group() as tg:
            for i in range(100):
                tg.start_soon(call, i)
        assert {i: r.structured for i, r in results.items()} == {
            i: {"sum": i + 1000} for i in range(100)}
        # the same through an agent: one reply with 100 tool calls, run concurrently
        model = ScriptedModel([Reply(tool_calls=[Call("add", {"a": i, "b": 1}, id=f"c{i}")
                                                 for i in range(100)]), "done"])
        await ReActAgent("a", model, tools=[server]).call("go")
        outputs = [r.output for r in model.requests[1].messages[-1].tool_results]
        assert outputs == [f'{{"sum":{i + 1}}}' for i in range(100)]


# ---------------------------------------------------------------------------- transports


async def test_streamable_http_and_sse() -> None:
    with http_server() as base:
        async with MCPServer.http(f"{base}/mcp", prefix="web") as server:
            assert server.name == "127.0.0.1"
            assert (await server.call_tool("echo", {"text": "over http"})).text == "over http"
    with http_server("--sse") as base:
        async with MCPServer.sse(f"{base}/sse") as server:
            assert (await server.call_tool("add", {"a": 1, "b": 2})).structured == {"sum": 3}
            model = ScriptedModel([Reply(tool_calls=[Call("lookup", {"sku": "A-1"})]), "ok"])
            await ReActAgent("a", model, tools=[server]).call("go")
            assert model.requests[1].messages[-1].tool_results[0].output == (
                '{"sku":"A-1","price":12.5}')


# ---------------------------------------------------------------------------- cancellation


async def test_cancelled_calls_and_starts_leak_nothing() -> None:
    before = child_pids()
    async with stdio() as server:
        with anyio.move_on_after(0.2) as scope:
            await server.call_tool("slow", {"seconds": 30}, timeout=None)
        assert scope.cancelled_caught
        assert (await server.call_tool("add", {"a": 1, "b": 1})).structured == {"sum": 2}
    for delay in (0.0, 0.05, 0.3):  # cancelled while spawning, while starting up, while listing
        with anyio.move_on_after(delay):
            async with stdio():
                await anyio.sleep_forever()
    assert child_pids() <= before


# ---------------------------------------------------------------------------- leaks


async def test_sessions_opened_and_closed_leak_no_process_or_socket(http_url: str) -> None:
    """Sessions closed normally, cancelled while starting and cancelled mid-call
    leave no child process and no descriptor behind (``bench_mcp`` runs 1,000)."""
    async with MCPServer.http(http_url):  # warm-up: lazy imports and the like
        pass
    async with stdio():
        pass
    collect_earlier_garbage()  # an earlier test's socket closed by the gc would skew the count
    procs, fds = child_pids(), open_fds()
    await open_and_close(lambda: MCPServer.http(http_url), count=60, concurrency=10)
    await open_and_close(stdio, count=9, concurrency=3)
    assert child_pids() == procs
    assert open_fds() == fds


def test_reprs_hold_no_secret() -> None:
    server = MCPServer.stdio("npx", ["-y", "files-server", "--api-key", "sk-abcdef0123456789",
                                     "--token=tok_99999999abc"],
                             env={"GITHUB_TOKEN": "ghp_0123456789abcdef"})
    assert repr(server) == ("MCPServer(name='npx', stdio 'npx -y files-server --api-key *** "
                            "--token=***', stopped)")
    web = MCPServer.http("https://h.example/mcp/sk-ak-0123456789abcdefXYZ/sse?key=1",
                         headers={"X-Api-Key": "k-0123456789abcdef"})
    assert repr(web.target) == "HTTPTarget('https://h.example/mcp/***/sse?…', sse=False)"
    assert web.name == "h.example"
