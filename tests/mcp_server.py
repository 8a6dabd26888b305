"""A real MCP server for the tests, examples and benchmarks, built on the
official SDK's low-level ``Server`` class (``mcp.server.lowlevel``).

    python tests/mcp_server.py                 # stdio
    python tests/mcp_server.py --http          # streamable HTTP on 127.0.0.1, a free port;
                                               # prints "PORT <n>" once the socket listens
    python tests/mcp_server.py --sse           # the SDK's legacy SSE transport, same way
    python tests/mcp_server.py --bad-schema    # also lists tools whose schemas no model takes
    python tests/mcp_server.py --reserved-name # also lists a tool called generate_response
    python tests/mcp_server.py --http --port N # on port N (a restarted server's old port)
                                               # (over --http, POST /expire ends every session
                                               # open, as a server's idle timeout does: their
                                               # ids then answer 404)
    python tests/mcp_server.py --once PATH     # exit at start if PATH exists, else create it
                                               # (a server that cannot be restarted)
    python tests/mcp_server.py --http --cut    # a tools/call of ``echo`` with the text "cut"
                                    # has its response stream cut after its headers (a proxy's
                                    # idle timeout); the server and the session live on
    python tests/mcp_server.py --http --token T  # POSTs need "Authorization: Bearer T", else
                                    # 401; POST /revoke refuses T from then on, POST /overload
                                    # answers the next POST 503 as a gateway does
                                    # (tests/mcp_http_faults.py)
    python tests/mcp_server.py --latin1        # stdio written in Latin-1, not UTF-8
    python tests/mcp_server.py --grow          # also lists ``grow``, which adds the tool it
                                    # names (with a schema no model takes when ``bad``) and
                                    # sends notifications/tools/list_changed
    python tests/mcp_server.py --generated-schemas  # also lists tools whose schemas are written
                                    # as zod-to-json-schema (TypeScript) and pydantic (FastMCP) do
    python tests/mcp_server.py --http --pages N # tools/list in pages of N, a version tool
                                    # (``v<generation>``) first; POST /expire-mid-list arms the
                                    # next paged tools/list to end every session first (it then
                                    # answers 404) and start a new generation; with
                                    # --bound-cursors a cursor names its generation, and one of
                                    # another generation is refused (INVALID_PARAMS)

Tools: ``add`` (text and structured content), ``echo``, ``lookup`` (a
product's price, structured), ``slow`` (sleeps), ``crash`` (the process
exits mid-call), ``image`` (an image block and text), ``fail`` (an
``isError`` result), ``text.upper`` (a name with a dot), ``unlock`` (adds
the ``secret`` tool and sends ``notifications/tools/list_changed``), and
``big`` (a text of some megabytes); with
``--generated-schemas``, ``route`` and ``outline`` (schemas with JSON
pointer ``$ref``s, as zod-to-json-schema writes them) and ``search`` (an
optional integer and a discriminated union, as pydantic writes them).
"""

from __future__ import annotations

import base64
import itertools
import os
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
import orjson
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

try:  # run as a script: the module beside it; imported (tests.mcp_server): the package's
    from mcp_http_faults import cutting, guarded, read_body, rpc_of
except ImportError:
    from tests.mcp_http_faults import cutting, guarded, read_body, rpc_of

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)

_OBJECT = "object"


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": _OBJECT, "properties": properties,
            "required": list(properties) if required is None else required}


