"""Client tools: tools the model may call that the caller runs, not the agent
(a browser's frontend tools), and the call that pauses until their results
come back.

    agent2 = with_client_tools(agent, [ClientTool("pick_color", "Ask the user",
                                                   {"type": "object", "properties": {}})])
    state = AgentState()
    reply = await agent2.call("Which color?", state=state)
    # the model called pick_color: the call ended with stop reason
    # "client_tool_calls", the call unrun; the caller runs it, then:
    resolve_client_tools(state, {call_id: ToolResultBlock(call_id, "teal")})
    reply = await agent2.call(None, state=state)   # the model reads "teal"

How it works, through the loop's seams, the way approvals pause a call
(``agentflow.approvals``; no branch for client tools in the loop):
``ClientTools.on_call_start`` declares the tools for the call
(``CallExecution.call_tools``, never the agent's toolkit; ``declared_tools``
tells the output strategy of the call beforehand); ``post_reasoning`` answers
each call of one with a placeholder result (``CLIENT_PENDING_OUTPUT``; the
other calls of the step run as usual), marked waiting (``Act.waiting``), so
after acting the loop ends the call with stop reason ``client_tool_calls``; a
call whose arguments do not match the tool's JSON Schema is answered with an
error for the model instead, a failure of the tool (``Act.failed``) that
counts against the agent's ``tool_retries`` as a server tool's bad arguments
do. The arguments are read as leniently as the agent's own tools read
theirs (``lax_arguments``: ``"3"`` for an integer is 3) before the check,
and the call is shown (``ToolUse``, so sent to the client) with that reading
(``Act.inputs``). A caller that keeps the conversation (a store) puts the client's results
in place of the placeholders with ``resolve_client_tools``; a caller whose
client sends the whole history back (the call id's result in it) runs the
next call on that history.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonschema.validators import validator_for

from agentflow.client_tool_checks import (
    DEFAULT_CLIENT_TOOL_LIMITS,
    ClientToolLimits,
    check_client_tools,
)
from agentflow.errors import InvalidInputError
from agentflow.events import ToolResult
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.middleware.base import Act, Middleware, ModelRequest
from agentflow.model import ToolSpec
from agentflow.output.decoding import RAW_ARGUMENTS, explain_raw, lax_arguments
from agentflow.output.schema_errors import describe_schema_errors
from agentflow.waiting_calls import settle_calls, waiting_step

if TYPE_CHECKING:
    from agentflow.agent import ReActAgent
    from agentflow.execution import CallExecution
    from agentflow.state import AgentState

__all__ = ["CLIENT_PENDING_OUTPUT", "ClientTool", "ClientToolLimits", "ClientTools",
           "check_client_tools",
           "is_client_pending", "pending_client_calls", "resolve_client_tools",
           "with_client_tools"]

CLIENT_PENDING_OUTPUT = ("Awaiting the client: this tool runs in the client and has not "
                         "returned yet.")
"""The placeholder result of a client tool's call until the client's result
comes (an error result, so that no vendor mistakes it for the tool's output)."""

_EMPTY_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ClientTool:
    """A tool the client (a browser) runs: its name, description and the JSON
    Schema of its arguments (``parameters``; ``None``: no arguments), as the
    client declared them."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] | None = None

    def spec(self) -> ToolSpec:
        """The tool as the model sees it (its schema as the client wrote it)."""
        return ToolSpec(self.name, self.description or "",
                        self.parameters if self.parameters else _EMPTY_PARAMETERS)


class ClientTools(Middleware):
    """Offer ``tools`` (``ClientTool``s, checked with ``check_client_tools``)
    to the model for each call, and end a call whose model called one of them
    (stop reason ``client_tool_calls``), the call unrun. A call whose
    arguments do not match the tool's JSON Schema (checked with
    ``jsonschema``) never reaches the client: the model reads an error result
    listing each failing argument and calls again, as with the agent's own
    tools, and the call counts against the tool's retry budget (the agent's
    ``tool_retries``: past it the call raises ``ToolRetriesExceededError``).

    One instance is made for the calls that offer the same tools (a request's);
    ``with_client_tools`` is the usual way to get an agent that holds one.

    Raises:
        InvalidInputError: as ``check_client_tools`` (within ``limits``).
    """

    def __init__(self, tools: Iterable[ClientTool], *,
                 limits: ClientToolLimits = DEFAULT_CLIENT_TOOL_LIMITS) -> None:
        self.tools = check_client_tools(tools, limits=limits)
        self.names = frozenset(t.name for t in self.tools)
        self._specs = [t.spec() for t in self.tools]
        self._validators = {t.name: validator_for(dict(t.parameters))(dict(t.parameters))
                            for t in self.tools if t.parameters}

    def declared_tools(self) -> Sequence[ToolSpec]:
        return self._specs

    async def on_call_start(self, ex: CallExecution) -> None:
        for spec in self._specs:
            ex.call_tools[spec.name] = spec

    async def pre_reasoning(self, ex: CallExecution, request: ModelRequest) -> None:
        names = [t.name.lower() for t in request.tools]
        clash = sorted(n for n in self.names if names.count(n.lower()) > 1)
        if clash:  # a tool source (an MCP server) grew a tool of that name
            raise InvalidInputError(f"client tool {clash[0]!r} has the name of one of the "
                                    "server's tools; rename one of them")

    async def post_reasoning(self, ex: CallExecution, reply: Msg) -> Act | None:
        mine = [c for c in reply.tool_uses if c.name in self.names]
        if not mine:
            return None
        results: dict[str, ToolResultBlock] = {}
        waiting: list[str] = []
        failed: list[str] = []
        inputs: dict[str, Mapping[str, Any]] = {}
        for call in mine:
            data, problem = self._read(call)
            if problem is None:  # the client's to run: the call pauses for its result
                results[call.id] = ToolResultBlock(call.id, CLIENT_PENDING_OUTPUT, True, call.name)
                waiting.append(call.id)
                if data != call.input:
                    inputs[call.id] = data  # the client is sent the arguments as read
            else:  # never sent to the client: the model reads what is wrong and calls again
                results[call.id] = ToolResultBlock(call.id, problem, True, call.name)
                failed.append(call.id)  # a failed call of the tool: its retry budget counts it
        return Act(results, tuple(waiting), "client_tool_calls", tuple(failed), inputs)

    def _read(self, call: ToolUseBlock) -> tuple[dict[str, Any], str | None]:
        """``call``'s arguments as read (``lax_arguments``), and what is wrong
        with them against its tool's JSON Schema (``jsonschema``, the schema's
        own draft), as the error result the model reads (the agent's own
        tools answer bad arguments the same way); ``None``: valid."""
        data = dict(call.input)
        if set(data) == {RAW_ARGUMENTS}:  # not a JSON object at all
            raw = str(data[RAW_ARGUMENTS])
            return data, (f"Invalid arguments for tool {call.name!r}:\n- {RAW_ARGUMENTS}: "
                          f"{explain_raw(raw)} (got {raw[:200]!r})")
        validator = self._validators.get(call.name)
        if validator is None:
            return data, None
        schema = validator.schema
        read = lax_arguments(data, schema) if isinstance(schema, Mapping) else data
        data = dict(read) if isinstance(read, Mapping) else data
        problems = describe_schema_errors(validator.iter_errors(read))
        if not problems:
            return data, None
        lines = "\n".join(f"- {p}" for p in problems)
        return data, f"Invalid arguments for tool {call.name!r}:\n{lines}"


def with_client_tools(agent: ReActAgent, tools: Iterable[ClientTool], *,
                      limits: ClientToolLimits = DEFAULT_CLIENT_TOOL_LIMITS) -> ReActAgent:
    """``agent`` offering ``tools`` too: a shallow copy of it (the same model,
    toolkit and settings) with a ``ClientTools`` after its middleware;
    ``agent`` itself when ``tools`` is empty. Cheap: make one per request.

    Raises:
        InvalidInputError: a tool takes the name of one of ``agent``'s tools
            (or the output tool's, compared case-insensitively), is not valid,
            or the tools pass one of ``limits`` (``check_client_tools``).
    """
    checked = check_client_tools(tools, taken=agent.toolkit.names, limits=limits)
    if not checked:
        return agent
    offering = copy.copy(agent)
    offering.middleware = [*agent.middleware, ClientTools(checked, limits=limits)]
    return offering


def is_client_pending(result: ToolResult) -> bool:
    """Whether the ``ToolResult`` event is the placeholder of a call that
    waits for the client's result (not a result to show): its ``waiting`` is
    ``"client_tool_calls"``, set by the loop from the held calls' ids. Never
    decided by the result's text (a server tool's error may read like
    ``CLIENT_PENDING_OUTPUT``); for a stored conversation,
    ``pending_client_calls(state)``."""
    return result.waiting == "client_tool_calls"


def pending_client_calls(state: AgentState) -> list[ToolUseBlock]:
    """The calls of ``state`` that wait for the client's results (``[]``: none):
    calls the step held (recorded by id, ``WAITING_CALLS``), never a result
    that only reads like the placeholder."""
    return waiting_step(state, CLIENT_PENDING_OUTPUT)[1]


def resolve_client_tools(state: AgentState,
                         results: Mapping[str, ToolResultBlock | str]) -> list[ToolResultBlock]:
    """Put the client's results (keyed by tool call id: a ``ToolResultBlock``,
    or the output text) in place of the placeholders of ``state``'s pending
    client calls, so the next ``agent.call(None, state=state)`` continues with
    the model reading them. Results for other calls are ignored (a client
    sends its whole history). Returns the new results, in call order.

    Raises:
        InvalidInputError: no call is pending, or a pending call has no result.
    """
    index, calls = waiting_step(state, CLIENT_PENDING_OUTPUT)
    if not calls:
        raise InvalidInputError("this conversation has no tool call waiting for the client")
    if missing := [c.id for c in calls if c.id not in results]:
        raise InvalidInputError(f"no result for the client tool call(s) {', '.join(missing)}")
    outcomes: dict[str, ToolResultBlock] = {}
    for call in calls:
        given = results[call.id]
        outcomes[call.id] = (ToolResultBlock(call.id, given, False, call.name)
                             if isinstance(given, str) else
                             ToolResultBlock(call.id, given.output, given.is_error, call.name,
                                             given.is_json))
    settle_calls(state, index, outcomes)
    return [outcomes[c.id] for c in calls]
