"""Content beyond text: image and PDF document blocks, and the check that a
model takes them.

``ImageBlock`` and ``DocumentBlock`` are frozen dataclasses holding one
source: the file's **bytes** (with their media type, sniffed from the magic
bytes when not given) or a **URL** the vendor fetches. Build them with
``from_bytes``, ``from_path``, ``from_base64`` or ``from_url``::

    Msg("user", ["What is in this invoice?", DocumentBlock.from_path("inv.pdf")])

Decisions:

* ``from_path`` reads the file at once: a block holds its bytes, so a stored
  ``AgentState`` never depends on the file still being there.
* The bytes are held once (no copy per request); the base64 text every wire
  format and the state JSON need is encoded once per block and cached
  (``block.base64``). ``from_base64`` keeps the text it was given as that
  cache, so a block read back from JSON is never re-encoded.
* A ``data:`` URL given to ``from_url`` is decoded into bytes.
* URLs are shown without their query (presigned URLs carry credentials there)
  in reprs and errors.

Media types: images ``image/png``, ``image/jpeg``, ``image/gif``,
``image/webp``, ``image/heic``, ``image/heif``, ``image/bmp``,
``image/tiff``; documents ``application/pdf``. Which of them a model takes,
and how large, is profile data (``ModelProfile.input_modalities`` and the
limits beside it); ``check_inputs`` enforces it before any request.

Errors: ``MediaTypeError`` for bytes of an unknown type or a media type that
does not match them; ``UnsupportedInputError`` for a block the model does not
accept (naming the model and the modality).

This module is the public face; the media types and their checks live in
``agentflow.media.types``, the blocks and their persistence in
``agentflow.media.blocks``, the model check in ``agentflow.input_checks``.
"""

from __future__ import annotations

from agentflow.input_checks import check_inputs, modality
from agentflow.media.blocks import DocumentBlock, ImageBlock, MediaBlock
from agentflow.media.types import (
    DOCUMENT_MEDIA_TYPES,
    IMAGE_MEDIA_TYPES,
    Modality,
    redact_url,
    sniff_media_type,
)

__all__ = [
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_MEDIA_TYPES",
    "DocumentBlock",
    "ImageBlock",
    "MediaBlock",
    "Modality",
    "check_inputs",
    "modality",
    "redact_url",
    "sniff_media_type",
]
