"""The model contract: ``ChatModel`` and streamed chunks; the request options
(``agentflow.model_options``), ``Usage`` (``agentflow.usage``) and
``ModelProfile`` (``agentflow.model_profile``) are re-exported here.

The core talks to every vendor through this module only. A provider module
implements ``ChatModel.stream`` for its wire protocol (and, optionally, the
whole-reply path ``whole_reply``: see ``ChatModel``) and describes what the
vendor can do in a ``ModelProfile`` (data, never behaviour). The agent reads
the profile; it never asks which vendor it is talking to.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from agentflow._slots_init import slot_init
from agentflow.errors import InvalidModelError
from agentflow.logprobs import TokenLogprob, TokenLogprobs
from agentflow.messages import Msg
from agentflow.model_options import (
    GenerateOptions,
    NativeOutput,
    ResponseFormat,
    ToolChoice,
    ToolChoiceMode,
    ToolSpec,
)
from agentflow.model_profile import InlineThinking, ModelProfile, SchemaDialect
from agentflow.usage import Usage

__all__ = [
    "ChatModel",
    "FinishChunk",
    "FinishReason",
    "GenerateOptions",
    "InlineThinking",
    "ModelChunk",
    "ModelProfile",
    "NativeOutput",
    "ResponseFormat",
    "SchemaDialect",
    "TextDelta",
    "ThinkingDelta",
    "TokenLogprob",
    "TokenLogprobs",
    "ToolCallDelta",
    "ToolChoice",
    "ToolChoiceMode",
    "ToolSpec",
    "Usage",
    "UsageChunk",
    "resolve_model",
]

FinishReason: TypeAlias = Literal[
    "stop", "length", "tool_calls", "content_filter", "refusal", "error", "other"
]


# ----------------------------------------------------------------------------- chunks


@slot_init
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text; ``logprobs``: its tokens with their
    log-probabilities, when the request asked for them
    (``GenerateOptions.logprobs``) and the model gives them (else empty): a
    sequence of ``TokenLogprob`` (a provider gives a ``TokenLogprobs``, which
    may read the vendor's entries only when a token is read)."""

    text: str
    type: Literal["text"] = "text"
    logprobs: Sequence[TokenLogprob] = ()


@slot_init
@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of reasoning text, or a signature / opaque data to send back."""

    text: str = ""
    signature: str | None = None
    provider_data: Mapping[str, Any] | None = None
    type: Literal["thinking"] = "thinking"


@slot_init
@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call, keyed by ``index`` (its position in the reply).

    The first fragment of an index usually carries ``id`` and ``name``; the
    argument text arrives in ``arguments`` fragments (str or raw bytes, split
    anywhere) that concatenate to JSON. Vendors that send whole calls send one
    fragment with ``arguments_obj`` (an already-parsed object).
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str | bytes = ""
    arguments_obj: Mapping[str, Any] | None = None
    provider_data: Mapping[str, Any] | None = None
    type: Literal["tool_call"] = "tool_call"


@slot_init
@dataclass(frozen=True, slots=True)
class UsageChunk:
    """Usage of this request. A later ``UsageChunk`` replaces an earlier one
    (vendors report cumulative counts)."""

    usage: Usage
    type: Literal["usage"] = "usage"


@slot_init
@dataclass(frozen=True, slots=True)
class FinishChunk:
    """Why the model stopped: a normalized ``reason`` and the vendor's ``raw``
    value; ``response_model`` / ``response_id``: the model that answered and
    the reply's id, where the vendor says (for tracing); ``detail``: the
    vendor's own words on why, where it gives any beyond the reason (a
    refusal's category and explanation; each adapter says where it reads
    them), else ``""``."""

    reason: FinishReason
    raw: str = ""
    response_model: str | None = None
    response_id: str | None = None
    detail: str = ""
    type: Literal["finish"] = "finish"


ModelChunk: TypeAlias = TextDelta | ThinkingDelta | ToolCallDelta | UsageChunk | FinishChunk


# ----------------------------------------------------------------------------- protocol


@runtime_checkable
class ChatModel(Protocol):
    """A chat model behind some wire protocol.

    ``stream`` sends one request and yields ``ModelChunk``s as they arrive. It
    raises ``ProviderError`` subclasses on failure. ``model_name`` identifies
    the model (for caches and logs; it never holds secrets).

    The whole-reply path (optional, not a checked member of the protocol): a
    model may also have ``async def whole_reply(messages, tools, options,
    reply) -> None`` that sends one request and folds its whole reply into
    ``reply`` (an ``agentflow.reply.ReplyBuilder``: ``add`` for chunks,
    ``add_text`` for text read without one), leaving exactly what folding
    ``stream``'s chunks would (the same message, usage, finish reason, and the
    same errors raised; on an error, ``reply.received`` says whether anything
    of the reply had come). The agent calls it instead of ``stream`` when
    nobody reads the call's chunks (``call()``, extraction: no stream reader,
    no middleware reading chunks), so an adapter that reads a whole reply at
    once need not make chunks, nor run an async generator, for it
    (``agentflow.providers.openai`` reads a plain reply straight into it).
    It is looked up on the model's class: a model without it, or a wrapper
    that forwards attributes to the model it wraps (``__getattr__``), is read
    through its own ``stream``.
    """

    @property
    def profile(self) -> ModelProfile: ...

    @property
    def model_name(self) -> str: ...

    def stream(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
    ) -> AsyncIterator[ModelChunk]: ...


def resolve_model(model: ChatModel | str) -> ChatModel:
    """A ``ChatModel`` from itself or from a ``"vendor:model"`` string.

    Strings are looked up in ``agentflow.providers.registry`` (imported only
    then, so the core does not depend on any provider).

    Raises:
        InvalidModelError: ``model`` is neither a ``ChatModel`` nor a known string.
    """
    if isinstance(model, str):
        try:
            registry = importlib.import_module("agentflow.providers.registry")
        except ImportError as exc:  # pragma: no cover - broken install
            raise InvalidModelError(
                f"cannot resolve model string {model!r}: agentflow.providers is not installed"
            ) from exc
        resolved: ChatModel = registry.get_model(model)
        return resolved
    if isinstance(model, type):
        raise InvalidModelError(
            f"model must be a ChatModel instance, got the class {model.__name__}: "
            f"call it, e.g. {model.__name__}(...)"
        )
    if not isinstance(model, ChatModel):
        raise InvalidModelError(
            f"model must be a ChatModel (with .profile, .model_name and .stream()) or a "
            f"'vendor:model' string, got {type(model).__name__}"
        )
    return model
