"""The model contract: ``ChatModel``, request options and streamed chunks;
``ModelProfile`` (``agentflow.model_profile``) is re-exported here.

The core talks to every vendor through this module only. A provider module
implements ``ChatModel.stream`` for its wire protocol and describes what the
vendor can do in a ``ModelProfile`` (data, never behaviour). The agent reads
the profile; it never asks which vendor it is talking to.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, runtime_checkable

from agentflow._slots_init import slot_init
from agentflow.errors import InvalidModelError
from agentflow.messages import Msg
from agentflow.model_profile import (
    InlineThinking,
    ModelProfile,
    NativeOutput,
    SchemaDialect,
    ToolChoiceMode,
)

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


# ----------------------------------------------------------------------------- usage


@slot_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one or more requests. Units: tokens.

    ``input_tokens`` counts every prompt token (cached ones included);
    ``cached_tokens`` the part served from a prompt cache; ``reasoning_tokens``
    the part of ``output_tokens`` spent thinking. ``requests`` counts model
    requests summed into this value.

    ``unreported`` counts the requests among them whose usage the vendor did
    not report (a stream without a usage chunk: a server that ignores
    ``stream_options.include_usage``, a vendor that reports usage on some
    requests only, a count of zero prompt tokens). Their tokens are unknown,
    not zero: the counts hold the known part only, ``known`` is ``False`` and
    ``describe()`` says so ("tokens unknown", never "0 tokens"). Sums keep
    both parts (known counts add up, unreported requests add up).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    unreported: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
            self.unreported + other.unreported,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens (the known part: see ``known``)."""
        return self.input_tokens + self.output_tokens

    @property
    def known(self) -> bool:
        """Whether every request summed here reported its usage."""
        return self.unreported == 0

    def request(self) -> Usage:
        """This usage as one request's: ``requests=1``, and ``unreported=1``
        when it reports no prompt tokens (every request has a prompt, so a
        count of zero, or no usage chunk at all, is an unknown count)."""
        return Usage(self.input_tokens, self.output_tokens, self.cached_tokens,
                     self.reasoning_tokens, 1, 0 if self.input_tokens else 1)

    def describe(self) -> str:
        """``"1234 tokens"``; ``"tokens unknown (3 requests unreported)"`` when
        no request reported usage; ``"1234 tokens + unknown (2 of 9 requests
        unreported)"`` when some did not."""
        if not self.unreported:
            return f"{self.total_tokens} tokens"
        if self.unreported >= self.requests and not self.total_tokens:
            some = "request" if self.unreported == 1 else "requests"
            return f"tokens unknown ({self.unreported} {some} unreported)"
        return (f"{self.total_tokens} tokens + unknown ({self.unreported} of "
                f"{max(self.requests, self.unreported)} requests unreported)")


# ----------------------------------------------------------------------------- request


@slot_init
@dataclass(frozen=True, slots=True)
class ToolChoice:
    """Whether and which tool the model must call.

    ``auto``: the model decides; ``none``: no tool; ``required``: some tool;
    ``specific``: the tool named ``name``. Build with the class attributes or
    ``ToolChoice.specific(name)``. A provider sends only the modes its profile
    lists in ``tool_choice_modes``.
    """

    mode: ToolChoiceMode
    name: str | None = None

    AUTO: ClassVar[ToolChoice]
    NONE: ClassVar[ToolChoice]
    REQUIRED: ClassVar[ToolChoice]

    @staticmethod
    def specific(name: str) -> ToolChoice:
        """Force the tool called ``name``."""
        return ToolChoice("specific", name)


ToolChoice.AUTO = ToolChoice("auto")
ToolChoice.NONE = ToolChoice("none")
ToolChoice.REQUIRED = ToolChoice("required")


@slot_init
@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, description and the JSON Schema of its
    arguments (an object schema). ``strict`` asks vendors that support it to
    constrain arguments to the schema (OpenAI ``strict: true``)."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    strict: bool = False


@slot_init
@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """A native structured-output request.

    ``type="json_schema"``: ``schema`` (already in the vendor's dialect) must be
    followed; ``type="json_object"``: any JSON object (the instructions carry
    the schema). ``name`` matches ``[a-zA-Z0-9_-]{1,64}`` (OpenAI rule).
    ``source``: set only for a model whose profile has ``substring_grammar``:
    the text that schema nodes marked ``"x-grounded": true`` must be
    substrings of (the engine verifies the values afterwards either way).
    ``taken``: ``[start, end)`` spans of ``source`` that an earlier extraction
    pass took as list items; the grammar does not offer them again as list
    items (``agentflow.extraction.recall``).
    """

    type: NativeOutput
    schema: Mapping[str, Any] | None = None
    name: str = "output"
    strict: bool = True
    description: str | None = None
    source: str | None = field(default=None, repr=False)
    taken: frozenset[tuple[int, int]] = field(default=frozenset(), repr=False)


@slot_init
@dataclass(frozen=True, slots=True)
class GenerateOptions:
    """Per-request options. ``None`` leaves the vendor default.

    ``max_tokens`` (tokens) caps the reply; ``thinking`` turns a hybrid
    model's reasoning on or off; ``extra`` is merged into the request body by
    the provider, last (vendor-specific fields).

    ``stream`` is the request's transport, not its content: ``None`` leaves
    the model's own setting (its ``stream=`` argument); ``True`` streams;
    ``False`` says nobody reads the deltas, so the model may fetch the whole
    reply in one response and yield it as the same kind of chunks
    (``ReActAgent.call`` sets it when the agent's options leave it ``None``).
    An adapter keeps streaming where a whole reply would differ or fail (a
    vendor that thinks only while streaming, a reply too long to wait for);
    a model without a second transport (``ScriptedModel``) ignores it.
    """

    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    parallel_tool_calls: bool | None = None
    thinking: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    stream: bool | None = None

    def with_(self, **changes: Any) -> GenerateOptions:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)


# ----------------------------------------------------------------------------- chunks


@slot_init
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text."""

    text: str
    type: Literal["text"] = "text"


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
    the reply's id, where the vendor says (for tracing)."""

    reason: FinishReason
    raw: str = ""
    response_model: str | None = None
    response_id: str | None = None
    type: Literal["finish"] = "finish"


ModelChunk: TypeAlias = TextDelta | ThinkingDelta | ToolCallDelta | UsageChunk | FinishChunk


# ----------------------------------------------------------------------------- protocol


@runtime_checkable
class ChatModel(Protocol):
    """A chat model behind some wire protocol.

    ``stream`` sends one request and yields ``ModelChunk``s as they arrive. It
    raises ``ProviderError`` subclasses on failure. ``model_name`` identifies
    the model (for caches and logs; it never holds secrets).
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
