"""What a ``Msg``'s content may be: the block types it holds, a str or a block
per item (``as_block``), and clear errors for content that is not a list of
them (``content_items``, ``checked``). ``Msg.__init__`` uses them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow._blocks import Block, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentflow.errors import InvalidInputError
from agentflow.media.blocks import DocumentBlock, ImageBlock

__all__ = ["BLOCK_TYPES", "BLOCK_TYPESET", "as_block", "checked", "content_items"]

BLOCK_TYPES = (TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock, ImageBlock,
               DocumentBlock)
BLOCK_TYPESET = frozenset(BLOCK_TYPES)


def as_block(index: int, item: Any) -> Block:
    """Content item ``index`` as a block: a block as it is, a str as a ``TextBlock``.

    Raises:
        InvalidInputError: anything else (naming the item and its type).
    """
    if isinstance(item, BLOCK_TYPES):
        return item
    if isinstance(item, str):
        return TextBlock(item)
    raise InvalidInputError(
        f"content item {index} is a {type(item).__name__}: expected a str or a block "
        "(TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock, ImageBlock, DocumentBlock)"
    )


def content_items(content: Any) -> tuple[Any, ...]:
    """``content`` (not a str) as a tuple of its items.

    Raises:
        InvalidInputError: ``content`` is not iterable (``None``, a number...).
    """
    try:
        return tuple(content)
    except TypeError:
        if hasattr(type(content), "__iter__"):
            raise  # an iterable that failed inside: not ours to rename
        raise InvalidInputError(
            f"message content is a {type(content).__name__}: expected a str, or a list of "
            "str and blocks") from None


def checked(content: Any, items: tuple[Any, ...]) -> tuple[Any, ...]:
    """``items``, unless ``content`` is a kind whose iteration is not its content:
    a dict's keys (its values would be lost) or the byte values of ``bytes``.

    Raises:
        InvalidInputError: naming the kind and what to pass instead.
    """
    if isinstance(content, Mapping):
        raise InvalidInputError(
            "message content is a mapping: pass a str, or blocks such as "
            "TextBlock(text=...) (a dict's keys are not its text)")
    if isinstance(content, (bytes, bytearray, memoryview)):
        raise InvalidInputError(
            f"message content is {type(content).__name__}: decode text to a str, or wrap a "
            "file in DocumentBlock.from_bytes / ImageBlock.from_bytes")
    return items
