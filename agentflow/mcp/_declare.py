"""An MCP server's tool as an agent ``Tool``: its name (prefixed, made
valid), its input schema checked the way every tool schema agentflow sends is,
and a function that calls the server.

The checks, at listing time, so that a schema no model can be sent is a
clear error at set-up, never a vendor's 400 in the middle of a run:

1. the schema is read as ``json_schema_output`` reads a user's schema: valid
   JSON Schema (any draft ``jsonschema`` knows), an object at the root, every
   ``$ref`` local (draft-7 ``definitions`` and a recursion into the root are
   rewritten into ``$defs``). Arguments are validated against it too, with
   the lax reading of numbers and booleans every tool gets;
2. the result is transformed into every schema dialect (``plain``,
   ``openai_strict``, ``gemini``, ``local``) the way an agent does before a
   request (``agentflow.output.dialects.transform_schema``); a transform that
   fails names that dialect.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, get_args

from agentflow._secrets import mask_secrets
from agentflow.errors import MCPToolSchemaError, SchemaError, ToolError
from agentflow.model_profile import SchemaDialect
from agentflow.output.dialects import transform_schema
from agentflow.output.json_schema import json_schema_output, sent_schema
from agentflow.tools import TOOL_NAME_PATTERN, JsonText, Tool, sanitize_tool_name

__all__ = ["DIALECTS", "agent_tool_name", "declare_tool"]

DIALECTS: tuple[SchemaDialect, ...] = get_args(SchemaDialect)
"""Every schema dialect a model profile can name."""

CallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""``(server tool name, arguments) -> MCPToolResult``."""


def agent_tool_name(name: str, prefix: str | None) -> str:
    """The name the model sees: ``<prefix>_<name>``, made valid by
    ``sanitize_tool_name`` when it is not (MCP allows ``.`` and 128
    characters; vendors take ``^[A-Za-z_][A-Za-z0-9_-]{0,63}$``)."""
    full = f"{prefix}_{name}" if prefix else name
    return full if TOOL_NAME_PATTERN.fullmatch(full) else sanitize_tool_name(full)


def _checked_schema(server: str, tool: str, schema: Mapping[str, Any]
                    ) -> tuple[Any, dict[str, Any]]:
    """``(argument model, schema to send)`` for a tool's input schema.

    Raises:
        MCPToolSchemaError: see the module docstring.
    """
    where = f"MCP server {server!r}: tool {tool!r}"
    hint = "; leave the tool out with exclude=[...] or on_invalid_schema=\"skip\""
    try:
        model = json_schema_output(schema, name=sanitize_tool_name(f"{tool}_args"))
    except SchemaError as exc:
        raise MCPToolSchemaError(f"{where}: its input schema cannot be sent to any model: "
                                 f"{exc}{hint}", server=server, tool=tool) from None
    sent = sent_schema(model)
    assert sent is not None  # a json_schema_output type always has one
    for dialect in DIALECTS:
        try:
            transform_schema(copy.deepcopy(sent), dialect)
        except Exception as exc:  # a transform written for pydantic's schemas met another shape
            raise MCPToolSchemaError(
                f"{where}: the {dialect!r} schema dialect cannot express its input schema "
                f"({type(exc).__name__}: {exc}){hint}", server=server, tool=tool,
                dialect=dialect) from None
    return model, sent


def declare_tool(server: str, mcp_tool: Any, name: str, call: CallTool,
                 max_retries: int | None) -> Tool:
    """``mcp_tool`` (an SDK ``Tool`` listed by ``server``) as an agent ``Tool``
    called ``name``, whose function calls ``call`` and returns the result's
    text, marked ``JsonText`` when it is the JSON of one value
    (``MCPToolResult.is_json``: the tool result is then ``is_json``, its text
    not written a second time), and raises
    ``ToolError`` on the server's ``isError`` (the model reads it as an error result). That
    text is the remote tool's failure (FastMCP sends an exception's text so),
    so it goes through ``mask_secrets`` as a Python tool's exception does:
    registered keys, URLs' user info and queries never reach the model, the
    events or a UI.

    Raises:
        MCPToolSchemaError: its input schema cannot be sent (module docstring).
    """
    model, sent = _checked_schema(server, mcp_tool.name, mcp_tool.input_schema or {})
    remote = str(mcp_tool.name)

    async def function(**arguments: Any) -> Any:
        result = await call(remote, arguments)
        if result.is_error:
            raise ToolError(mask_secrets(result.text))
        return JsonText(result.text) if result.is_json else str(result.text)  # written once

    function.__name__ = name
    description = (mcp_tool.description or getattr(mcp_tool, "title", None)
                   or f"The {remote!r} tool of MCP server {server!r}.")
    return Tool(name=name, description=description, parameters=sent, function=function,
                args_model=model, is_async=True, max_retries=max_retries)
