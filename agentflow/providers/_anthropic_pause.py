"""Continuing a turn Anthropic paused (used by ``providers.anthropic``).

Anthropic runs its server tools (web search, web fetch, code execution,
tool search) in a loop of its own and may pause a long turn: the reply ends
with ``stop_reason: "pause_turn"``, holds no client tool call, and may end
on a server tool call that has not run yet. The documented handling
(platform.claude.com/docs/en/agents-and-tools/tool-use/server-tools, "The
server-side loop and pause_turn") is to send the paused content back as it
is, as the last assistant turn, with the same tools and no added user
message, and the model goes on with its turn. Read as an ordinary end, the
paused turn was the call's answer: cut short mid-work
(gsd-build/gsd-2#2870, dust-tt/dust#28390,
anthropics/anthropic-sdk-csharp#230, prism-php/prism#1003).

``continued`` does it inside the model's ``stream``: the agent sees one
reply, its text and calls as they come from each request in turn, and usage
summed over them. ``resumed`` does it for a reply already read whole (a
Message Batches result: a batch item pauses as a live request does, and its
turn goes on live).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from agentflow._logging import get_logger
from agentflow.model import ModelChunk, ThinkingDelta, Usage, UsageChunk
from agentflow.providers._anthropic_reply import PAUSED_TURN

__all__ = ["MAX_CONTINUATIONS", "continued", "continuing_messages", "resumed"]

_log = get_logger("agentflow.providers")

MAX_CONTINUATIONS = 5
"""Continuation requests for one paused turn; a turn still paused after them
ends as it is (finish reason ``other``, raw ``pause_turn``), with a warning."""

Send = Callable[[list[dict[str, Any]]], AsyncIterator[ModelChunk]]
"""One request: the turn's paused content so far (``[]``: none) -> its chunks."""


def _paused(chunk: ModelChunk) -> list[dict[str, Any]] | None:
    if type(chunk) is not ThinkingDelta or not chunk.provider_data:
        return None
    content = chunk.provider_data.get(PAUSED_TURN)
    return list(content) if content is not None else None


async def continued(send: Send) -> AsyncIterator[ModelChunk]:
    """The chunks of one turn, sent again while the API pauses it.

    Each request's chunks pass on as they come, but a paused reply's content
    (kept for the next request) and its finish; usage chunks carry what the
    earlier requests of the turn spent too (a reply's usage is its last
    usage chunk). Each request's stream is closed when this one is (a
    ``break``, a cancellation), its connection with it, not left to the
    garbage collector."""
    turn: list[dict[str, Any]] = []
    spent: Usage | None = None
    for attempt in range(MAX_CONTINUATIONS + 1):
        paused: list[dict[str, Any]] | None = None
        last: Usage | None = None
        async with aclosing(send(turn)) as chunks:  # type: ignore[type-var]
            async for chunk in chunks:
                if paused is None and (content := _paused(chunk)) is not None:
                    paused = content
                    continue
                if chunk.type == "usage":
                    last = chunk.usage
                    if spent is not None:
                        chunk = UsageChunk(spent + chunk.usage)
                elif chunk.type == "finish" and paused is not None and attempt < MAX_CONTINUATIONS:
                    continue  # the turn goes on in the next request
                yield chunk
        if paused is None:
            return
        if attempt == MAX_CONTINUATIONS:
            _log.warning("anthropic.pause_turn_limit", continuations=MAX_CONTINUATIONS)
            return
        turn = [*turn, *paused]
        if last is not None:
            spent = last if spent is None else spent + last


def resumed(first: Sequence[ModelChunk], send: Send) -> AsyncIterator[ModelChunk] | None:
    """The turn of a reply already read whole (``first``: its chunks, a batch
    result's), continued by ``send`` while the API pauses it; ``None`` when
    the reply did not pause (nothing to continue: use ``first`` as it is)."""
    if not any(_paused(chunk) is not None for chunk in first):
        return None

    async def replay() -> AsyncIterator[ModelChunk]:
        for chunk in first:
            yield chunk

    return continued(lambda turn: send(turn) if turn else replay())


def continuing_messages(sent: Any, turn: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    """The ``messages`` of a continuation: those of the paused request
    (``sent``), then the turn's paused content as the last assistant turn,
    its final text without trailing whitespace (the API refuses "final
    assistant content cannot end with trailing whitespace")."""
    content = list(turn)
    while content and content[-1].get("type") == "text":
        text = str(content[-1].get("text") or "").rstrip()
        if text:
            content[-1] = {**content[-1], "text": text}
            break
        content.pop()
    return [*sent, {"role": "assistant", "content": content}]
