"""The text, thinking, tool-call and tool-result content blocks of a ``Msg``
(``agentflow.messages`` re-exports them) and the ``Block`` union, whose literal
``type`` tag tells each kind, images and documents (``agentflow.content``) among
them, so a conversation round-trips exactly through JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from agentflow._slots_init import Check, slot_init
from agentflow.errors import InvalidInputError
from agentflow.media.blocks import DocumentBlock, ImageBlock

__all__ = ["Block", "TextBlock", "ThinkingBlock", "ToolResultBlock", "ToolUseBlock"]


def _text(block: str, name: str) -> Check:
    """The check of a block's text field: exactly ``str`` passes inline (no call,
    ``slot_init``); a ``str`` subclass is kept; anything else (``5``, ``None``,
    bytes) is refused here, where the block is made, not by a vendor's 400 later."""

    def check(value: Any) -> str:
        if isinstance(value, str):
            return value
        raise InvalidInputError(
            f"{block}.{name} must be a str, got {type(value).__name__}: a {block} carries "
            "text, and a vendor refuses anything else (convert the value first, e.g. str())")

    return str, check


@slot_init(checks={"text": _text("TextBlock", "text")})
@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text.

    Raises:
        InvalidInputError: ``text`` is not a ``str`` (vendors answer 400 to it).
    """

    text: str
    type: Literal["text"] = "text"


@slot_init(checks={"thinking": _text("ThinkingBlock", "thinking")})
@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """Model reasoning. ``signature`` and ``provider_data`` hold what a vendor
    requires back unchanged in later requests (Anthropic signatures, redacted
    thinking).

    Raises:
        InvalidInputError: ``thinking`` is not a ``str``.
    """

    thinking: str
    signature: str | None = None
    provider_data: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["thinking"] = "thinking"


@slot_init
@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool call made by the model. ``input`` is always a parsed JSON object;
    ``provider_data`` keeps vendor fields to send back (Gemini thought signatures).

    ``arguments`` is the argument text the model sent, kept only when it was
    one plain JSON object read as it is (``agentflow.output.decoding.exact_object``),
    so the output check validates that text in one strict pass instead of
    encoding ``input`` again; ``None`` otherwise. It is not persisted
    (``msg_to_dict``), compared or shown in the repr."""

    id: str
    name: str
    input: Mapping[str, Any]
    provider_data: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["tool_use"] = "tool_use"
    arguments: Annotated[str | None, Field(exclude=True)] = field(
        default=None, compare=False, repr=False)


@slot_init(checks={"output": _text("ToolResultBlock", "output")})
@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The result of one tool call, as text for the model to read.

    ``is_json``: ``output`` is the JSON of the value the tool returned (a
    Python tool's number, dict, list, model or ``None``; an MCP server's
    structured content), not text the tool wrote: a UI may show that value
    (the AI SDK's ``tool-output-available``), and a number stays a number.

    Raises:
        InvalidInputError: ``output`` is not a ``str``.
    """

    tool_use_id: str
    output: str
    is_error: bool = False
    name: str = ""
    is_json: bool = False
    type: Literal["tool_result"] = "tool_result"


def _block_tag(value: Any) -> Any:
    return value.get("type") if isinstance(value, dict) else getattr(value, "type", None)


Block: TypeAlias = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ThinkingBlock, Tag("thinking")]
    | Annotated[ToolUseBlock, Tag("tool_use")]
    | Annotated[ToolResultBlock, Tag("tool_result")]
    | Annotated[ImageBlock, Tag("image")]
    | Annotated[DocumentBlock, Tag("document")],
    Discriminator(_block_tag),
]
"""Any content block; the ``type`` field tells which."""
