"""``ModelProfile``: what a model's API can do, as plain data.

A provider module describes each model family in a ``ModelProfile`` (data,
never behaviour); the agent and the structured-output engine read it and never
ask which vendor they talk to. Re-exported by ``agentflow.model``, the model
contract, with the literal types its fields use.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from agentflow._arguments import check_choice, check_flag, check_instance, check_int, wrong_type
from agentflow.media.tokens import MediaTokens
from agentflow.media.types import Modality
from agentflow.model_options import NativeOutput, ToolChoiceMode

if TYPE_CHECKING:
    from agentflow.model_options import GenerateOptions, ToolChoice

__all__ = ["InlineThinking", "ModelProfile", "NativeOutput", "SchemaDialect", "ToolChoiceMode"]

SchemaDialect: TypeAlias = Literal["plain", "openai_strict", "gemini", "local"]
InlineThinking: TypeAlias = Literal["tags", "opened"]
"""How a model served without a reasoning parser leaves its reasoning in the
reply text: ``"tags"`` between ``<think>`` and ``</think>``; ``"opened"``: the
chat template opened the block, so the reply starts inside it and shows only
``</think>`` (see ``ModelProfile.inline_thinking``)."""


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
        token_logprobs: the adapter returns each reply token's
            log-probability when a request sets ``GenerateOptions.logprobs``
            (``TextDelta.logprobs``): OpenAI chat completions ``logprobs``,
            llama.cpp's server in its OpenAI-compatible endpoint.
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
            (``agentflow.media.tokens``: its documented rule), for the rate
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
        cumulative_stream_deltas: how the endpoint streams a reply's text:
            ``False``, each delta is new text (the OpenAI wire format's
            ``delta``); ``True``, each delta is the whole text so far (an
            endpoint known to stream cumulatively: pass a profile saying
            so); ``None``: unknown, so the adapter tells from the stream
            itself (``providers._openai_deltas.new_text``: a delta that
            starts with the text so far marks it cumulative). Set by the
            adapters of vendors whose docs say, for their own hosts only.
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
    token_logprobs: bool = False
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
    cumulative_stream_deltas: bool | None = None

    def __post_init__(self) -> None:
        _check(self)

    def with_(self, **changes: Any) -> ModelProfile:
        """A copy with ``changes`` applied (the set fields may be any iterable)."""
        for name in ("tool_choice_modes", "input_modalities", "url_input_modalities",
                     "image_media_types"):
            if name in changes and not isinstance(changes[name], str):  # one str: refused
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


_FLAGS = ("supports_tools", "native_output_with_tools", "supports_thinking", "thinking_default",
          "forced_tool_choice_with_thinking", "parallel_tool_calls_flag", "substring_grammar",
          "token_logprobs", "native_schema_in_prompt")
_COUNTS = ("concurrent_requests", "context_window", "max_output_tokens", "max_image_bytes",
           "max_document_bytes", "max_inline_bytes", "max_document_pages", "items_per_chunk")
_SETS = ("tool_choice_modes", "input_modalities", "url_input_modalities", "image_media_types")


def _check(profile: ModelProfile) -> None:
    """``ModelProfile``'s own check of its fields, named as ``ModelProfile.<field>``:
    a flag is a bool, a count an int >= 1 or ``None``, a literal one of its
    values; a set field given as a list or tuple is kept as a frozenset. A wrong
    value was taken and met Python's own error inside a call (``KeyError:
    'xml'`` for a dialect, ``str // int`` for a context window of ``"8k"``) or
    was read by its truth (``supports_tools="no"`` offered tools).

    Raises:
        TypeError / ValueError: as ``agentflow._arguments``.
    """
    for name in _FLAGS:
        check_flag(f"ModelProfile.{name}", getattr(profile, name))
    if profile.cumulative_stream_deltas is not None:
        check_flag("ModelProfile.cumulative_stream_deltas", profile.cumulative_stream_deltas)
    for name in _COUNTS:
        check_int(f"ModelProfile.{name}", getattr(profile, name), 1, optional=True)
    check_choice("ModelProfile.schema_dialect", profile.schema_dialect, get_args(SchemaDialect))
    if profile.native_output is not None:
        check_choice("ModelProfile.native_output", profile.native_output, get_args(NativeOutput))
    if profile.inline_thinking is not None:
        check_choice("ModelProfile.inline_thinking", profile.inline_thinking,
                     get_args(InlineThinking))
    for name in _SETS:
        value = getattr(profile, name)
        if not isinstance(value, frozenset):
            if not isinstance(value, set | list | tuple):
                raise wrong_type(f"ModelProfile.{name}", "a set of str", value)
            object.__setattr__(profile, name, frozenset(value))  # frozen: its own field
        for item in getattr(profile, name):
            check_instance(f"an item of ModelProfile.{name}", item, str, "a str")
    for mode in profile.tool_choice_modes:
        check_choice("a mode of ModelProfile.tool_choice_modes", mode, get_args(ToolChoiceMode))
