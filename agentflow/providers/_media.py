"""How each wire format carries image and document blocks
(``agentflow.content``). One function per format; the adapters' message
converters call them for each ``ImageBlock`` / ``DocumentBlock`` of a user turn.

What a model accepts (modalities, URL sources, media types, sizes) is
checked from its profile before any request (``agentflow.content.check_inputs``);
what is left here is the wire shape, and a typed error for a source the
format has no field for (a profile overridden past what the vendor takes).

The base64 text is the block's cached encoding (``block.base64``): it is
never encoded again per request.

Sources of the shapes (and the official SDK types they are checked against in
``tests/test_sdk_conformance.py``):

* OpenAI chat completions: ``{"type": "image_url", "image_url": {"url"}}`` with
  an https URL or a ``data:<type>;base64,`` URL; PDFs as ``{"type": "file",
  "file": {"filename", "file_data": "data:application/pdf;base64,..."}}``
  (platform.openai.com/docs/guides/images-vision, /docs/guides/pdf-files;
  ``openai.types.chat.ChatCompletionContentPartImageParam`` / ``File``).
  GLM takes the bare base64 text in ``url`` (the official ``zai-sdk`` strips
  the ``data:`` prefix before sending: ``zai.core._utils.drop_prefix_image_data``).
* Anthropic messages: ``{"type": "image" | "document", "source": {"type":
  "base64", "media_type", "data"} | {"type": "url", "url"}}``, a document's
  optional ``title`` (docs.anthropic.com/en/docs/build-with-claude/vision,
  /pdf-support; ``anthropic.types.ImageBlockParam`` / ``DocumentBlockParam``).
* Gemini generateContent: ``{"inlineData": {"mimeType", "data"}}`` or
  ``{"fileData": {"mimeType", "fileUri"}}`` (ai.google.dev/gemini-api/docs/
  image-understanding, /document-processing; ``google.genai.types.Part``).
* Ollama ``/api/chat``: the message's ``images``, a list of base64 texts
  (github.com/ollama/ollama/blob/main/docs/api.md; ``ollama.Message.images``).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from agentflow.content import DocumentBlock, ImageBlock, redact_url
from agentflow.errors import InvalidInputError

__all__ = [
    "ImageUrlStyle",
    "anthropic_block",
    "gemini_part",
    "ollama_image",
    "openai_part",
]

ImageUrlStyle: TypeAlias = Literal["data_url", "base64"]
"""How inline image bytes go in an OpenAI-style ``image_url.url``: a
``data:`` URL (OpenAI, DashScope, llama.cpp, vLLM) or the bare base64 text (GLM)."""

DEFAULT_PDF_NAME = "document.pdf"
"""The filename sent with an unnamed PDF where the wire requires one (OpenAI)."""


def _data_url(block: ImageBlock | DocumentBlock) -> str:
    return f"data:{block.media_type};base64,{block.base64}"


def _no_url(block: ImageBlock | DocumentBlock, wire: str) -> InvalidInputError:
    return InvalidInputError(
        f"{wire} has no field for a {block.type} URL ({redact_url(block.url or '')}): "
        f"pass the bytes ({type(block).__name__}.from_path/from_bytes)")


def openai_part(block: ImageBlock | DocumentBlock, style: ImageUrlStyle = "data_url"
                ) -> dict[str, Any]:
    """The chat-completions content part of ``block``.

    Raises:
        InvalidInputError: a document URL (the chat completions API takes PDF
            bytes or an uploaded file id only).
    """
    if isinstance(block, ImageBlock):
        if block.url is not None:
            url = block.url
        else:
            url = _data_url(block) if style == "data_url" else block.base64
        return {"type": "image_url", "image_url": {"url": url}}
    if block.url is not None:
        raise _no_url(block, "the chat completions API")
    return {"type": "file", "file": {"filename": block.filename or DEFAULT_PDF_NAME,
                                     "file_data": _data_url(block)}}


def anthropic_block(block: ImageBlock | DocumentBlock) -> dict[str, Any]:
    """The Messages API content block of ``block``."""
    if block.url is not None:
        source: dict[str, Any] = {"type": "url", "url": block.url}
    else:
        source = {"type": "base64", "media_type": block.media_type, "data": block.base64}
    out: dict[str, Any] = {"type": block.type, "source": source}
    if isinstance(block, DocumentBlock) and block.filename:
        out["title"] = block.filename
    return out


def gemini_part(block: ImageBlock | DocumentBlock) -> dict[str, Any]:
    """The generateContent part of ``block``: ``inlineData`` for bytes,
    ``fileData`` for a URL (a Files API URI, a ``gs://`` or a public https URL)."""
    if block.url is not None:
        return {"fileData": {"mimeType": block.media_type, "fileUri": block.url}}
    return {"inlineData": {"mimeType": block.media_type, "data": block.base64}}


def ollama_image(block: ImageBlock | DocumentBlock) -> str:
    """The base64 text Ollama takes in a message's ``images``.

    Raises:
        InvalidInputError: a URL or a document (Ollama takes image bytes only).
    """
    if isinstance(block, DocumentBlock):
        raise InvalidInputError("Ollama's /api/chat takes images only, not documents: send "
                                "the PDF's text instead")
    if block.url is not None:
        raise _no_url(block, "Ollama's /api/chat")
    return block.base64
