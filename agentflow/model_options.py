"""What one model request asks for: the tool choice, the tools, the response
format and the generation options, with the literal types their fields use.
Re-exported by ``agentflow.model``, the model contract."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, TypeAlias

from agentflow._arguments import (
    check_choice,
    check_instance,
    check_int,
    check_number,
    check_optional,
    wrong_value,
)
from agentflow._slots_init import slot_init

__all__ = [
    "GenerateOptions",
    "NativeOutput",
    "ResponseFormat",
    "ToolChoice",
    "ToolChoiceMode",
    "ToolSpec",
    "check_options",
]

ToolChoiceMode: TypeAlias = Literal["auto", "none", "required", "specific"]
_MODES = ("auto", "none", "required", "specific")
NativeOutput: TypeAlias = Literal["json_schema", "json_object"]


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

    def __post_init__(self) -> None:
        check_choice("ToolChoice.mode", self.mode, _MODES)
        if self.mode == "specific":
            check_instance("ToolChoice.name", self.name, str, "the tool's name (a str)")
            if not self.name:
                raise wrong_value("ToolChoice.name", "the tool's name (not empty)", self.name)

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

    ``logprobs`` asks for the log-probability of each token of the reply
    (``TextDelta.logprobs``); a model whose profile says ``token_logprobs``
    gives them, any other ignores the option (no reply ever fails for it).
    """

    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    parallel_tool_calls: bool | None = None
    thinking: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    stream: bool | None = None
    logprobs: bool | None = None

    def with_(self, **changes: Any) -> GenerateOptions:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)


def check_options(options: GenerateOptions, name: str = "options") -> None:
    """Check the fields of ``options`` a caller set (``ReActAgent(options=...)``,
    ``generate``): each is ``None`` or of its type, ``max_tokens`` >= 1 and
    ``temperature`` a finite number >= 0. Without the check a wrong value went
    to the vendor as given (``max_tokens="10"``, ``temperature="hot"``: a 400 on
    every request), was read by its truth (``stream="no"`` streamed), was
    dropped (a NaN temperature sent as ``null``) or met Python's own error deep
    inside (``extra=[1]``).

    Raises:
        TypeError: a field of the wrong type, named (``options.max_tokens``).
        ValueError: ``max_tokens`` < 1, or a ``temperature`` below 0 or not finite.
    """
    check_instance(name, options, GenerateOptions, "a GenerateOptions")
    check_optional(f"{name}.tool_choice", options.tool_choice, ToolChoice, "a ToolChoice")
    check_optional(f"{name}.response_format", options.response_format, ResponseFormat,
                   "a ResponseFormat")
    check_int(f"{name}.max_tokens", options.max_tokens, 1, optional=True)
    check_number(f"{name}.temperature", options.temperature, "a number >= 0",
                 lambda t: t >= 0, optional=True)
    for flag in ("parallel_tool_calls", "thinking", "stream", "logprobs"):
        check_optional(f"{name}.{flag}", getattr(options, flag), bool, "True, False")
    check_instance(f"{name}.extra", options.extra, Mapping, "a mapping of request fields")
    for key in options.extra:
        check_instance(f"a key of {name}.extra", key, str, "a str")
