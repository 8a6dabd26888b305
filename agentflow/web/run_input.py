"""What a UI protocol's request asks for, as agentflow values: the
conversation so far, the message to answer, the client's tools and state.

``agentflow.web.agui.read_run_input`` (AG-UI ``RunAgentInput``) and
``agentflow.web.aisdk.read_chat_request`` (the AI SDK's ``useChat`` body)
return a ``RunInput``; run it with ``agent.stream(run.message, output,
state=run.agent_state())``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentflow.approvals import Decision
from agentflow.errors import InvalidInputError
from agentflow.messages import Msg
from agentflow.state import AgentState

__all__ = ["ClientTool", "RunInput", "split_last_user"]


@dataclass(frozen=True, slots=True)
class ClientTool:
    """A tool the client (the browser) offers: its name, description and
    argument JSON Schema (``parameters``), as the protocol sent them."""

    name: str
    description: str
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RunInput:
    """One run's input.

    Attributes:
        history: the conversation before ``message``, oldest first.
        message: the last user message (what the call answers).
        tools: the client's tools (not run by the server; an app may offer
            them to the model, or ignore them).
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


def split_last_user(messages: Sequence[Msg]) -> tuple[tuple[Msg, ...], Msg]:
    """``(history, last user message)``.

    Raises:
        InvalidInputError: the last message is not the user's (nothing to answer).
    """
    if not messages or messages[-1].role != "user":
        raise InvalidInputError("the run's messages must end with a user message")
    return tuple(messages[:-1]), messages[-1]
