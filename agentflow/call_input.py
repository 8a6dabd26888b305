"""A call's input: what ``ReActAgent.call`` / ``stream`` accept as the message,
and the working copy of a state's memory a call starts from."""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.acting import not_executed
from agentflow.errors import InvalidInputError
from agentflow.messages import Msg

__all__ = ["answer_open_calls", "coerce_input"]


def coerce_input(msg: str | Msg | Sequence[str | Msg] | None) -> list[Msg]:
    """The call's input as user messages.

    Raises:
        InvalidInputError: not a str, a Msg, or a non-empty sequence of them.
    """
    if msg is None:
        return []
    if isinstance(msg, str):
        return [Msg.user(msg)]
    if isinstance(msg, Msg):
        return [msg]
    if isinstance(msg, Sequence) and not isinstance(msg, bytes | bytearray):
        if not msg:
            raise InvalidInputError("the message list is empty: pass at least one message")
        out: list[Msg] = []
        for i, item in enumerate(msg):
            if isinstance(item, str):
                out.append(Msg.user(item))
            elif isinstance(item, Msg):
                out.append(item)
            else:
                raise InvalidInputError(
                    f"message {i} is a {type(item).__name__}; expected str or Msg"
                )
        return out
    raise InvalidInputError(
        f"the message must be a str, a Msg or a list of them, got {type(msg).__name__}"
    )


def answer_open_calls(memory: Sequence[Msg]) -> list[Msg]:
    """A working copy of ``memory`` in which every tool call has a result.

    Memory the agent wrote always does; memory built or edited by hand (or
    restored from tampered JSON) may not, and vendors refuse a conversation
    with an unanswered tool call. Missing results are added as errors.
    """
    out: list[Msg] = []
    for i, msg in enumerate(memory):
        out.append(msg)
        if msg.role != "assistant" or not msg.tool_uses:
            continue
        answered = {r.tool_use_id for m in memory[i + 1 : i + 2] for r in m.tool_results}
        missing = [c for c in msg.tool_uses if c.id not in answered]
        if missing:
            out.append(not_executed(missing))
    return out
