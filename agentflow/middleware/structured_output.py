"""The structured-output engine: every rule of DESIGN.md §3 in one place.

``StructuredOutputMiddleware`` binds a strategy per call and drives it:

* **strategy** – ``choose_strategy`` on the model's *effective* profile (the
  profile minus what the vendor refused at run time), cached per
  (model, output type, has-tools); a per-call or per-agent override wins.
* **tool path** – a ``generate_response`` tool declared for the call only
  (``ex.call_tools``), never in the toolkit; its calls are answered here:
  validated (lax, with schema-aware normalisation), user validators run,
  invalid output answered with an error listing each failing field, bounded
  by ``output_retries`` for the whole call; several output calls in one reply
  handled by ``on_multiple``; a valid output that comes with other tool
  calls follows ``end_strategy`` (``safe``: accepted only if none of them
  failed; ``early``; ``exhaustive``), except beside calls that wait for a
  decision outside the loop (``ex.waiting``: an approval, a client tool):
  then it is held, whatever the strategy, and the model gives it again once
  they are decided (``hold_output``).
* **reminders** – entering tool mode on a state whose ``so_tool_active`` is
  false appends one persistent ENTER reminder and sets the flag; a call
  without output on a flagged state appends one EXIT reminder and clears it.
  Never removed, so the prompt prefix stays cache-stable.
* **forcing** – a turn that ends without tool calls and without output: first
  the text itself is tried as the output; then the model is asked again, at
  most ``max_forcing`` times, with ``tool_choice=specific(generate_response)``
  where the vendor enforces it (plus a transient user nudge, so the request
  never ends on the assistant's turn), else with a transient PROMPT reminder
  (``CACHE_CONTROL=False``) added before the next snapshot; either says what
  was wrong when an output of the call failed its checks.
* **re-asks** – every re-ask after an output failed its checks (the output
  tool's error result, the text strategies' user message, the forced
  retry) carries the same detail (``output_hints.failure_detail``: one line
  per failing field path, secrets masked, length bounded).
* **native / prompt paths** – the schema goes into the response format or the
  instructions; the reply text is parsed tolerantly; invalid output is
  retried with the error as a user message, bounded like the tool path.
* **degradation** – a vendor's ``UnsupportedFeatureError`` steps the call
  down (native -> tool -> prompt; forced tool choice -> prompt reminder) and
  the model's effective profile remembers it. A native reply that holds no
  JSON value at all (prose: the vendor or a gateway ignored the response
  format, case C04) steps the call down to the tool strategy once, for the
  rest of that call only (an ``OutputRetry("degradation")`` that spends one
  of the call's ``output_retries``, as does each forcing after it, so the
  fallback never buys extra requests); where the model has no tools it is
  answered like any invalid output.
* **grounding** – a call whose output type marks fields ``Grounded()`` (or
  that grounds every string: ``ground=``) checks, after validation, that each
  grounded value is a verbatim span of the call's user text (the user
  messages of the caller's input, ``CallExecution.inputs``, recorded before
  any middleware runs: never a reminder, nudge, re-ask or tool result the
  engine added, whatever their order) and that no value is degenerate
  (``agentflow.grounding`` / ``.degenerate``);
  a failure is answered like a validation error, within the same
  ``output_retries`` budget, and ends as ``GroundingError`` /
  ``DegenerateOutputError``; the spans of an accepted output go to
  ``ex.spans``. Where the profile has ``substring_grammar``, the native
  response format also carries the source, so the grammar makes other
  values impossible.
* **truncation** – finish reason ``length`` ends the call with
  ``OutputTruncatedError``; truncated text is never sent back for repair
  (text whose JSON object closed before the cut — whitespace padding, an
  unwritten closing fence — is whole, and read); a filtered or refused reply
  ends the call too.

Texts of the added messages live in ``agentflow.output.reminders``, the
settings in ``agentflow.output.config``, partial parsing in
``agentflow.output.partial`` and the partial events of a streamed call in
``agentflow.middleware.output_partials``; checking an output and answering
it (validation, retries, end strategy, truncation, refusal) in
``agentflow.middleware.output_answers`` (the tool path), ``output_text`` (the
text paths), ``output_acceptance`` and ``output_failures``; strategy choice, refusals, binding and
degradation in ``agentflow.middleware.output_strategy``; the forcing of a turn
without the output tool in ``agentflow.middleware.output_forcing``; a call's set-up, made once for
the calls that ask the same (``agentflow.middleware.output_setup``); the
grounding set-up (markers, the ``ground=`` default, the grounded response
format) in ``agentflow.middleware.output_grounding`` and the grounding and
degeneracy check in ``agentflow.grounding.output_checks``; the
compression below in
``agentflow.middleware.output_compression`` (re-exported here).

``StructuredOutputCompression`` runs at call end, on success and give-up
alike: transient reminders and failed attempts leave memory, and the
``generate_response`` call/result pairs are replaced by one assistant message
holding the output JSON (``STRUCTURED_OUTPUT=True``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from agentflow.errors import (
    ProviderError,
    ToolNameError,
    UnsupportedFeatureError,
)
from agentflow.events import Event, OutputRetry
from agentflow.execution import CallExecution
from agentflow.messages import Msg, ReminderType
from agentflow.middleware._output_run import KEY as _KEY
from agentflow.middleware._output_run import NO_OUTPUT as _NO_OUTPUT
from agentflow.middleware._output_run import OutputRun as _Run
from agentflow.middleware._output_run import run_of as _run_of
from agentflow.middleware.base import Decision, Middleware, ModelRequest, sync_stage
from agentflow.middleware.output_answers import answer_outputs, hold_output
from agentflow.middleware.output_budget import budgeted
from agentflow.middleware.output_compression import StructuredOutputCompression
from agentflow.middleware.output_failures import filtered, vendor_failed
from agentflow.middleware.output_forcing import missed_output
from agentflow.middleware.output_grounding import grounded_format, has_markers
from agentflow.middleware.output_history import bound_attempts
from agentflow.middleware.output_partials import partial_event
from agentflow.middleware.output_setup import OutputSetup, make_setup
from agentflow.middleware.output_strategy import (
    STRATEGY_CACHE_SIZE,
    StrategyBook,
    bind,
    prose_fallback,
    skip_refused_schema,
    step_down,
)
from agentflow.middleware.output_text import text_reply
from agentflow.model import ChatModel, GenerateOptions, ModelChunk, ModelProfile, ResponseFormat
from agentflow.output.config import OutputConfig
from agentflow.output.parsing import closed_json
from agentflow.output.partial import PartialOutput
from agentflow.output.reminders import (
    TOOL_NAME,
    persistent_reminder,
    prompt_instruction,
)
from agentflow.output.schema import OutputSpec
from agentflow.output.strategies import (
    OutputStrategy,
    StrategyKind,
    StrategyName,
    as_strategy,
)
from agentflow.reply import ReplyBuilder

__all__ = [
    "STRATEGY_CACHE_SIZE",
    "OutputConfig",
    "StructuredOutputCompression",
    "StructuredOutputMiddleware",
]


class StructuredOutputMiddleware(Middleware):
    """Stock middleware that obtains a validated output for calls that ask one.

    Shared by every call of an agent; per-call data lives in the
    ``CallExecution``. The only shared mutable data are caches: the strategy
    per (model, has-tools, refused features) — bounded (``STRATEGY_CACHE_SIZE``)
    and never keyed by the output type, so fresh types are not kept alive —,
    the features each model refused at run time, and the last call's set-up
    (``OutputSetup``: spec, strategy, grounding markers, example messages),
    which the next call with the same settings takes (one type: one set-up).
    """

    chunks_for_deltas_only = True  # on_chunk makes partial outputs only
    output_calls_only = True  # no run without an output type (on_call_start: so_tool_active)

    def __init__(self, config: OutputConfig | None = None) -> None:
        self.config = config or OutputConfig()
        self._book = StrategyBook()
        self._formats: tuple[GenerateOptions, ResponseFormat, GenerateOptions] | None = None
        self._setup: OutputSetup | None = None
        """The last call's set-up (``output_setup``): the next call that asks the same takes it."""

    # ------------------------------------------------------------ strategy binding

    def effective_profile(self, model: ChatModel) -> ModelProfile:
        """``model.profile`` minus the features the vendor refused at run time."""
        return self._book.effective_profile(model)

    def strategy_for(
        self,
        model: ChatModel,
        output_type: Any,
        has_tools: bool,
        strategy: OutputStrategy | StrategyName | None = None,
    ) -> StrategyKind:
        """The strategy a call binds to: an explicit one, else the cached
        ``choose_strategy`` decision for this model and has-tools (the choice
        does not depend on ``output_type``)."""
        return self._book.strategy_for(model, has_tools,
                                       as_strategy(strategy or self.config.strategy))

    def prepare(
        self,
        model: ChatModel,
        output_type: Any,
        has_tools: bool,
        strategy: OutputStrategy | StrategyName | None = None,
    ) -> OutputSpec:
        """Check, before any request, that ``output_type`` can be asked of ``model``.

        Raises:
            SchemaError: the type cannot be expressed in the vendor's dialect,
                or it carries a ``Grounded()`` marker on a non-string field.
        """
        profile = model.profile
        setup = self._setup
        if setup is not None and setup.key[:5] == (  # (type, model, profile, tools, strategy)
                output_type, model, profile, has_tools, strategy or self.config.strategy):
            return setup.spec  # checked (and set up) for this agent's previous call
        has_markers(output_type)
        spec = OutputSpec.of(output_type)
        kind = self.strategy_for(model, output_type, has_tools, strategy)
        if kind != "prompt":
            spec.schema_for(profile.schema_dialect)
        return spec

    # ------------------------------------------------------------ call start

    @sync_stage  # no await in it: the loop calls it with no coroutine
    def on_call_start(self, ex: CallExecution) -> None:
        if ex.output_type is None:
            if ex.so_tool_active:
                ex.memory.append(persistent_reminder(ReminderType.EXIT))
                ex.so_tool_active = False
            return
        setup = self._setup_of(ex)
        spec = setup.spec
        run = ex.extra[_KEY] = _Run(spec, setup.kind, setup.has_tools,
                                    PartialOutput(spec.wrapped), ground=setup.ground,
                                    grounded=setup.grounded, examples=setup.examples,
                                    locators=setup.locators)
        self._bind(ex, run, setup.kind)

    def _setup_of(self, ex: CallExecution) -> OutputSetup:
        """The call's set-up: the last one made, when it was made for these
        settings (``OutputSetup.key``; the examples as a tuple, compared by
        content: each ``Example`` is a value, its ``fingerprint`` taken when it
        was made), else a new one, kept for the next call.

        Raises:
            SchemaError / InvalidExampleError: as ``make_setup`` (before any request).
        """
        extra = ex.extra
        model, output_type = ex.model, ex.output_type
        examples = extra.get("examples", self.config.examples)
        if isinstance(examples, list):
            examples = tuple(examples)  # a list edited later is not the one given
        key = (output_type, model, model.profile, extra.get("has_tools", True),
               extra.get("strategy") or self.config.strategy,
               extra.get("ground", self.config.ground), examples, self._book.refusals)
        setup = self._setup
        if setup is not None and setup.key == key:
            return setup
        spec = OutputSpec.of(output_type)
        kind = self.strategy_for(model, output_type, key[3], key[4])
        setup = self._setup = make_setup(key, spec, kind)
        return setup

    def _bind(self, ex: CallExecution, run: _Run, kind: StrategyKind) -> None:
        """Set the call up for ``kind`` (``bind`` on the effective profile), a
        step down when the vendor refused this native schema before."""
        bind(ex, run, kind, self.effective_profile(ex.model))
        skip_refused_schema(ex, run, self._book)

    # ------------------------------------------------------------ request

    async def pre_reasoning(self, ex: CallExecution, request: ModelRequest) -> None:
        run: _Run | None = ex.extra.get(_KEY)  # run_of, inline: once per stage
        if run is None:
            return
        if run.strip_tools:
            request.tools = []
        keep = self.config.attempts_in_context
        if keep is not None and ex.validation_retries + ex.force_count > keep:
            request.messages = bound_attempts(request.messages, keep)  # retries stay bounded
        options = request.options
        if run.kind == "tool":
            if ex.model.profile.parallel_tool_calls_flag and options.parallel_tool_calls is None:
                options = options.with_(parallel_tool_calls=False)
        else:
            if ex.response_format is not None:
                options = self._with_format(options, grounded_format(ex, run))
            if run.kind == "prompt" or (ex.response_format and ex.response_format.schema is None):
                schema = orjson.dumps(run.spec.plain_schema).decode()
                at = next(
                    (i for i, m in enumerate(request.messages) if m.role != "system"),
                    len(request.messages),
                )
                request.messages.insert(at, prompt_instruction(schema))
        if run.examples:  # after the instructions, before the call's own messages
            at = next((i for i, m in enumerate(request.messages) if m.role != "system"),
                      len(request.messages))
            request.messages[at:at] = run.examples
        rf = options.response_format
        if rf is not None and rf.source is not None and options.max_tokens is None:
            options = await budgeted(ex, request.messages, options, rf.schema, rf.source)
        request.options = options

    def _with_format(self, options: GenerateOptions, rf: ResponseFormat) -> GenerateOptions:
        """``options`` with ``rf``; the last such copy is kept, so calls with the
        same options and format (``OutputSpec.response_format`` gives one
        object per type) share it instead of copying the options each time."""
        cached = self._formats
        if cached is not None and cached[0] is options and cached[1] is rf:
            return cached[2]
        out = options.with_(response_format=rf)
        self._formats = (options, rf, out)
        return out

    # ------------------------------------------------------------ streaming

    def on_chunk(self, ex: CallExecution, chunk: ModelChunk, reply: ReplyBuilder) -> Event | None:
        if not ex.deltas_read:  # call(): nobody reads partial outputs
            return None
        run: _Run | None = ex.extra.get(_KEY)  # run_of, inline: once per chunk
        if run is None or ex.completed:
            return None
        return partial_event(ex, run, chunk, reply)

    # ------------------------------------------------------------ runtime degradation

    async def on_model_error(
        self, ex: CallExecution, request: ModelRequest, error: ProviderError
    ) -> bool:
        run = _run_of(ex)
        if run is None or not isinstance(error, UnsupportedFeatureError):
            return False
        return step_down(ex, run, request.options.tool_choice, error, self._book)

    # ------------------------------------------------------------ after a reply

    async def post_reasoning(self, ex: CallExecution, reply: Msg) -> Decision | None:
        run: _Run | None = ex.extra.get(_KEY)  # run_of, inline: once per stage
        if run is None or ex.completed:
            return None
        calls = reply.tool_uses
        if ex.last_finish_reason in ("content_filter", "refusal") and not calls:
            return filtered(ex, run, reply)
        if ex.last_finish_reason == "error" and not calls and not closed_json(reply.text):
            return vendor_failed(self.config, ex, run, reply)
        if run.kind == "tool":
            outputs = [c for c in calls if c.name == TOOL_NAME]
            if outputs:
                return answer_outputs(self.config, ex, run, reply, outputs)
            if calls:
                return None  # the model is still working: act
            return missed_output(self.config, ex, run, reply,
                                 self.effective_profile(ex.model))
        if calls:
            return None
        return text_reply(self.config, ex, run, reply, self._prose_on_native)

    def _prose_on_native(self, ex: CallExecution, run: _Run, reply: Msg) -> Decision | None:
        return prose_fallback(self.config, ex, run, reply, self.effective_profile(ex.model))

    async def post_acting(self, ex: CallExecution, results: Msg) -> bool:
        run: _Run | None = ex.extra.get(_KEY)  # run_of, inline: once per stage
        if run is None:
            return False
        if ex.waiting and (ex.completed or run.pending is not _NO_OUTPUT):
            hold_output(ex, run)  # calls of the reply wait for a decision: asked again after
        elif run.pending is not _NO_OUTPUT:
            value, run.pending = run.pending, _NO_OUTPUT
            failed = [b.name for b in results.tool_results if b.name != TOOL_NAME and b.is_error]
            if failed:
                run.partial.reset()
                ex.emit(OutputRetry(
                    "tools_failed", 1,
                    f"the output came with failing tool calls ({', '.join(failed)}); "
                    "it was not accepted (end_strategy='safe')"))
            else:
                ex.output, ex.completed = value, True
        if ex.completed:
            ex.stop_reason = "structured_output"
            return True
        if run.give_up:
            ex.stop_reason = "output_failed"
            return True
        return False


def check_tool_names(names: Sequence[str]) -> None:
    """Raise ``ToolNameError`` if an agent tool takes the output tool's name."""
    if TOOL_NAME in names:
        raise ToolNameError(
            f"the tool name {TOOL_NAME!r} is reserved for structured output; rename the tool"
        )
