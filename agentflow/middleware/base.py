"""The middleware protocol: ordered hooks at named points of the loop.

Stages, in the order the loop reaches them::

    on_call_start(ex)                      once, before anything is sent
    ┌ pre_reasoning(ex, request)           edit the request snapshot
    │ on_chunk(ex, chunk, reply)           per streamed chunk (sync; hot path)
    │ on_model_error(ex, request, error)   a ProviderError: True retries the step
    │ post_reasoning(ex, reply)            None | Act | ReasonAgain | Finish
    │ post_acting(ex, results)             True stops the agent
    └ (repeat)
    on_call_end(ex)                        may rewrite ex.memory and ex.reply

Middleware run in list order. Every middleware's ``post_reasoning`` sees
every reply, and their decisions merge into the step's one decision
(``agentflow.middleware.decisions.merge_decisions``): no middleware's answer
(the output tool's, a cache's) can keep another from holding a call back
(an approval, a client tool). Hooks read and write the ``CallExecution`` (per
call), never the middleware object, which all calls share. Events a hook
wants to emit go through ``ex.emit``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from agentflow._slots_init import slot_init
from agentflow.errors import ProviderError
from agentflow.events import Event, StopReason
from agentflow.execution import CallExecution
from agentflow.messages import Msg, ToolResultBlock
from agentflow.model import (
    GenerateOptions,
    ModelChunk,
    ToolSpec,
)
from agentflow.reply import ReplyBuilder

__all__ = [
    "WAITING_CALLS",
    "Act",
    "Decision",
    "Finish",
    "Hooks",
    "Middleware",
    "ModelRequest",
    "ReasonAgain",
    "hooks_for",
    "sync_stage",
]


@dataclass(slots=True)
class ModelRequest:
    """The pre-reasoning snapshot of one request; middleware may edit it.

    ``messages`` is a copy: messages added to memory after the snapshot are
    not in it.
    """

    messages: list[Msg]
    tools: list[ToolSpec]
    options: GenerateOptions


WAITING_CALLS = "waiting_calls"
"""The metadata key of a tool message whose step left calls waiting
(``Act.waiting``): the list of their tool call ids. What waits is known by
the call, recorded when its placeholder was put in place, never by a
result's text (a server tool's error may read like a placeholder)."""


@slot_init
@dataclass(frozen=True, slots=True)
class Act:
    """Run the reply's tool calls; ``results`` answers some calls without
    running them (keyed by tool call id).

    ``waiting``: ids of calls among ``results`` whose answers are
    placeholders: the call is decided outside the loop (a person's approval,
    a client's result), so after acting the call pauses with stop reason
    ``pause`` (one of ``events.SUSPENDED``) and a later call resumes it (the
    loop records their ids in the tool message, ``WAITING_CALLS``). A
    waiting answer wins over another middleware's answer to the same call,
    and an output given in the same reply is not accepted (its truth may hang
    on the outcome); the model gives it again once the calls are decided.

    ``failed``: ids of calls among ``results`` whose answers are the call's
    failure (arguments that do not match the tool's schema): they count
    against the tool's retry budget (``Tool.max_retries``, else the agent's
    ``tool_retries``) as a failed run of it does, so a model that keeps
    misusing a tool a middleware answers ends with
    ``ToolRetriesExceededError`` too. Other answers never count.

    ``inputs``: the arguments a call is shown with (its ``ToolUse`` event),
    by id, when the middleware read them for a tool run outside the loop
    (a client tool's, read as leniently as the agent's own tools read
    theirs: ``"3"`` for an integer is 3); the model's own otherwise."""

    results: Mapping[str, ToolResultBlock] = field(default_factory=dict)
    waiting: tuple[str, ...] = ()
    pause: StopReason | None = None
    failed: tuple[str, ...] = ()
    inputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@slot_init
@dataclass(frozen=True, slots=True)
class ReasonAgain:
    """Skip acting and reason again, after appending ``messages`` to memory."""

    messages: tuple[Msg, ...] = ()


@slot_init
@dataclass(frozen=True, slots=True)
class Finish:
    """End the call now with ``stop_reason``."""

    stop_reason: StopReason = "completed"


Decision = Act | ReasonAgain | Finish


class Middleware:
    """Base class with no-op hooks; override the stages you need."""

    chunks_for_deltas_only: ClassVar[bool] = False
    """``True``: ``on_chunk`` only makes events for readers of the deltas
    (partial outputs), so the agent skips it for a call nobody reads the
    deltas of (``call()``); other hooks run either way."""

    output_calls_only: ClassVar[bool] = False
    """``True``: every stage is a no-op for a call that asks for no output type
    on a state without an active structured-output tool (``so_tool_active``
    unset), so the agent skips this middleware for such calls (plain text
    calls); ``on_model_error`` runs either way."""

    text_calls_only: ClassVar[bool] = False
    """``True``: every stage is a no-op for a call that asks for an output
    type, so the agent skips this middleware for such calls (each skipped
    async stage saves a coroutine per request); ``on_model_error`` runs
    either way."""

    def declared_tools(self) -> Sequence[ToolSpec]:
        """The tools this middleware declares for every call (in
        ``ex.call_tools``, at ``on_call_start``; it answers their calls),
        known before the call starts: a call that asks for an output counts
        them among the tools the model is offered when its strategy is
        chosen (``has_tools``). Default: none."""
        return ()

    async def on_call_start(self, ex: CallExecution) -> None:
        """The call begins (input messages are not yet in ``ex.memory``)."""

    async def pre_reasoning(self, ex: CallExecution, request: ModelRequest) -> None:
        """Edit ``request`` in place before it is sent."""

    def on_chunk(self, ex: CallExecution, chunk: ModelChunk, reply: ReplyBuilder) -> Event | None:
        """A chunk arrived (``reply`` already holds it); may return one event."""
        return None

    async def on_model_error(
        self, ex: CallExecution, request: ModelRequest, error: ProviderError
    ) -> bool:
        """The request failed; return ``True`` to rebuild and resend it."""
        return False

    async def post_reasoning(self, ex: CallExecution, reply: Msg) -> Decision | None:
        """The reply is in memory; decide what happens next (``None``: default)."""
        return None

    async def post_acting(self, ex: CallExecution, results: Msg) -> bool:
        """Tool results are in memory; return ``True`` to stop the agent."""
        return False

    async def on_call_end(self, ex: CallExecution) -> None:
        """The loop ended normally (not on error); may rewrite ``ex.memory``/``ex.reply``."""


M = TypeVar("M", bound=Middleware)
Now = Callable[[Any, CallExecution], None]
"""A sync stage's body, called as ``body(middleware, ex)``."""

_NOW = "__agentflow_now__"


def sync_stage(
    body: Callable[[M, CallExecution], None],
) -> Callable[[M, CallExecution], Coroutine[Any, Any, None]]:
    """Decorates an ``on_call_start`` / ``on_call_end`` whose body has no
    ``await``: the stage stays a coroutine method to its callers (``await
    m.on_call_start(ex)``; a subclass may override it or ``await super()``'s),
    and the agent's loop calls ``body`` itself, with no coroutine made per
    call (``Hooks.start_steps`` / ``end_steps``). A subclass that overrides
    the stage without this decorator is awaited as any other."""

    @functools.wraps(body)
    async def stage(self: M, ex: CallExecution) -> None:
        body(self, ex)

    setattr(stage, _NOW, body)
    return stage


def _steps(middleware: tuple[Middleware, ...], stage: str,
           ) -> tuple[tuple[Middleware, Now | None], ...]:
    """Each of ``middleware`` with its ``stage``'s sync body (``sync_stage``)
    or ``None`` (a coroutine method, awaited)."""
    return tuple((m, getattr(getattr(type(m), stage), _NOW, None)) for m in middleware)


_STAGES = ("on_call_start", "pre_reasoning", "on_chunk", "post_reasoning", "post_acting",
           "on_call_end")


@dataclass(frozen=True, slots=True)
class Hooks:
    """The middleware of an agent that override each stage, in list order.

    A stage a middleware leaves as ``Middleware``'s no-op is not called for
    it (each call of an async no-op creates and runs a coroutine). Built by
    ``hooks_for``; ``source`` is the middleware list it was built from.
    ``on_model_error`` is not listed: it runs only on errors.
    """

    source: list[Middleware]
    on_call_start: tuple[Middleware, ...]
    pre_reasoning: tuple[Middleware, ...]
    on_chunk: tuple[Middleware, ...]
    post_reasoning: tuple[Middleware, ...]
    post_acting: tuple[Middleware, ...]
    on_call_end: tuple[Middleware, ...]
    on_chunk_unread: tuple[Middleware, ...]
    """``on_chunk`` for a call nobody reads the deltas of (``call()``):
    without the middleware whose ``chunks_for_deltas_only`` is set."""
    text: Hooks | None = None
    """The table for a call that asks for no output on a state without an
    active structured-output tool: without the middleware whose
    ``output_calls_only`` is set (``None``: there are none, this table)."""
    output: Hooks | None = None
    """The table for a call that asks for an output type: without the
    middleware whose ``text_calls_only`` is set (``None``: there are none,
    this table)."""
    declaring: tuple[Middleware, ...] = ()
    """The middleware that override ``declared_tools`` (asked at each output
    call whether they declare any: the answer may change between calls); a
    middleware that keeps ``Middleware``'s declares none and is not asked."""
    start_steps: tuple[tuple[Middleware, Now | None], ...] = ()
    """``on_call_start`` as the loop runs it: each middleware with the sync
    body of its stage (``sync_stage``: called, no coroutine) or ``None``
    (awaited)."""
    end_steps: tuple[tuple[Middleware, Now | None], ...] = ()
    """``on_call_end`` as the loop runs it (as ``start_steps``)."""


def _overrides(m: object, stage: str) -> bool:
    """Whether ``m`` has its own ``stage`` (not ``Middleware``'s no-op)."""
    return getattr(type(m), stage, None) is not getattr(Middleware, stage)


def hooks_for(middleware: list[Middleware], cached: Hooks | None = None) -> Hooks:
    """The ``Hooks`` of ``middleware``: ``cached`` when it was built from the
    same middleware (compared element by element, so a list edited after the
    agent was made is seen on its next call), else a new table."""
    if cached is not None and cached.source == middleware:  # a private copy: no call here
        return cached
    source = list(middleware)
    plain = [m for m in source if not getattr(m, "output_calls_only", False)]
    typed = [m for m in source if not getattr(m, "text_calls_only", False)]
    return _table(source, _table(plain) if len(plain) < len(source) else None,
                  _table(typed) if len(typed) < len(source) else None)


def _table(source: list[Middleware], text: Hooks | None = None,
           output: Hooks | None = None) -> Hooks:
    start, pre, chunk, post, acting, end = (
        tuple(m for m in source if _overrides(m, stage)) for stage in _STAGES)
    unread = tuple(m for m in chunk if not getattr(m, "chunks_for_deltas_only", False))
    declaring = tuple(m for m in source if _overrides(m, "declared_tools"))
    return Hooks(source, start, pre, chunk, post, acting, end, unread, text, output, declaring,
                 _steps(start, "on_call_start"), _steps(end, "on_call_end"))
