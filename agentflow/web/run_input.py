"""What a UI protocol's request asks for, as agentflow values: the
conversation so far, the message to answer, the client's tools and state.

``agentflow.web.agui.read_run_input`` (AG-UI ``RunAgentInput``) and
``agentflow.web.aisdk.read_chat_request`` (the AI SDK's ``useChat`` body)
return a ``RunInput``; run it with ``agent.stream(run.message, output,
state=run.agent_state())``. A run whose messages end with tool results (the
client's results for its own tools, ``agentflow.client_tools``) has no
``message``: the model continues from ``history``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentflow.approvals import Decision
from agentflow.client_tools import ClientTool
from agentflow.errors import InvalidInputError
from agentflow.messages import Msg, ToolResultBlock
from agentflow.state import AgentState

__all__ = ["ClientTool", "RunInput", "check_stateless", "offered_tools", "split_last_user",
           "split_run"]


@dataclass(frozen=True, slots=True)
class RunInput:
    """One run's input.

    Attributes:
        history: the conversation before ``message``, oldest first.
        message: the last user message (what the call answers).
        tools: the client's tools (``ClientTool``; run by the client, never
            by the server): the response helpers offer them to the model
            (``client_tools=``, ``agentflow.client_tools``).
        state: the client's state (AG-UI ``state``; ``None`` when absent).
        thread_id / run_id: the protocol's conversation and run ids.
        decisions: a resumed run's approval decisions (tool call id ->
            ``Approve``/``Refuse``; ``agentflow.approvals``), ``None`` for a
            new turn; ``message`` is then ``None``.
    """

    history: tuple[Msg, ...]
    message: Msg | None
    tools: tuple[ClientTool, ...] = ()
    state: Any = None
    thread_id: str = ""
    run_id: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    decisions: Mapping[str, Decision] | None = None

    def agent_state(self) -> AgentState:
        """A fresh ``AgentState`` holding ``history``."""
        return AgentState(self.history)

    def tool_results(self) -> dict[str, ToolResultBlock]:
        """Every tool result of ``history``, by tool call id (the client's
        results for its tools among them; ``resolve_client_tools`` takes them)."""
        return {r.tool_use_id: r for m in self.history if m.role == "tool"
                for r in m.tool_results}


def split_last_user(messages: Sequence[Msg]) -> tuple[tuple[Msg, ...], Msg]:
    """``(history, last user message)``.

    Raises:
        InvalidInputError: the last message is not the user's (nothing to answer).
    """
    if not messages or messages[-1].role != "user":
        raise InvalidInputError("the run's messages must end with a user message")
    return tuple(messages[:-1]), messages[-1]


def split_run(messages: Sequence[Msg]) -> tuple[tuple[Msg, ...], Msg | None]:
    """``(history, last user message)``, or ``(messages, None)`` when they end
    with tool results (the client answered its tools' calls: the model goes on).

    Raises:
        InvalidInputError: the messages end with neither (nothing to answer).
    """
    if messages and messages[-1].role == "tool":
        return tuple(messages), None
    if not messages or messages[-1].role != "user":
        raise InvalidInputError("the run's messages must end with a user message, or with "
                                "the results of the client's tool calls")
    return tuple(messages[:-1]), messages[-1]


def offered_tools(run: RunInput,
                  client_tools: bool | Iterable[ClientTool]) -> tuple[ClientTool, ...]:
    """The client tools a response offers the model: ``run.tools`` for
    ``True``, none for ``False``, else ``client_tools`` themselves."""
    if client_tools is True:
        return run.tools
    if client_tools is False:
        return ()
    return tuple(client_tools)


def check_stateless(run: RunInput) -> None:
    """Refuse ``run`` for an app that keeps no conversation (no store): a run
    that resumes approvals (``run.decisions``: an AG-UI ``resume``, an AI SDK
    ``approval-responded`` part) decides calls whose suspended state lives
    only in a store, and a stateless history is the client's to forge.

    Raises:
        InvalidInputError: ``run`` carries approval decisions.
    """
    if run.decisions is not None:
        raise InvalidInputError(
            "this run answers approval requests (tool call(s) "
            f"{', '.join(sorted(run.decisions)) or '(none)'}), which needs the conversation "
            "saved in a store: pass store= and key= (the key the suspended call was saved "
            "under) to the response helper; an app without a store cannot resume approvals")
