"""``ReActAgent``: the reasoning/acting loop.

One call, top to bottom::

    on_call_start
    repeat until done or max_iters:
        request  = snapshot(memory, tools, options)   -> pre_reasoning
        reply    = reason(request)                    (stream chunks out as events)
        decision = post_reasoning(reply)
        if decision says finish, or the reply calls no tool: done
        results  = act(reply's tool calls, concurrently) -> post_acting
    on_call_end, commit memory to the state, emit Complete

``stream()`` is that loop as an async generator of events; ``call()`` drains
it, telling the model that nobody reads the deltas (``GenerateOptions.stream
= False``: an HTTP adapter then fetches whole replies and yields them as the
same chunks) and making no event that only a reader of the stream needs. One
code path, two transports. A call works on a copy of the
state's memory and commits it only when the loop ends: an exception or a
cancellation (including a consumer that stops iterating) leaves the
``AgentState`` exactly as it was before the call.

Tool execution and the per-tool retry budget live in ``agentflow.acting``;
the call's input, working memory and execution in ``agentflow.call_input``;
the request snapshot, error recovery and reply folding of the *reason* step
in ``agentflow.reasoning``; applying a decision and committing the call in
``agentflow.call_outcome``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Any

from agentflow.acting import count_failures, run_tool_calls
from agentflow.call_input import coerce_input as _coerce_input
from agentflow.call_input import start_execution
from agentflow.call_outcome import commit, stops
from agentflow.errors import InvalidInputError, ProviderError
from agentflow.events import (
    CallStarted,
    Complete,
    Event,
    ReasoningChunk,
    ThinkingChunk,
    ToolResult,
    ToolUse,
)
from agentflow.grounding import Grounded
from agentflow.input_checks import check_call_inputs
from agentflow.messages import Msg
from agentflow.middleware.base import Act, Hooks, Middleware, ReasonAgain, hooks_for
from agentflow.middleware.structured_output import (
    StructuredOutputCompression,
    StructuredOutputMiddleware,
    check_tool_names,
)
from agentflow.model import (
    ChatModel,
    GenerateOptions,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
    resolve_model,
)
from agentflow.output.config import OutputConfig
from agentflow.output.examples import Example
from agentflow.output.strategies import OutputStrategy, StrategyName
from agentflow.reasoning import drain, next_request, recover, take_reply, tool_specs, whole_options
from agentflow.reply import ReplyBuilder
from agentflow.state import AgentState
from agentflow.telemetry import Telemetry, default_telemetry
from agentflow.tools import Toolkit, ToolLike

__all__ = ["ReActAgent"]



class ReActAgent:
    """A reasoning-and-acting agent over a ``ChatModel``.

    Args:
        name: the agent's name (logs, events).
        model: a ``ChatModel`` or a ``"vendor:model"`` string.
        tools: callables or ``Tool``s the model may call.
        sys_prompt: system prompt prepended to every request (not stored in memory).
        middleware: user middleware, run after the stock structured-output ones.
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
        state: the default ``AgentState`` for calls that pass none.
        telemetry: OpenTelemetry settings (``agentflow.telemetry.Telemetry``;
            default: spans through the global tracer provider, no content).

    Raises:
        InvalidModelError: ``model`` is not a ChatModel or a known string.
        ToolDefinitionError / ToolNameError: a tool cannot be declared.
        ValueError: ``max_iters`` < 1.
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
        state: AgentState | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        if max_iters < 1:
            raise ValueError(f"max_iters must be >= 1, got {max_iters}")
        if tool_retries < 0:
            raise ValueError(f"tool_retries must be >= 0, got {tool_retries}")
        if stream_retries < 0:
            raise ValueError(f"stream_retries must be >= 0, got {stream_retries}")
        self.name = name
        self.id = uuid.uuid4().hex[:12]
        self.model = resolve_model(model)
        self.toolkit = tools if isinstance(tools, Toolkit) else Toolkit(tools)
        check_tool_names(self.toolkit.names)
        self.sys_prompt = sys_prompt
        self.max_iters = max_iters
        self.stream_retries = stream_retries
        self.tool_retries = tool_retries
        self.options = options or GenerateOptions()
        self.output_config = output or OutputConfig()
        self.state = state if state is not None else AgentState()
        self.telemetry = telemetry if telemetry is not None else default_telemetry()
        self.structured_output = StructuredOutputMiddleware(self.output_config)
        self.middleware: list[Middleware] = [
            self.structured_output,
            StructuredOutputCompression(),
            *middleware,
        ]
        self._specs: dict[tuple[str, tuple[str, ...]], list[ToolSpec]] = {}
        self._whole: tuple[GenerateOptions, GenerateOptions] | None = None
        self._hooks: Hooks = hooks_for(self.middleware)

    def __repr__(self) -> str:
        return f"ReActAgent(name={self.name!r}, model={self.model.model_name!r})"

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

    async def call(
        self,
        msg: str | Msg | Sequence[str | Msg] | None,
        output: Any = None,
        *,
        state: AgentState | None = None,
        strategy: OutputStrategy | StrategyName | None = None,
        ground: bool | Grounded | None = None,
        examples: Sequence[Example] | None = None,
    ) -> Msg:
        """Run one call to the end and return the reply (``stream`` drained).

        ``reply.output`` is the validated ``output`` instance when one was asked
        for; it raises ``StructuredOutputError`` when none could be produced.
        ``ground`` (``True`` or a ``Grounded``) grounds every free-text string
        of the output in the call's text, overriding ``OutputConfig.ground``;
        ``reply.spans`` says where each grounded value is
        (``agentflow.grounding``). ``examples`` (few-shot
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
        complete: Complete | None = None
        if type(self).stream is ReActAgent.stream:  # the loop itself, nobody reading deltas
            events = self._events(msg, output, state, strategy, ground, examples, deltas=False)
        else:  # a subclass's stream decides what call returns
            extra: dict[str, Any] = {"ground": ground} if ground is not None else {}
            if examples is not None:  # subclasses may lack these keywords
                extra["examples"] = examples
            events = self.stream(msg, output, state=state, strategy=strategy, **extra)
        try:  # aclosing(events), without its context-manager frames
            async for event in events:
                if isinstance(event, Complete):
                    complete = event
        finally:
            await events.aclose()
        assert complete is not None  # stream always ends with Complete or raises
        return complete.message

    def call_sync(
        self,
        msg: str | Msg | Sequence[str | Msg] | None,
        output: Any = None,
        *,
        state: AgentState | None = None,
        strategy: OutputStrategy | StrategyName | None = None,
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

    def stream(
        self,
        msg: str | Msg | Sequence[str | Msg] | None,
        output: Any = None,
        *,
        state: AgentState | None = None,
        strategy: OutputStrategy | StrategyName | None = None,
        ground: bool | Grounded | None = None,
        examples: Sequence[Example] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one call, yielding its events; the last is ``Complete``.

        Breaking out of the iteration (or cancelling the task) cancels the call;
        the state is left as it was before the call. The call holds its state
        until the generator is closed: wrap it in ``contextlib.aclosing`` when
        you may break out early, so the next call on that state need not wait
        for garbage collection.

        Raises (when iterated): as ``call``.
        """
        return self._events(msg, output, state, strategy, ground, examples, deltas=True)

    async def _events(
        self,
        msg: str | Msg | Sequence[str | Msg] | None,
        output: Any,
        state: AgentState | None,
        strategy: OutputStrategy | StrategyName | None,
        ground: bool | Grounded | None,
        examples: Sequence[Example] | None,
        *,
        deltas: bool,
    ) -> AsyncGenerator[Event, None]:
        """The call's events (``stream``'s body); ``deltas=False``: nobody reads
        the deltas (``call``), so the requests say so (``GenerateOptions.stream``),
        and the events only a reader of the stream needs (``CallStarted``,
        deltas, ``ToolUse``, ``ToolResult``) are not made: ``call`` reads
        ``Complete``. Middleware's queued events are yielded either way."""
        inputs = _coerce_input(msg)
        state = self.state if state is None else state
        if not inputs and not state.memory:
            raise InvalidInputError("no message: pass a message, or a state whose memory holds one")
        model = self.model
        state.inputs_checked = check_call_inputs(  # only what the last call did not check
            state.memory, inputs, model.profile, model.model_name, state.inputs_checked)
        has_tools = bool(len(self.toolkit))
        if output is not None:
            self.structured_output.prepare(model, output, has_tools, strategy)
        await state.acquire()
        try:
            ex = start_execution(
                model, state, (self.name, self.id),
                self.options if deltas else self._whole_options(), output,
                strategy=strategy, deltas=deltas, has_tools=has_tools)
            if ground is not None:
                ex.extra["ground"] = ground
            if examples is not None:
                ex.extra["examples"] = examples
            # the middleware that override each stage (``self.middleware`` as it is now)
            hooks = self._hooks = hooks_for(self.middleware, self._hooks)
            if output is None and not state.so_tool_active and hooks.text is not None:
                hooks = hooks.text  # a text call: no output-only middleware stages
            chunk_hooks = hooks.on_chunk if deltas else hooks.on_chunk_unread
            with self.telemetry.call(self.name, self.id, ex):
                if deltas:  # call() reads Complete only: no event made that nobody reads
                    yield CallStarted(ex.call_id, self.name, self.id)
                for m in hooks.on_call_start:
                    await m.on_call_start(ex)
                if ex.pending_events:
                    for event in drain(ex):
                        yield event
                ex.memory.extend(inputs)

                # the loop: reason, act, repeat (inline: no generator layer re-yields the events)
                while ex.iteration < self.max_iters:
                    ex.iteration += 1
                    while True:  # reason: one model request, sent again after a recovered error
                        request = await next_request(ex, hooks, self.sys_prompt, tool_specs(
                            self._specs, self.toolkit, ex.model.profile.schema_dialect))
                        if ex.pending_events:
                            for event in drain(ex):
                                yield event
                        builder = ReplyBuilder()
                        with self.telemetry.model_request(ex, request) as trace:
                            chunks = ex.model.stream(request.messages, request.tools,
                                                     request.options)
                            received = False
                            try:
                                async for chunk in chunks:
                                    received = True
                                    builder.add(chunk)
                                    if deltas:  # nobody reads them under call(): not made
                                        if isinstance(chunk, TextDelta):
                                            yield ReasoningChunk(chunk.text, ex.iteration)
                                        elif isinstance(chunk, ThinkingDelta) and chunk.text:
                                            yield ThinkingChunk(chunk.text, ex.iteration)
                                    for m in chunk_hooks:
                                        partial = m.on_chunk(ex, chunk, builder)
                                        if partial is not None:
                                            yield partial
                            except ProviderError as error:
                                trace.fail(error)
                                retry = await recover(ex, self.middleware, request, error, received,
                                                      self.stream_retries)
                                if ex.pending_events:
                                    for event in drain(ex):
                                        yield event
                                if not retry:
                                    raise
                                continue
                            finally:
                                aclose = getattr(chunks, "aclose", None)
                                if aclose is not None:
                                    await aclose()
                            trace.finish(builder)
                        break
                    reply = take_reply(ex, builder)
                    calls = reply.tool_uses
                    if deltas:
                        for call in calls:
                            yield ToolUse(call.id, call.name, dict(call.input))
                    decision = None
                    for m in hooks.post_reasoning:
                        decision = await m.post_reasoning(ex, reply)
                        if decision is not None:
                            break
                    if ex.pending_events:
                        for event in drain(ex):
                            yield event
                    if stops(ex, calls, decision):
                        break
                    if isinstance(decision, ReasonAgain):
                        continue
                    supplied = decision.results if isinstance(decision, Act) else {}
                    results = Msg("tool", await run_tool_calls(ex, self.toolkit, self.telemetry,
                                                              calls, supplied))
                    ex.memory.append(results)
                    if deltas:
                        for block in results.tool_results:
                            yield ToolResult(block.tool_use_id, block.name, block.output,
                                             block.is_error)
                    count_failures(ex, self.toolkit, self.tool_retries, calls, results, supplied)
                    stop = False
                    for m in hooks.post_acting:
                        stop = await m.post_acting(ex, results) or stop
                    if ex.pending_events:
                        for event in drain(ex):
                            yield event
                    if stop:
                        ex.stop_reason = ex.stop_reason or "stopped"
                        break
                else:
                    ex.stop_reason = "max_iters"
                    ex.log.info("call.max_iters", max_iters=self.max_iters)

                for m in hooks.on_call_end:
                    await m.on_call_end(ex)
                if ex.pending_events:
                    for event in drain(ex):
                        yield event
                complete = commit(ex)
            yield complete
        finally:
            state.release()

    def _whole_options(self) -> GenerateOptions:
        """The agent's options for a call nobody reads deltas of (``whole_options``,
        cached per options object)."""
        self._whole = whole_options(self.options, self._whole)
        return self._whole[1]
