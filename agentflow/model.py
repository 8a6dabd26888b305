"""The model contract: ``ChatModel``, ``ModelProfile``, request options and
streamed chunks.

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
from agentflow.content import Modality
from agentflow.errors import InvalidModelError
from agentflow.media_tokens import MediaTokens
from agentflow.messages import Msg

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

ToolChoiceMode: TypeAlias = Literal["auto", "none", "required", "specific"]
NativeOutput: TypeAlias = Literal["json_schema", "json_object"]
SchemaDialect: TypeAlias = Literal["plain", "openai_strict", "gemini", "local"]
InlineThinking: TypeAlias = Literal["tags", "opened"]
"""How a model served without a reasoning parser leaves its reasoning in the
reply text: ``"tags"`` between ``<think>`` and ``</think>``; ``"opened"``: the
chat template opened the block, so the reply starts inside it and shows only
``</think>`` (see ``ModelProfile.inline_thinking``)."""
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
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


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


# ----------------------------------------------------------------------------- profile


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What a model's API can do. Pure data; providers build one per model
    family, users may override fields with ``profile.with_(...)``.

    Attributes:
        supports_tools: the API accepts tool definitions.
        tool_choice_modes: the ``tool_choice`` modes the API enforces. A mode
            missing here is never sent (GLM accepts only ``auto``).
        native_output: the vendor's own structured output, if any.
        native_output_with_tools: native output may be combined with tools
            in one request (Gemini before 3.x may not).
        schema_dialect: which JSON Schema dialect the vendor accepts.
        supports_thinking: the model can reason before answering.
        thinking_default: reasoning is on unless the request turns it off.
        forced_tool_choice_with_thinking: ``required``/``specific`` is allowed
            while thinking (DeepSeek, Anthropic and DashScope refuse it).
        parallel_tool_calls_flag: the API accepts ``parallel_tool_calls``.
        concurrent_requests: requests the server decodes at once, when it is
            known to be small (the embedded llama.cpp model: 1, others queue);
            ``None``: a vendor API that serves many. Batch callers default
            their concurrency to it.
        native_schema_in_prompt: the server holds decoding to a json_schema
            response format (a grammar) but never shows the schema to the
            model, so field names and descriptions reach it only if the
            request says them (llama.cpp, vLLM, LM Studio behind the generic
            adapter; ollama/ollama#8162's kind): the adapter then also puts the
            schema in a system instruction. OpenAI shows it itself: ``False``.
        substring_grammar: the provider turns a json_schema response format
            with a ``source`` into a grammar that lets grounded strings be
            only substrings of it (llama.cpp with llguidance).
        context_window: tokens a request may hold, prompt and reply together
            (``None``: unknown; long documents then assume a conservative
            default, see ``agentflow.extraction.budget``).
        max_output_tokens: the most tokens one reply may have (``None``: unknown).
        sampling: ``(name, value)`` sampler settings the adapter sends with
            every request that does not set them itself, for a server whose
            decoding we control (llama.cpp's ``repeat_penalty``,
            ``dry_multiplier``...: its server README, "POST /completion");
            ``()``: the vendor's defaults.
        input_modalities: what a user turn may hold: ``"text"``, ``"image"``
            (``ImageBlock``), ``"pdf"`` (``DocumentBlock``). Text only unless
            the vendor documents more for the model; ``agentflow.content.check_inputs``
            refuses other blocks before any request.
        url_input_modalities: the modalities the vendor fetches from a URL
            (others must be sent as bytes).
        image_media_types: the image media types the vendor accepts.
        max_image_bytes: the largest image (raw bytes) the vendor accepts (``None``: no
            documented limit).
        max_document_bytes: the largest PDF (raw bytes) the vendor accepts.
        max_inline_bytes: the most base64 text of images and documents one request
            may carry, all blocks together.
        max_document_pages: the most PDF pages one request may carry (the vendor
            counts them and refuses more; the core cannot count pages without a
            PDF library, so callers that read the PDF, such as ``extract``, check it).
        media_tokens: how the vendor counts an image's and a PDF page's tokens
            (``agentflow.media_tokens``: its documented rule), for the rate
            governor's estimate; the default counts conservative constants.
        items_per_chunk: list items per chunk this model extracts reliably
            when a long document is read item by item (``Chunking(items=...)``):
            1 for a weak model, which extracts one item far better than
            thirty; ``None``: as many as the window holds.
        inline_thinking: the model writes its reasoning into the reply text as
            ``<think>...</think>`` (``InlineThinking``; a generic
            OpenAI-compatible server without a reasoning parser: vLLM without
            ``--reasoning-parser``, llama.cpp ``--reasoning-format none``, LM
            Studio); the adapter splits it into thinking, so ``reply.text``
            holds only the answer. ``None``: text is text. Set by name rules for
            known reasoning families on hosts that are not their vendor's
            (``providers._think_tags``); pass a profile to override.
    """

    supports_tools: bool = True
    tool_choice_modes: frozenset[ToolChoiceMode] = frozenset(
        {"auto", "none", "required", "specific"}
    )
    native_output: NativeOutput | None = None
    native_output_with_tools: bool = True
    schema_dialect: SchemaDialect = "plain"
    supports_thinking: bool = False
    thinking_default: bool = False
    forced_tool_choice_with_thinking: bool = True
    parallel_tool_calls_flag: bool = False
    concurrent_requests: int | None = None
    substring_grammar: bool = False
    native_schema_in_prompt: bool = False
    context_window: int | None = None
    max_output_tokens: int | None = None
    sampling: tuple[tuple[str, Any], ...] = ()
    input_modalities: frozenset[Modality] = frozenset({"text"})
    url_input_modalities: frozenset[Modality] = frozenset()
    image_media_types: frozenset[str] = frozenset(
        {"image/png", "image/jpeg", "image/gif", "image/webp"}
    )
    max_image_bytes: int | None = None
    max_document_bytes: int | None = None
    max_inline_bytes: int | None = None
    max_document_pages: int | None = None
    items_per_chunk: int | None = None
    media_tokens: MediaTokens = field(default_factory=MediaTokens)
    inline_thinking: InlineThinking | None = None

    def with_(self, **changes: Any) -> ModelProfile:
        """A copy with ``changes`` applied (the set fields may be any iterable)."""
        for name in ("tool_choice_modes", "input_modalities", "url_input_modalities",
                     "image_media_types"):
            if name in changes:
                changes[name] = frozenset(changes[name])
        return replace(self, **changes)

    def thinking_active(self, options: GenerateOptions) -> bool:
        """Whether a request with ``options`` runs with reasoning on."""
        if not self.supports_thinking:
            return False
        return self.thinking_default if options.thinking is None else options.thinking

    def allows_tool_choice(self, choice: ToolChoice, options: GenerateOptions) -> bool:
        """Whether sending ``choice`` with ``options`` is accepted by the vendor."""
        if choice.mode not in self.tool_choice_modes:
            return False
        forced = choice.mode in ("required", "specific")
        return not (
            forced and not self.forced_tool_choice_with_thinking and self.thinking_active(options)
        )


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
