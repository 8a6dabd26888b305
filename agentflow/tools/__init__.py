"""Tools: python callables the model can call.

``Tool.from_function`` turns a sync or async function into a tool: its name,
its docstring (summary and ``Args:`` section) and a JSON Schema of its
parameters built by pydantic from the signature. Arguments are validated
(lax mode: ``"30"`` becomes ``30``) before the function runs; a validation
error or an exception becomes an error result the model can read, never a
crash of the agent. Sync functions run in a worker thread.

A ``Toolkit`` holds an agent's tools, checks names (``^[A-Za-z0-9_-]{1,64}$``,
unique) and runs tool calls. Beside tools it takes ``ToolSource``s: sets of
tools that can change while the agent lives (an MCP server's, see
``agentflow.mcp``); the toolkit reads each source's current tools when the
source's ``tools_revision`` moves, and checks the names again then.

The rooms: ``names`` (the tool-name rule, its check and repair),
``function_tool`` (``Tool`` and ``@tool``: a callable's schema, argument
checks and run; ``JsonText``, a result that is JSON already), ``toolkit``
(``Toolkit``, ``ToolSource``), ``progress`` (``report_progress``: a running
tool's progress, streamed as ``ToolProgress``). Every public name is
importable from here.
"""

from __future__ import annotations

from agentflow.tools.function_tool import JsonText, Tool, describe_validation_error, tool
from agentflow.tools.names import TOOL_NAME_PATTERN, sanitize_tool_name, validate_tool_name
from agentflow.tools.progress import report_progress
from agentflow.tools.toolkit import Toolkit, ToolSource
from agentflow.tools.toolkit import ToolLike as ToolLike  # for agent.py's signature

__all__ = [
    "TOOL_NAME_PATTERN",
    "JsonText",
    "Tool",
    "ToolSource",
    "Toolkit",
    "describe_validation_error",
    "report_progress",
    "sanitize_tool_name",
    "tool",
    "validate_tool_name",
]