BASE_TOOLS = [
    types.Tool(name="add", description="Add two integers.",
               input_schema=_schema({"a": {"type": "integer"}, "b": {"type": "integer"}}),
               output_schema=_schema({"sum": {"type": "integer"}})),
    types.Tool(name="echo", description="Return the text unchanged.",
               input_schema=_schema({"text": {"type": "string"}})),
    types.Tool(name="lookup", description="The price of a product, by SKU.",
               input_schema=_schema({"sku": {"type": "string", "description": "the SKU"}}),
               output_schema=_schema({"sku": {"type": "string"}, "price": {"type": "number"}})),
    types.Tool(name="slow", description="Sleep for some seconds, then answer; cancelled, "
               "create the file mark names (and the file started names once it sleeps).",
               input_schema=_schema({"seconds": {"type": "number"}, "mark": {"type": "string"},
                                     "started": {"type": "string"}}, required=["seconds"])),
    types.Tool(name="steps", description="Work in steps, reporting progress when asked to "
               "(a progressToken), then say whether it was asked.",
               input_schema=_schema({"steps": {"type": "integer"}}, ["steps"])),
    types.Tool(name="crash", description="Exit the server process in the middle of the call.",
               input_schema=_schema({})),
    types.Tool(name="image", description="A 1x1 PNG image.", input_schema=_schema({})),
    types.Tool(name="fail", description="Always fails with the reason given.",
               input_schema=_schema({"reason": {"type": "string"}})),
    types.Tool(name="text.upper", description="Upper-case the text.",
               input_schema=_schema({"text": {"type": "string"}})),
    types.Tool(name="unlock", description="Make the secret tool available.",
               input_schema=_schema({})),
    types.Tool(name="big", description="A text of the given size.",
               input_schema=_schema({"megabytes": {"type": "number"}})),
]
SECRET = types.Tool(name="secret", description="The secret number.", input_schema=_schema({}))
BAD_TOOLS = [
    # a reference out of the document: no vendor follows it
    types.Tool(name="remote_ref", description="Its schema points to another document.",
               input_schema={"type": "object",
                             "properties": {"x": {"$ref": "https://schemas.invalid/x.json"}}}),
    # a type JSON Schema does not have: not valid JSON Schema
    types.Tool(name="unknown_type", description="Its schema is not valid JSON Schema.",
               input_schema={"type": "object", "properties": {"x": {"type": "text"}}}),
    # valid JSON Schema with a boolean subschema: the dialect transforms rewrite it
    types.Tool(name="bool_branch", description="A boolean schema in a union.",
               input_schema={"type": "object",
                             "properties": {"q": {"anyOf": [True, {"type": "string"}]}}}),
    # valid JSON Schema that no value fits (a required property whose schema is false):
    # no dialect can express it
    types.Tool(name="never_fits", description="A required property no value fits.",
               input_schema={"type": "object", "properties": {"q": False}, "required": ["q"]}),
]
_POINT = {"type": "object", "properties": {"lat": {"type": "number"}, "lng": {"type": "number"}},
          "required": ["lat", "lng"], "additionalProperties": False}
