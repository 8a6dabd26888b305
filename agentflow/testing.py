"""Deterministic models for tests: ``ScriptedModel`` and ``FunctionModel``.

Both are real ``ChatModel``s (no mocking): they stream chunks exactly as a
provider adapter does, record every request, and take any ``ModelProfile``,
so an agent's behaviour for a vendor can be tested without the network::

    model = ScriptedModel([
        Reply(tool_calls=[Call("lookup", {"q": "x"})]),
        Reply(tool_calls=[Call("generate_response", {"name": "Ann"})]),
    ])
    agent = ReActAgent("t", model, tools=[lookup])
    reply = await agent.call("find Ann", Contact)
    assert model.requests[1].tools[-1].name == "generate_response"
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from agentflow._clean_text import json_bytes
from agentflow._slots_init import slot_init
from agentflow.messages import Msg, new_id
from agentflow.model import (
    FinishChunk,
    FinishReason,
    GenerateOptions,
    ModelChunk,
    ModelProfile,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
    UsageChunk,
)

__all__ = ["Call", "FunctionModel", "RecordedRequest", "Reply", "ScriptedModel"]


@dataclass(frozen=True, slots=True)
class Call:
    """A scripted tool call. ``arguments`` is an object or raw argument text
    (sent as given, e.g. ``""`` or broken JSON)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted model reply.

    Attributes:
        text: reply text. thinking: reasoning text (streamed first).
        tool_calls: calls, streamed after the text, as ``ToolCallDelta``s.
        usage: reported usage (default: 10 in, 5 out).
        finish_reason: default ``tool_calls`` when there are calls, else ``stop``.
        chunk_size: split text and argument strings into pieces of this many
            characters (``None``: one piece each).
        error: raised instead of replying (after ``error_after`` chunks, if set).
        delay: seconds to sleep before each chunk.
    """

    text: str = ""
    thinking: str = ""
    tool_calls: Sequence[Call] = ()
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    chunk_size: int | None = None
    error: BaseException | None = None
    error_after: int | None = None
    delay: float = 0.0


ReplyLike = Reply | str


@slot_init
@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request a test model received."""

    messages: tuple[Msg, ...]
    tools: tuple[ToolSpec, ...]
    options: GenerateOptions

    @property
    def tool_names(self) -> list[str]:
        """Names of the declared tools."""
        return [t.name for t in self.tools]


def _pieces(text: str, size: int | None) -> list[str]:
    if not size or len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


_DEFAULT_USAGE = Usage(10, 5)  # immutable: one object for every reply that gives none
_DEFAULT_USAGE_CHUNK = UsageChunk(_DEFAULT_USAGE)
_FINISH = {reason: FinishChunk(reason, reason) for reason in ("stop", "tool_calls")}
"""The chunks most replies end with (immutable: shared, not made per reply)."""


def _chunks(reply: Reply) -> list[ModelChunk]:
    chunks: list[ModelChunk] = []
    size = reply.chunk_size
    if reply.thinking:
        chunks.extend([ThinkingDelta(p) for p in _pieces(reply.thinking, size)])
    if reply.text:
        text = reply.text
        if not size or len(text) <= size:  # one piece: no list of pieces
            chunks.append(TextDelta(text))
        else:
            chunks.extend([TextDelta(p) for p in _pieces(text, size)])
    for index, call in enumerate(reply.tool_calls):
        args = (
            call.arguments
            if isinstance(call.arguments, str)
            else json_bytes(dict(call.arguments)).decode()
        )
        call_id = call.id or f"call_{new_id()}"
        if not size or len(args) <= size:  # one piece: no list of pieces
            chunks.append(ToolCallDelta(index, call_id, call.name, args))
            continue
        pieces = _pieces(args, size)
        chunks.append(ToolCallDelta(index, call_id, call.name, pieces[0]))
        chunks.extend([ToolCallDelta(index, arguments=p) for p in pieces[1:]])
    usage = reply.usage
    chunks.append(UsageChunk(usage) if usage else _DEFAULT_USAGE_CHUNK)
    reason = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    finish = _FINISH.get(reason)
    chunks.append(finish if finish is not None else FinishChunk(reason, reason))
    return chunks


def _script(reply: Reply) -> Sequence[ModelChunk | BaseException]:
    """What streaming ``reply`` does, in order: its chunks, with its error
    (raised instead of replying, after ``error_after`` chunks, or after the
    last one when ``error_after`` is at or past it)."""
    if reply.error is None:
        return _chunks(reply)  # no copy
    if reply.error_after is None:
        return [reply.error]
    steps: list[ModelChunk | BaseException] = list(_chunks(reply))
    at = reply.error_after
    if 0 <= at < len(steps):
        del steps[at:]
    steps.append(reply.error)
    return steps


class _Recorder:
    def __init__(self, profile: ModelProfile | None, name: str) -> None:
        self._profile = profile or ModelProfile()
        self._name = name
        self.requests: list[RecordedRequest] = []

    @property
    def profile(self) -> ModelProfile:
        """The profile this model reports."""
        return self._profile

    @property
    def model_name(self) -> str:
        """The model's name."""
        return self._name

    def _record(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> RecordedRequest:
        request = RecordedRequest(tuple(messages), tuple(tools), options)
        self.requests.append(request)
        return request


class ScriptedModel(_Recorder):
    """Replays ``replies`` in order, one per request (a str is a text reply).

    Raises (from ``stream``):
        RuntimeError: more requests than scripted replies.
        the scripted ``Reply.error``.
    """

    def __init__(
        self,
        replies: Sequence[ReplyLike] = (),
        *,
        profile: ModelProfile | None = None,
        name: str = "scripted",
    ) -> None:
        super().__init__(profile, name)
        self.replies = [Reply(text=r) if isinstance(r, str) else r for r in replies]

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Record the request and stream the next scripted reply."""
        index = len(self.requests)
        self._record(messages, tools, options)
        if index >= len(self.replies):
            raise RuntimeError(
                f"ScriptedModel got request {index + 1} but only {len(self.replies)} "
                "replies were scripted"
            )
        reply = self.replies[index]
        for step in _script(reply):  # no generator layer that only forwards chunks
            if isinstance(step, BaseException):
                raise step
            if reply.delay:
                await anyio.sleep(reply.delay)
            yield step


ReplyFunction = Callable[[RecordedRequest], ReplyLike | Awaitable[ReplyLike]]


class FunctionModel(_Recorder):
    """Answers each request with ``function(request)`` (sync or async), which
    returns a ``Reply`` or a str."""

    def __init__(
        self,
        function: ReplyFunction,
        *,
        profile: ModelProfile | None = None,
        name: str = "function",
    ) -> None:
        super().__init__(profile, name)
        self.function = function

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Record the request, ask the function, stream its reply."""
        request = self._record(messages, tools, options)
        result = self.function(request)
        if inspect.isawaitable(result):
            result = await result
        reply = Reply(text=result) if isinstance(result, str) else result
        for step in _script(reply):  # no generator layer that only forwards chunks
            if isinstance(step, BaseException):
                raise step
            if reply.delay:
                await anyio.sleep(reply.delay)
            yield step
