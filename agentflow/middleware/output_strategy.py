"""Strategy binding for the structured-output engine (DESIGN.md §3,
*strategy* and *degradation*): which strategy a call binds to, per model and
has-tools, on the model's *effective* profile (its profile minus what the
vendor refused at run time), what binding a strategy sets up on the call
(the ``generate_response`` tool, or a response format), and the step down
of one call whose native reply held no JSON at all (``prose_fallback``).
"""

from __future__ import annotations

from typing import Any

import orjson

from agentflow._lru import LRU
from agentflow.errors import UnsupportedFeature, UnsupportedFeatureError
from agentflow.events import OutputRetry
from agentflow.execution import CallExecution
from agentflow.messages import Msg, ReminderType
from agentflow.middleware._output_run import OutputRun
from agentflow.middleware.base import Decision, ReasonAgain
from agentflow.middleware.output_failures import mark_attempt, spend_retry
from agentflow.model import ChatModel, ModelProfile, ResponseFormat, ToolChoice
from agentflow.output.config import OutputConfig
from agentflow.output.reminders import TOOL_NAME, force_reminder, nudge, persistent_reminder
from agentflow.output.strategies import (
    AutoStrategy,
    OutputStrategy,
    StrategyKind,
    choose_strategy,
    degrade,
    forcing_choice,
)

__all__ = ["STRATEGY_CACHE_SIZE", "StrategyBook", "bind", "model_key", "prose_fallback",
           "schema_key", "skip_refused_schema", "step_down"]

STRATEGY_CACHE_SIZE = 1024
"""Entries of the per-middleware strategy cache (one per model and has-tools)."""

_NONE: frozenset[str] = frozenset()
_JSON_OBJECT = ResponseFormat("json_object")
_LEAD = "Give the final answer of the task as this tool's arguments."
"""The output tool's description (the type's docstring follows, if any)."""


def model_key(model: ChatModel) -> tuple[str, str, int]:
    """The key a model's refusals and strategies are kept under (this object)."""
    return (type(model).__qualname__, model.model_name, id(model))


class StrategyBook:
    """The strategy decisions of one engine and the features each model
    refused at run time. The strategy cache is bounded
    (``STRATEGY_CACHE_SIZE``) and never keyed by the output type, so fresh
    types are not kept alive."""

    def __init__(self) -> None:
        self._strategies: LRU[tuple[Any, ...], StrategyKind] = LRU(STRATEGY_CACHE_SIZE)
        self._refused: dict[tuple[str, str, int], frozenset[str]] = {}
        self._refusals = 0  # refusals so far: a decision made before one is stale
        self._schemas: LRU[tuple[tuple[str, str, int], bytes], bool] = LRU(STRATEGY_CACHE_SIZE)
        """(model, schema) pairs whose schema the vendor refused for native output
        (``UnsupportedFeatureError.schema_only``): those calls step down, no other."""
        self._last: tuple[ChatModel, bool, int, StrategyKind] | None = None
        """The last decision (model, has-tools, refusals, kind): the next call
        of the same agent asks the same question, answered without the cache's
        key and lock."""

    @property
    def refusals(self) -> int:
        """Refusals heard so far (a decision made before the latest is stale)."""
        return self._refusals

    def effective_profile(self, model: ChatModel) -> ModelProfile:
        """``model.profile`` minus the features the vendor refused at run time."""
        profile = model.profile
        if not self._refused:  # nothing refused by any model yet: the common case
            return profile
        refused = self._refused.get(model_key(model), _NONE)
        if "native_output" in refused:
            profile = profile.with_(native_output=None)
        if "tools" in refused:
            profile = profile.with_(supports_tools=False)
        if "tool_choice" in refused:
            profile = profile.with_(
                tool_choice_modes=profile.tool_choice_modes - {"required", "specific"}
            )
        return profile

    def strategy_for(
        self, model: ChatModel, has_tools: bool, chosen: OutputStrategy
    ) -> StrategyKind:
        """``chosen``'s kind, or for ``AutoStrategy`` the cached
        ``choose_strategy`` decision for this model, has-tools and refusals."""
        if not isinstance(chosen, AutoStrategy):
            return chosen.kind
        last = self._last
        if (last is not None and last[0] is model and last[1] == has_tools
                and last[2] == self._refusals):
            return last[3]
        key = model_key(model)
        entry = (key, has_tools, self._refused.get(key, _NONE) if self._refused else _NONE)
        kind = self._strategies.get(entry)  # no closure per call for get_or_make
        if kind is None:
            kind = self._strategies.put(entry, choose_strategy(self.effective_profile(model),
                                                               has_tools))
        self._last = (model, has_tools, self._refusals, kind)
        return kind

    def refuse_schema(self, model: ChatModel, schema: bytes) -> None:
        """Remember that ``model``'s vendor refused ``schema`` (``schema_key``)
        as a native response format."""
        self._schemas.put((model_key(model), schema), True)

    def schema_refused(self, model: ChatModel, schema: bytes) -> bool:
        """Whether ``model``'s vendor refused ``schema`` as a native response format."""
        return bool(len(self._schemas)) and self._schemas.get((model_key(model), schema)) is True

    @property
    def schemas_refused(self) -> bool:
        """Whether any schema was refused (``schema_refused``; cheap to ask)."""
        return bool(len(self._schemas))

    def refuse(self, model: ChatModel, feature: UnsupportedFeature) -> None:
        """Remember that ``model``'s vendor refused ``feature``."""
        key = model_key(model)
        self._refused[key] = self._refused.get(key, _NONE) | {feature}
        self._refusals += 1