GENERATED_TOOLS = [
    # zod-to-json-schema (the TypeScript SDK's servers) writes a sub-schema used twice as a
    # JSON pointer to its first place, and a z.lazy recursion as one to its own property
    types.Tool(name="route", description="The distance between two points, in km.",
               input_schema={"type": "object", "properties": {
                   "from": _POINT, "to": {"$ref": "#/properties/from"},
                   "stops": {"type": "array", "items": {"$ref": "#/properties/from"}}},
                   "required": ["from", "to"], "additionalProperties": False,
                   "$schema": "http://json-schema.org/draft-07/schema#"}),
    types.Tool(name="outline", description="Count the sections of an outline.",
               input_schema={"type": "object", "properties": {"section": {
                   "type": "object", "properties": {
                       "title": {"type": "string"},
                       "parts": {"type": "array", "items": {"$ref": "#/properties/section"}}},
                   "required": ["title"], "additionalProperties": False}},
                   "required": ["section"], "additionalProperties": False,
                   "$schema": "http://json-schema.org/draft-07/schema#"}),
    # pydantic (FastMCP's servers): `limit: int | None = None`, a discriminated union of models
    types.Tool(name="search", description="Search the catalogue.", input_schema={
        "type": "object", "required": ["q"], "properties": {
            "q": {"type": "string"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "sort": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": "rank"},
            "filter": {"oneOf": [{"$ref": "#/$defs/Price"}, {"$ref": "#/$defs/InStock"}],
                       "discriminator": {"propertyName": "kind"}}},
        "$defs": {
            "Price": {"type": "object", "required": ["kind", "max"], "properties": {
                "kind": {"const": "price", "type": "string"}, "max": {"type": "number"}}},
            "InStock": {"type": "object", "required": ["kind", "only"], "properties": {
                "kind": {"const": "stock", "type": "string"}, "only": {"type": "boolean"}}}}}),
]
GROW = types.Tool(name="grow", description="Add a tool called name (its schema refers to "
                  "another document when bad) and say the tool list changed; when down, "
                  "tools/list answers an error from then on.",
                  input_schema=_schema({"name": {"type": "string"}, "bad": {"type": "boolean"},
                                        "down": {"type": "boolean"}}, required=["name"]))
RESERVED = types.Tool(name="generate_response", description="Takes the output tool's name.",
                      input_schema=_schema({}))


def _sections(section: Any) -> int:
    return 1 + sum(_sections(p) for p in section.get("parts", ()))


class Pages:
    """``--pages``: the size of a ``tools/list`` page, the tool list's
    generation (a server restarted with new tools), and how many paged
    requests are still to end every session first (``POST /expire-mid-list``)."""

    def __init__(self, size: int, bound: bool) -> None:
        self.size, self.bound = size, bound
        self.generation = 0
        self.armed = 0

    def page(self, tools: list[types.Tool], cursor: str | None) -> types.ListToolsResult:
        """The page at ``cursor`` (``"<offset>"``, or ``"<generation>:<offset>"``
        when cursors are bound to a generation) of the version tool and ``tools``."""
        tools = [types.Tool(name=f"v{self.generation}", description="The tool list's version.",
                            input_schema=_schema({})), *tools]
        generation, _, offset = (cursor or "0").rpartition(":")
        if self.bound and cursor and generation != str(self.generation):
            raise MCPError(types.INVALID_PARAMS, f"cursor {cursor!r} is not of this session")
        start = int(offset)
        end = start + self.size
        after = f"{self.generation}:{end}" if self.bound else str(end)
        return types.ListToolsResult(tools=tools[start:end],
                                     next_cursor=after if end < len(tools) else None)


def build(bad_schema: bool = False, reserved: bool = False,
          generated: bool = False, pages: Pages | None = None, grow: bool = False) -> Server[Any]:
    """The server; its tool list grows by ``secret`` once ``unlock`` is called,
    and by each tool ``grow`` adds."""
    unlocked = False
    grown: list[types.Tool] = []
    down = False

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        if down:
            raise MCPError(types.INTERNAL_ERROR, "the tool catalogue is down")
        tools = [*BASE_TOOLS, *(BAD_TOOLS if bad_schema else []), *([RESERVED] if reserved else []),
                 *(GENERATED_TOOLS if generated else []), *([SECRET] if unlocked else []),
                 *([GROW] if grow else []), *grown]
        if pages is not None:
            return pages.page(tools, params.cursor if params else None)
        return types.ListToolsResult(tools=tools)

    def text(value: str) -> list[types.ContentBlock]:
        return [types.TextContent(type="text", text=value)]

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal unlocked, down
        args = params.arguments or {}
        name = params.name
        if name == "add":
            total = int(args["a"]) + int(args["b"])
            return types.CallToolResult(content=text(str(total)),
                                        structured_content={"sum": total})
        if name == "echo":
            return types.CallToolResult(content=text(str(args["text"])))
        if name == "lookup":
            price = {"A-1": 12.5, "B-2": 3.0}.get(str(args["sku"]))
            if price is None:
                return types.CallToolResult(content=text(f"unknown SKU {args['sku']!r}"),
                                            is_error=True)
            data = {"sku": args["sku"], "price": price}
            return types.CallToolResult(content=text(f"{args['sku']}: {price}"),
                                        structured_content=data)
        if name == "slow":
            if args.get("started"):  # (a test waits for the call to be running)
                os.close(os.open(str(args["started"]), os.O_CREAT | os.O_WRONLY))
            try:
                await anyio.sleep(float(args["seconds"]))
            except anyio.get_cancelled_exc_class():
                if args.get("mark"):  # (notifications/cancelled reached the server)
                    os.close(os.open(str(args["mark"]), os.O_CREAT | os.O_WRONLY))
                raise
            return types.CallToolResult(content=text("done"))
        if name == "steps":
            token = (ctx.meta or {}).get("progress_token")
            count = int(args["steps"])
            for step in range(1, count + 1):
                if token is not None:
                    await ctx.session.send_progress_notification(
                        token, step, count, f"step {step} of {count}",
                        related_request_id=ctx.request_id)
            return types.CallToolResult(content=text(
                f"{count} steps; progress {'asked' if token is not None else 'not asked'}"))
        if name == "crash":
            sys.stdout.flush()
            os._exit(3)
        if name == "image":
            return types.CallToolResult(content=[
                types.TextContent(type="text", text="a red pixel"),
                types.ImageContent(type="image", data=base64.b64encode(PNG_1X1).decode(),
                                   mime_type="image/png"),
            ])
        if name == "fail":
            return types.CallToolResult(content=text(f"failed: {args.get('reason', '')}"),
                                        is_error=True)
        if name == "text.upper":
            return types.CallToolResult(content=text(str(args["text"]).upper()))
        if name == "route":
            legs = [args["from"], *args.get("stops", []), args["to"]]
            km = sum(abs(a["lat"] - b["lat"]) + abs(a["lng"] - b["lng"])
                     for a, b in itertools.pairwise(legs)) * 111
            return types.CallToolResult(content=text(f"{km:g} km"))
        if name == "search":
            return types.CallToolResult(content=text(orjson.dumps(args).decode()))
        if name == "outline":
            return types.CallToolResult(content=text(f"{_sections(args['section'])} sections"))
        if name == "big":
            return types.CallToolResult(content=text("x" * int(float(args["megabytes"]) * 2**20)))
        if name == "unlock":
            unlocked = True
            await ctx.session.send_tool_list_changed()
            return types.CallToolResult(content=text("unlocked"))
        if name == "grow":
            bad = {"type": "object", "properties": {"x": {"$ref": "https://schemas.invalid/x"}}}
            grown.append(types.Tool(name=str(args["name"]), description="A grown tool.",
                                    input_schema=bad if args.get("bad") else _schema({})))
            down = bool(args.get("down"))
            await ctx.session.send_tool_list_changed()
            return types.CallToolResult(content=text(f"grew {args['name']}"))
        if any(t.name == name for t in grown):
            return types.CallToolResult(content=text(f"grown tool {name} ran"))
        if name == "secret" and unlocked:
            return types.CallToolResult(content=text("42"))
        return types.CallToolResult(content=text(f"no tool {name!r}"), is_error=True)

    return Server("agentflow-test-server", on_list_tools=list_tools, on_call_tool=call_tool)


def _options(server: Server[Any]) -> Any:
    """Initialization options saying the tool list may change."""
    return server.create_initialization_options(NotificationOptions(tools_changed=True))


async def serve_stdio(server: Server[Any], latin1: bool = False) -> None:
    """Over stdin/stdout; ``latin1``: stdout written in Latin-1 (a server that writes its
    platform's encoding, cp1252 on Windows, instead of UTF-8)."""
    stdout = None
    if latin1:
        from io import TextIOWrapper

        stdout = anyio.wrap_file(TextIOWrapper(sys.stdout.buffer, encoding="latin-1"))
    async with stdio_server(stdout=stdout) as (read, write):
        await server.run(read, write, _options(server))


async def _end_sessions(server: Server[Any]) -> int:
    """End every open session, as the SDK's idle timeout ends one (the SDK has
    no public list of them: its session manager's); how many."""
    sessions = list(server._session_manager._server_instances.values())
    for transport in sessions:
        await transport.terminate()
    return len(sessions)


def _expiring_mid_list(app: Any, server: Server[Any], pages: Pages) -> Any:
    """``app``, but an armed ``Pages`` ends every session (and starts a new
    generation) before a ``tools/list`` request with a cursor reaches the SDK,
    which then answers it 404: a session that expires mid-listing, every time."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not pages.armed:
            return await app(scope, receive, send)
        messages, replay = await read_body(receive)
        rpc = rpc_of(messages)
        if (isinstance(rpc, dict) and rpc.get("method") == "tools/list"
                and (rpc.get("params") or {}).get("cursor")):
            pages.armed -= 1
            pages.generation += 1
            await _end_sessions(server)
        await app(scope, replay, send)

    return wrapped


def serve_http(server: Server[Any], sse: bool, port: int = 0, pages: Pages | None = None,
               cut: bool = False, token: str | None = None) -> None:
    """Streamable HTTP (or SSE) on 127.0.0.1: the socket is bound and listening
    before "PORT <n>" is printed, so a client connecting then is queued, never
    refused."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    app: Any
    if sse:
        from mcp.server.sse import SseServerTransport

        transport = SseServerTransport("/messages/")

        async def handle_sse(request: Any) -> Any:
            from starlette.responses import Response

            async with transport.connect_sse(request.scope, request.receive,
                                             request._send) as (read, write):
                await server.run(read, write, _options(server))
            return Response()

        app = Starlette(routes=[Route("/sse", endpoint=handle_sse, methods=["GET"]),
                                Mount("/messages/", app=transport.handle_post_message)])
    else:
        from starlette.responses import JSONResponse

        async def expire(request: Any) -> Any:
            return JSONResponse({"expired": await _end_sessions(server)})

        async def expire_mid_list(request: Any) -> Any:
            assert pages is not None, "--pages is not set"
            pages.armed += 1
            return JSONResponse({"generation": pages.generation})

        app = server.streamable_http_app(session_idle_timeout=None, custom_starlette_routes=[
            Route("/expire", endpoint=expire, methods=["POST"]),
            Route("/expire-mid-list", endpoint=expire_mid_list, methods=["POST"])])
        if pages is not None:
            app = _expiring_mid_list(app, server, pages)
        if cut:
            app = cutting(app)
        if token is not None:
            app = guarded(app, token)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])


def _flag(name: str) -> str | None:
    """The value after ``name`` in the command line."""
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main() -> None:
    if (once := _flag("--once")) is not None:
        if os.path.exists(once):
            sys.exit(f"{once} exists: this server starts once")
        open(once, "w").close()
    size = _flag("--pages")
    pages = Pages(int(size), bound="--bound-cursors" in sys.argv) if size else None
    server = build(bad_schema="--bad-schema" in sys.argv, reserved="--reserved-name" in sys.argv,
                   generated="--generated-schemas" in sys.argv, pages=pages,
                   grow="--grow" in sys.argv)
    if "--http" in sys.argv or "--sse" in sys.argv:
        serve_http(server, sse="--sse" in sys.argv, port=int(_flag("--port") or 0), pages=pages,
                   cut="--cut" in sys.argv, token=_flag("--token"))
    else:
        anyio.run(serve_stdio, server, "--latin1" in sys.argv)


if __name__ == "__main__":
    main()
