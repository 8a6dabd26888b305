"""``ReActAgent``: an agent's definition (model, tools, prompt, middleware,
output settings) and its public calls: ``call``, ``call_sync`` and ``stream``.

The agent holds no conversation: a call is given one (``state=``) or starts
from an empty one, so one agent serves any number of concurrent callers. The
loop each call runs is ``agentflow.loop``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from typing import Any, TypeAlias, TypeVar, overload

from agentflow._arguments import check_instance, check_int, check_list, check_optional
from agentflow.events import (
    Complete,
    Event,
    TypedEvent,
)
from agentflow.grounding import Grounded
from agentflow.loop import call_complete, call_events
from agentflow.messages import Msg
from agentflow.middleware.base import Hooks, Middleware, hooks_for
from agentflow.middleware.empty_reply import EmptyReplyContinuation
from agentflow.middleware.structured_output import (
    StructuredOutputCompression,
    StructuredOutputMiddleware,
    check_tool_names,
)
from agentflow.model import (
    ChatModel,
    GenerateOptions,
    ToolSpec,
    resolve_model,
)
from agentflow.model_options import check_options
from agentflow.output.config import OutputConfig
from agentflow.output.examples import Example
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.reasoning import whole_options
from agentflow.state import AgentState
from agentflow.telemetry import Telemetry, default_telemetry
from agentflow.tools import Toolkit, ToolLike

__all__ = ["CallMessage", "ReActAgent"]

OutT = TypeVar("OutT")
CallMessage: TypeAlias = str | Msg | Sequence[str | Msg] | None
"""What a call takes as its message: text, a ``Msg``, a list of them, or
``None`` (the state's memory already ends with the message)."""
StrategyArg: TypeAlias = OutputStrategy | StrategyName | None


async def _last(events: AsyncIterator[Event]) -> Complete:
    """The ``Complete`` that ends ``events`` (drained, then closed unless it
    ran to its end: ``aclosing`` without its context-manager frames)."""
    complete: Complete | None = None
    try:
        async for event in events:
            if isinstance(event, Complete):
                complete = event
    finally:  # an async generator run to its end (``ag_frame`` gone) has nothing to close
        if getattr(events, "ag_frame", True) is not None:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
    assert complete is not None  # a stream always ends with Complete or raises
    return complete



class ReActAgent:
    """A reasoning-and-acting agent over a ``ChatModel``.

    An agent is a definition: it holds no conversation, so any number of
    concurrent callers may share one (a web backend's module-level agent).
    Each call starts from an empty conversation and leaves no trace in the
    agent, unless it is given one: ``state=AgentState()``, kept by the caller
    and passed to each call of that conversation, or a web store's
    conversation (``agentflow.web.store``).

    Args:
        name: the agent's name (logs, events).
        model: a ``ChatModel`` or a ``"vendor:model"`` string.
        tools: callables, ``Tool``s or ``ToolSource``s (an MCP server,
            ``agentflow.mcp.MCPServer``: its tools as they are at each model
            request) the model may call.
        sys_prompt: system prompt prepended to every request (not stored in memory).
        middleware: user middleware, run after the stock ones (structured
            output, then ``EmptyReplyContinuation``: an empty reply is asked once
            to answer, or to continue after tool results; ``EmptyReplyError``
            when empty again).
        max_iters: reasoning steps per call before the call ends with
            ``stop_reason="max_iters"``.
        tool_retries: failed calls allowed per tool and call, cumulatively
            (bad arguments, exceptions, unknown tool), before the call raises
            ``ToolRetriesExceededError``; a tool's own ``max_retries`` wins.
            Default 3.
        stream_retries: times per call a request is sent again after its
            stream broke mid-way (a typed ``ProviderError`` with
            ``partial=True``); default 0: the error is raised. Each retry is
            announced by ``AttemptDiscarded`` before the new attempt streams.
        options: base request options (max tokens, temperature, thinking...).
        output: structured-output settings (strategy, retries, policies).
        telemetry: OpenTelemetry settings (``agentflow.telemetry.Telemetry``;
            default: spans through the global tracer provider, no content).

    Raises:
        InvalidModelError: ``model`` is not a ChatModel or a known string.
        ToolDefinitionError / ToolNameError: a tool cannot be declared (two
            tools share a name, or one takes the output tool's name; a tool
            source's tools are checked again each time they change).
        ToolTypeError: (a ``ToolDefinitionError`` and a ``TypeError``) ``tools``
            is not a list (one tool given bare) or a tool is not callable.
        ArgumentValueError: (a ``ValueError``) ``max_iters`` < 1,
            ``tool_retries`` or ``stream_retries`` < 0.
        ArgumentTypeError: (a ``TypeError``) an argument of the wrong type
            (``middleware`` not a list...), naming it, what it must be and what
            it got (``agentflow._arguments``).
    """

    def __init__(
        self,
        name: str,
        model: ChatModel | str,
        tools: Iterable[ToolLike] = (),
        *,
        sys_prompt: str | None = None,
        middleware: Iterable[Middleware] = (),
        max_iters: int = 10,
        tool_retries: int = 3,
        stream_retries: int = 0,
        options: GenerateOptions | None = None,
        output: OutputConfig | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        check_int("max_iters", max_iters, 1)
        check_int("tool_retries", tool_retries, 0)
        check_int("stream_retries", stream_retries, 0)
        check_optional("sys_prompt", sys_prompt, str, "a str")
        check_optional("options", options, GenerateOptions, "a GenerateOptions")
        if options is not None:
            check_options(options)
        check_optional("output", output, OutputConfig, "an OutputConfig")
        check_optional("telemetry", telemetry, Telemetry, "a Telemetry")
        check_list("middleware", middleware, "Middleware", single=Middleware)
        middleware = list(middleware)
        for n, m in enumerate(middleware):
            check_instance(f"middleware[{n}]", m, Middleware, "a Middleware (subclass it)")
        self.name = name
        self.id = uuid.uuid4().hex[:12]
        self.model = resolve_model(model)
        self.toolkit = tools if isinstance(tools, Toolkit) else Toolkit(tools)
        self.toolkit.add_check(check_tool_names)  # again whenever a tool source's tools change
        self.sys_prompt = sys_prompt
        self.max_iters = max_iters
        self.stream_retries = stream_retries
        self.tool_retries = tool_retries
        self.options = options or GenerateOptions()
        self.output_config = output or OutputConfig()
        self.telemetry = telemetry if telemetry is not None else default_telemetry()
        self.structured_output = StructuredOutputMiddleware(self.output_config)
        self.middleware: list[Middleware] = [
            self.structured_output,
            StructuredOutputCompression(),
            EmptyReplyContinuation(),
            *middleware,
        ]
        self._specs: dict[tuple[str, int], list[ToolSpec]] = {}
        self._whole: tuple[GenerateOptions, GenerateOptions] | None = None
        self._hooks: Hooks = hooks_for(self.middleware)

    def __repr__(self) -> str:
        return f"ReActAgent(name={self.name!r}, model={self.model.model_name!r})"

    def __copy__(self) -> ReActAgent:
        """``copy.copy``: a second agent sharing this one's model and tools."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def __reduce_ex__(self, protocol: Any) -> Any:
        """``pickle`` and ``copy.deepcopy``: refused with a clear ``TypeError``.

        An agent holds live connections (its model's HTTP session, locks, an
        embedded server), which cannot cross into another process: pickling
        it failed deep inside with ``cannot pickle '_thread.lock' object``.

        Raises:
            TypeError: always; build the agent in each process instead.
        """
        raise TypeError(
            f"a ReActAgent ({self.name!r}) holds live connections (its model's HTTP "
            "session, locks) and cannot be pickled or deep-copied: build it in each "
            "process instead. Pass Ray or multiprocessing a zero-argument function that "
            "builds the agent (a factory; agentflow.ray.extract_dataset takes "
            "model=\"vendor:model\" or a model factory), or the settings to build it from")

    async def aclose(self) -> None:
        """Close the model's resources (its HTTP session, an embedded server)."""
        aclose = getattr(self.model, "aclose", None)
        if aclose is not None:
            await aclose()

    def close(self) -> None:
        """The sync twin of ``aclose`` (runs on the sync worker loop, see
        ``agentflow.sync``)."""
        from agentflow._sync_loop import run_sync

        run_sync(self.aclose)

    async def __aenter__(self) -> ReActAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ public API

    @overload
    async def call(self, msg: CallMessage, output: type[OutT], *, state: AgentState | None = None,
                   strategy: StrategyArg = None, ground: bool | Grounded | None = None,
                   examples: Sequence[Example] | None = None) -> Msg[OutT]: ...

    @overload
    async def call(self, msg: CallMessage, output: Any = None, *,
                   state: AgentState | None = None, strategy: StrategyArg = None,
                   ground: bool | Grounded | None = None,
                   examples: Sequence[Example] | None = None) -> Msg: ...

    async def call(
        self,
        msg: CallMessage,
        output: Any = None,
        *,
        state: AgentState | None = None,
        strategy: StrategyArg = None,
        ground: bool | Grounded | None = None,
        examples: Sequence[Example] | None = None,
    ) -> Msg:
        """Run one call to the end and return the reply (``stream`` drained).

        Without ``state`` the call starts from an empty conversation and
        leaves no trace in the agent, so any number of callers may share one
        agent at once; a conversation is an ``AgentState`` passed to each of
        its calls (committed when the call ends, untouched when it raises or
        is cancelled; calls on one state run one after the other).

        ``reply.output`` is the validated ``output`` instance when one was asked
        for (typed as ``output`` for a class: ``call(msg, Contact)`` returns a
        ``Msg[Contact]``); it raises ``StructuredOutputError`` when none could
        be produced. ``ground`` (``True`` or a ``Grounded``) grounds every
        free-text string of the output in the call's text, overriding
        ``OutputConfig.ground``; ``reply.spans`` says where each grounded
        value is (``agentflow.grounding``). ``examples`` (few-shot
        ``Example``s, ``agentflow.output.examples``) are shown before the
        call's input, overriding ``OutputConfig.examples``.

        Raises:
            InvalidInputError: bad ``msg``, before any model request;
                ``UnsupportedInputError`` for an image or document the model's
                profile does not accept.
            InvalidExampleError: an example does not fit ``output``, before
                any model request.
            ProviderError: the model request failed after retries.
            StructuredOutputValidationError / MultipleStructuredOutputsError:
                only under the ``"raise"`` policies.
            ToolRetriesExceededError: a tool kept failing past its retry budget.
        """
        if type(self).stream is ReActAgent.stream:  # the loop itself, nobody reading events
            return (await call_complete(self, msg, output, state, strategy, ground,
                                        examples)).message
        extra: dict[str, Any] = {"ground": ground} if ground is not None else {}
        if examples is not None:  # subclasses may lack these keywords
            extra["examples"] = examples
        # a subclass's stream decides what call returns
        return (await _last(self.stream(msg, output, state=state, strategy=strategy,
                                        **extra))).message

    @overload
    def call_sync(self, msg: CallMessage, output: type[OutT], *,
                  state: AgentState | None = None, strategy: StrategyArg = None,
                  ground: bool | Grounded | None = None,
                  examples: Sequence[Example] | None = None) -> Msg[OutT]: ...

    @overload
    def call_sync(self, msg: CallMessage, output: Any = None, *,
                  state: AgentState | None = None, strategy: StrategyArg = None,
                  ground: bool | Grounded | None = None,
                  examples: Sequence[Example] | None = None) -> Msg: ...

    def call_sync(
        self,
        msg: CallMessage,
        output: Any = None,
        *,
        state: AgentState | None = None,
        strategy: StrategyArg = None,
        ground: bool | Grounded | None = None,
        examples: Sequence[Example] | None = None,
    ) -> Msg:
        """The sync twin of ``call``: same arguments, same reply, blocking.

        Runs on agentflow's sync worker loop (one worker thread, see
        ``agentflow.sync``); inside a running event loop it works the same
        way but blocks that loop until the call ends. Ctrl-C cancels the call.

        Raises: as ``call``; ``UsageError`` when called from the worker loop's
        own thread (an async tool of a sync call), where it would deadlock.
        """
        from agentflow._sync_loop import run_sync

        return run_sync(
            lambda: self.call(msg, output, state=state, strategy=strategy, ground=ground,
                              examples=examples)
        )

    @overload
    def stream(self, msg: CallMessage, output: type[OutT], *, state: AgentState | None = None,
               strategy: StrategyArg = None, ground: bool | Grounded | None = None,
               examples: Sequence[Example] | None = None
               ) -> AsyncGenerator[TypedEvent[OutT], None]: ...

    @overload
    def stream(self, msg: CallMessage, output: Any = None, *, state: AgentState | None = None,
               strategy: StrategyArg = None, ground: bool | Grounded | None = None,
               examples: Sequence[Example] | None = None) -> AsyncGenerator[Event, None]: ...

    def stream(
        self,
        msg: CallMessage,
        output: Any = None,
        *,
        state: AgentState | None = None,
        strategy: StrategyArg = None,
        ground: bool | Grounded | None = None,
        examples: Sequence[Example] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one call, yielding its events; the last is ``Complete``.

        The state works as for ``call`` (none given: an empty conversation,
        no trace left in the agent). When ``output`` was given and no valid
        output could be had, the stream yields every event up to the end and
        then raises the ``StructuredOutputError`` that ``call``'s
        ``reply.output`` raises (carrying the raw text) instead of yielding
        ``Complete``; the state is committed as ``call`` commits it. So a
        ``Complete`` of a call that asked for an output always carries it
        (``stream(msg, Contact)`` yields ``TypedEvent[Contact]``).

        Breaking out of the iteration (or cancelling the task) cancels the call;
        the state is left as it was before the call. The call holds its state
        until the generator is closed: wrap it in ``contextlib.aclosing`` when
        you may break out early, so the next call on that state need not wait
        for garbage collection.

        Raises (when iterated): as ``call``, and ``StructuredOutputError`` (or
        its subclass the output engine gave up with) as said above.
        """
        return self._events(msg, output, state, strategy, ground, examples,
                            strict=output is not None)

    async def _complete(
        self,
        msg: CallMessage,
        output: Any,
        state: AgentState | None,
        strategy: StrategyArg,
        ground: bool | Grounded | None,
        examples: Sequence[Example] | None,
        *,
        deltas: bool,
    ) -> Complete:
        """Run one call to the end and return its ``Complete``, also when the
        output could not be had (``message.output`` then raises): ``call``'s
        body (``agentflow.loop.call_complete``), and the batch's; ``deltas``:
        someone reads the deltas, so the call runs as ``stream`` does (its
        events drained here: ``_last``)."""
        if not deltas:
            return await call_complete(self, msg, output, state, strategy, ground, examples)
        return await _last(call_events(self, msg, output, state, strategy, ground, examples,
                                       strict=False))

    def _events(
        self,
        msg: CallMessage,
        output: Any,
        state: AgentState | None,
        strategy: StrategyArg,
        ground: bool | Grounded | None,
        examples: Sequence[Example] | None,
        *,
        strict: bool,
    ) -> AsyncGenerator[Event, None]:
        """The call's events: ``agentflow.loop.call_events`` (no generator
        layer of its own)."""
        return call_events(self, msg, output, state, strategy, ground, examples, strict=strict)

    def _whole_options(self) -> GenerateOptions:
        """The agent's options for a call nobody reads deltas of (``whole_options``,
        cached per options object)."""
        self._whole = whole_options(self.options, self._whole)
        return self._whole[1]