def schema_key(response_format: ResponseFormat) -> bytes:
    """The key a refused native schema is remembered under (its JSON, keys sorted)."""
    return orjson.dumps(response_format.schema, option=orjson.OPT_SORT_KEYS)


def skip_refused_schema(ex: CallExecution, run: OutputRun, book: StrategyBook) -> None:
    """Bind the call a step down when the vendor refused its native schema before
    (``StrategyBook.refuse_schema``), as the call that heard the refusal was."""
    rf = ex.response_format
    if run.kind != "native" or rf is None or rf.schema is None or not book.schemas_refused:
        return
    if book.schema_refused(ex.model, schema_key(rf)):
        profile = book.effective_profile(ex.model)
        new = degrade("native", "native_output", profile)
        if new is not None:
            bind(ex, run, new, profile)


def bind(ex: CallExecution, run: OutputRun, kind: StrategyKind, profile: ModelProfile,
         *, enter: bool = True) -> None:
    """Set the call up for ``kind`` on ``profile`` (the effective one): the
    call-only ``generate_response`` tool (and the ENTER reminder when the
    state enters tool mode, unless ``enter`` is false: a step down for this
    call only, whose next call is not in tool mode), a json_schema response
    format, or JSON mode."""
    run.kind = kind
    ex.call_tools.pop(TOOL_NAME, None)
    ex.response_format = None
    if kind == "tool":
        ex.call_tools[TOOL_NAME] = run.spec.tool_spec(TOOL_NAME, profile.schema_dialect, _LEAD)
        if enter and not ex.so_tool_active:
            ex.memory.append(persistent_reminder(ReminderType.ENTER))
            ex.so_tool_active = True
    elif kind == "native" and profile.native_output == "json_schema":
        ex.response_format = run.spec.response_format(profile.schema_dialect)
    elif kind == "native":
        ex.response_format = _JSON_OBJECT


def prose_fallback(config: OutputConfig, ex: CallExecution, run: OutputRun, reply: Msg,
                   profile: ModelProfile) -> Decision | None:
    """A native reply that holds no JSON value at all (the vendor or a gateway
    ignored the response format: case C04): once per call, bind the tool
    strategy for the rest of the call and ask again — forcing the output tool
    where ``profile`` (the effective one) enforces it, else with a reminder —
    as an ``OutputRetry("degradation")`` that spends one of the call's
    ``output_retries``. Not remembered, and no persistent ENTER reminder: the
    next call tries the native format again, and nothing stored names a tool
    it does not declare. ``None`` (answer the reply as invalid output): not
    the native strategy, done once already, no tools, or no budget left."""
    if run.kind != "native" or run.prose_fallback or run.strip_tools:
        return None
    if not profile.supports_tools or ex.validation_retries >= config.output_retries:
        return None
    run.prose_fallback = True
    spend_retry(config, ex, run, "degradation",
                "the reply held no JSON value (the response format was ignored); using the "
                f"tool strategy: call {TOOL_NAME}")
    mark_attempt(ex, reply)
    bind(ex, run, "tool", profile, enter=False)
    ex.log.info("structured_output.degraded", feature="native_output", strategy="tool",
                reason="prose")
    choice = forcing_choice(profile, ex.options, TOOL_NAME, config.reminder)
    if choice is not None:
        ex.tool_choice = choice
        return ReasonAgain((nudge(),))
    return ReasonAgain((force_reminder(),))


def step_down(ex: CallExecution, run: OutputRun, tool_choice: ToolChoice | None,
              error: UnsupportedFeatureError, book: StrategyBook) -> bool:
    """Degradation (DESIGN.md §3): the vendor refused ``error.feature`` for
    this call's request (sent with ``tool_choice``). A refused forced tool
    choice becomes a PROMPT reminder; a refused strategy feature steps the
    call down (native -> tool -> prompt, ``degrade``) and rebinds it. The
    refusal is remembered in ``book`` (the model's effective profile) and
    announced as ``OutputRetry("degradation")``. Whether the request is to
    be sent again (``False``: nothing to step down to)."""
    feature = error.feature
    if feature == "tool_choice" and tool_choice and tool_choice.mode in ("required", "specific"):
        book.refuse(ex.model, feature)
        ex.memory.append(force_reminder())
        ex.emit(OutputRetry("degradation", 1, f"forced tool_choice refused: {error.message}"))
        ex.log.info("structured_output.degraded", feature=feature)
        return True
    new = degrade(run.kind, feature, book.effective_profile(ex.model))
    if new is None:
        return False
    if error.schema_only and feature == "native_output" and ex.response_format is not None:
        # this call's schema refused, not the feature: the model's other calls (a shared
        # agent's other users, other schemas) keep the native strategy
        book.refuse_schema(ex.model, schema_key(ex.response_format))
    else:
        book.refuse(ex.model, feature)
    if feature == "tools":
        run.strip_tools = True  # the agent's own tools cannot be offered either
    if new != run.kind:
        bind(ex, run, new, book.effective_profile(ex.model))
    ex.emit(
        OutputRetry(
            "degradation", 1, f"{feature} refused, using the {new} strategy: {error.message}"
        )
    )
    ex.log.info("structured_output.degraded", feature=feature, strategy=new)
    return True
