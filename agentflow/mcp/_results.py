"""An MCP ``tools/call`` result as agentflow reads it: the text the model
reads, the structured content, the images, and whether the server said the
call failed.

The MCP result (modelcontextprotocol.io/specification/2025-11-25/server/tools,
"Tool Result") holds ``content`` (text, image, audio, resource link and
embedded resource blocks), an optional ``structuredContent`` object, and
``isError``. What the model reads (``MCPToolResult.text``):

* with ``structuredContent`` (and no error): that object as compact JSON; the
  spec has a server that returns it also send "the serialized JSON in a
  TextContent block", so text blocks are not repeated, other blocks are
  rendered after it. The Python SDK (``MCPServer``, ``FastMCP``) sends a tool's
  value of no object type (a ``str``, a number, a list) as ``{"result": value}``
  with the value itself, not that object's JSON, in its text blocks: the model
  reads the value (a string as it is), as pydantic-ai's MCP client does; a
  ``result`` object whose text blocks are its JSON is read whole;
* otherwise each block in order, one paragraph each: text as is; an image,
  audio or binary resource as a one-line description (an agent's tool result
  carries text only: images are kept as ``ImageBlock``s in
  ``MCPToolResult.images`` for a caller of ``MCPServer.call_tool``); a
  resource link as its name and URI; an embedded text resource as its URI and
  text.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow._clean_text import json_bytes
from agentflow.content import ImageBlock
from agentflow.errors import AgentflowError

__all__ = ["MCPToolResult", "read_result"]


@dataclass(frozen=True, slots=True)
class MCPToolResult:
    """One tool call's result.

    Attributes:
        text: what the model reads (see the module docstring).
        is_error: the server's ``isError``: the tool failed (the agent hands
            the model ``text`` as an error result).
        structured: the ``structuredContent`` object, or ``None``.
        images: the image blocks, decoded (an image whose bytes are not of a
            known image type is described in ``text`` only).
        raw: the SDK's ``CallToolResult``, as received.
        is_json: ``text`` is the JSON of one value, ``value`` (the structured
            content, or a number, list or object the SDK wrapped), with no
            other block beside it: the agent's tool returns that value, so a
            UI shows the number ``12``, not the text ``"12"``
            (``ToolResultBlock.is_json``).
        value: that value when ``is_json``, else ``None``.
    """

    text: str
    is_error: bool = False
    structured: Mapping[str, Any] | None = None
    images: tuple[ImageBlock, ...] = ()
    raw: Any = field(default=None, repr=False, compare=False)
    is_json: bool = False
    value: Any = field(default=None, repr=False, compare=False)


def _size(data: str) -> str:
    """The decoded size of base64 ``data``, for a description."""
    digits = len("".join(data.split()).rstrip("="))
    return f"{digits * 3 // 4:,} bytes"


def _image(block: Any, images: list[ImageBlock]) -> str:
    mime = getattr(block, "mime_type", None) or "unknown type"
    try:
        images.append(ImageBlock.from_base64(block.data, block.mime_type or None))
    except (AgentflowError, binascii.Error, ValueError) as exc:
        return f"[image: {mime}, {_size(block.data)}, unreadable: {exc}]"
    return (f"[image: {mime}, {_size(block.data)}; not shown to the model: a tool result "
            "carries text only]")


def _resource(block: Any) -> str:
    res = block.resource
    uri = getattr(res, "uri", "")
    mime = getattr(res, "mime_type", None)
    text = getattr(res, "text", None)
    if isinstance(text, str):
        return f"[resource {uri}{f' ({mime})' if mime else ''}]\n{text}"
    blob = getattr(res, "blob", "") or ""
    return f"[resource {uri}: {mime or 'binary'}, {_size(blob)}; not shown]"


def _render(block: Any, images: list[ImageBlock]) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "image":
        return _image(block, images)
    if kind == "audio":
        return f"[audio: {block.mime_type}, {_size(block.data)}; not shown]"
    if kind == "resource_link":
        described = f": {block.description}" if getattr(block, "description", None) else ""
        mime = f" ({block.mime_type})" if getattr(block, "mime_type", None) else ""
        return f"[resource link {block.name} <{block.uri}>{mime}{described}]"
    if kind == "resource":
        return _resource(block)
    return f"[{kind or 'unknown'} content; not shown]"


def read_result(raw: Any) -> MCPToolResult:
    """``raw`` (an SDK ``CallToolResult``) as an ``MCPToolResult``."""
    images: list[ImageBlock] = []
    is_error = bool(raw.is_error)
    structured = raw.structured_content if isinstance(raw.structured_content, Mapping) else None
    parts: list[str] = []
    value: Any = None
    if structured is not None and not is_error:
        value = _structured_value(structured, raw.content)
        parts.append(value if isinstance(value, str) else json_bytes(value, default=str).decode())
        parts.extend(_render(b, images) for b in raw.content if getattr(b, "type", "") != "text")
    else:
        parts.extend(_render(b, images) for b in raw.content)
    text = "\n\n".join(p for p in parts if p)
    if not text:
        text = ("the tool reported an error and gave no message" if is_error
                else "(the tool returned no content)")
    is_json = len(parts) == 1 and structured is not None and not isinstance(value, str)
    return MCPToolResult(text, is_error, structured, tuple(images), raw, is_json,
                         value if is_json else None)


def _structured_value(structured: Mapping[str, Any], blocks: Any) -> Any:
    """The value the model reads of ``structuredContent`` (the module
    docstring; as JSON unless a ``str``): the SDK's ``{"result": value}``
    wrapping as the value, else the object."""
    if set(structured) == {"result"}:
        text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
        try:
            twin = json.loads(text) == structured
        except ValueError:
            twin = False
        if not twin:  # the text blocks are the value: the SDK wrapped it
            return structured["result"]
    return structured
