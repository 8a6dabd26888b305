"""``ImageBlock`` and ``DocumentBlock``: frozen blocks holding bytes or a URL,
their base64 cached, persisted as plain dicts (``agentflow.content``
re-exports them; the decisions are listed there)."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar
from urllib.parse import urlsplit

from pydantic_core import core_schema

from agentflow.errors import InvalidInputError
from agentflow.media.types import (
    DOCUMENT_MEDIA_TYPES,
    IMAGE_MEDIA_TYPES,
    _checked_bytes,
    _compact,
    _data_url,
    _decode_base64,
    _source_checked,
    _url_media_type,
    redact_url,
)

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

__all__ = [
    "DocumentBlock",
    "ImageBlock",
    "MediaBlock",
]

# ----------------------------------------------------------------------------- blocks


@dataclass(frozen=True, slots=True, repr=False)
class ImageBlock:
    """An image for the model to see: ``data`` (bytes) or ``url``, with its ``media_type``.

    Construct with ``from_bytes`` / ``from_path`` / ``from_base64`` /
    ``from_url``; the direct constructor checks the same things.

    Raises:
        MediaTypeError: the bytes are of no known image type, or not of ``media_type``.
        InvalidInputError: not exactly one source, or a URL that is not http(s)/gs.
    """

    media_type: str
    data: bytes | None = None
    url: str | None = None
    type: Literal["image"] = "image"
    _base64: str | None = field(default=None, init=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _init_source(self, "image", IMAGE_MEDIA_TYPES)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, media_type: str | None = None
                   ) -> ImageBlock:
        """An image from its bytes; ``media_type`` is sniffed when ``None``."""
        return cls(media_type or "", data=bytes(data))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], media_type: str | None = None) -> ImageBlock:
        """An image read from ``path`` now (see the module docstring).

        Raises:
            OSError: the file cannot be read.
            MediaTypeError: as ``from_bytes``.
        """
        return cls(media_type or "", data=Path(path).read_bytes())

    @classmethod
    def from_base64(cls, text: str, media_type: str | None = None) -> ImageBlock:
        """An image from base64 ``text`` (line breaks ignored; a ``data:`` URL is
        read as ``from_url`` does), kept as the cached encoding.

        Raises:
            InvalidInputError: ``text`` is not base64.
        """
        if text.startswith("data:"):
            return cls.from_url(text, media_type)
        text = _compact(text)
        return _with_base64(cls(media_type or "", data=_decode_base64("image", text)), text)

    @classmethod
    def from_url(cls, url: str, media_type: str | None = None) -> ImageBlock:
        """An image the vendor fetches from ``url`` (http, https, gs; ``media_type``
        guessed from the path when ``None``), or the bytes of a ``data:`` URL."""
        if url.startswith("data:"):
            data, declared, text = _data_url("image", url)
            return _with_base64(cls(media_type or declared or "", data=data), text)
        return cls(media_type or "", url=url)

    @property
    def base64(self) -> str:
        """The bytes as base64 text (encoded once, then cached). Raises
        ``InvalidInputError`` for a URL block."""
        return _encoded(self)

    def __repr__(self) -> str:
        return _repr(self)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler
                                     ) -> core_schema.CoreSchema:
        return _pydantic_schema(cls)


@dataclass(frozen=True, slots=True, repr=False)
class DocumentBlock:
    """A PDF document for the model to read: ``data`` (bytes) or ``url``, with
    its ``media_type`` (``application/pdf``) and an optional ``filename``
    (OpenAI requires one with inline file data; Anthropic shows it as the title).

    Raises:
        MediaTypeError: the bytes are not a PDF.
        InvalidInputError: not exactly one source, or a URL that is not http(s)/gs.
    """

    media_type: str
    data: bytes | None = None
    url: str | None = None
    filename: str | None = None
    type: Literal["document"] = "document"
    _base64: str | None = field(default=None, init=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _init_source(self, "document", DOCUMENT_MEDIA_TYPES)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, media_type: str | None = None, *,
                   filename: str | None = None) -> DocumentBlock:
        """A document from its bytes; ``media_type`` is sniffed when ``None``."""
        return cls(media_type or "", data=bytes(data), filename=filename)

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], media_type: str | None = None, *,
                  filename: str | None = None) -> DocumentBlock:
        """A document read from ``path`` now; ``filename`` defaults to its name.

        Raises:
            OSError: the file cannot be read.
            MediaTypeError: as ``from_bytes``.
        """
        p = Path(path)
        return cls(media_type or "", data=p.read_bytes(), filename=filename or p.name)

    @classmethod
    def from_base64(cls, text: str, media_type: str | None = None, *,
                    filename: str | None = None) -> DocumentBlock:
        """A document from base64 ``text`` (line breaks ignored; a ``data:`` URL
        is read as ``from_url`` does), kept as the cached encoding.

        Raises:
            InvalidInputError: ``text`` is not base64.
        """
        if text.startswith("data:"):
            return cls.from_url(text, media_type, filename=filename)
        text = _compact(text)
        data = _decode_base64("document", text)
        return _with_base64(cls(media_type or "", data=data, filename=filename), text)

    @classmethod
    def from_url(cls, url: str, media_type: str | None = None, *,
                 filename: str | None = None) -> DocumentBlock:
        """A document the vendor fetches from ``url``, or the bytes of a ``data:`` URL."""
        if url.startswith("data:"):
            data, declared, text = _data_url("document", url)
            block = cls(media_type or declared or "", data=data, filename=filename)
            return _with_base64(block, text)
        name = filename or (Path(urlsplit(url).path).name or None)
        return cls(media_type or "", url=url, filename=name)

    @property
    def base64(self) -> str:
        """The bytes as base64 text (encoded once, then cached). Raises
        ``InvalidInputError`` for a URL block."""
        return _encoded(self)

    def __repr__(self) -> str:
        return _repr(self)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler
                                     ) -> core_schema.CoreSchema:
        return _pydantic_schema(cls)


MediaBlock: TypeAlias = ImageBlock | DocumentBlock
"""A block holding an image or a document."""


def _init_source(block: MediaBlock, kind: str, allowed: frozenset[str]) -> None:
    _source_checked(kind, block.data, block.url)
    if block.data is not None:
        media_type = _checked_bytes(kind, allowed, block.data, block.media_type or None,
                                    "data")
    else:
        assert block.url is not None
        media_type = _url_media_type(kind, allowed, block.url, block.media_type or None)
    object.__setattr__(block, "media_type", media_type)


_B = TypeVar("_B", ImageBlock, DocumentBlock)


def _with_base64(block: _B, text: str | None) -> _B:
    if text is not None:
        object.__setattr__(block, "_base64", text)
    return block


def _encoded(block: MediaBlock) -> str:
    cached = block._base64
    if cached is None:
        if block.data is None:
            raise InvalidInputError(f"this {block.type} block is a URL "
                                    f"({redact_url(block.url or '')}): it has no bytes to encode")
        cached = base64.b64encode(block.data).decode("ascii")
        object.__setattr__(block, "_base64", cached)
    return cached


def _repr(block: MediaBlock) -> str:
    source = (f"data=<{len(block.data)} bytes>" if block.data is not None
              else f"url={redact_url(block.url or '')!r}")
    name = f", filename={block.filename!r}" if isinstance(block, DocumentBlock) else ""
    return f"{type(block).__name__}(media_type={block.media_type!r}, {source}{name})"


# ----------------------------------------------------------------------------- persistence


def _dump(block: MediaBlock) -> dict[str, Any]:
    out: dict[str, Any] = {"type": block.type, "media_type": block.media_type}
    if block.data is not None:
        out["data"] = block.base64
    else:
        out["url"] = block.url
    if isinstance(block, DocumentBlock) and block.filename is not None:
        out["filename"] = block.filename
    return out


def _pydantic_schema(cls: type[MediaBlock]) -> core_schema.CoreSchema:
    """Validate from the dict ``_dump`` makes (bytes as base64) or an instance;
    serialize to that dict."""

    def validate(value: Any) -> MediaBlock:
        try:
            return _validate(value)
        except InvalidInputError as exc:  # pydantic reports ValueErrors as validation errors
            raise ValueError(str(exc)) from exc

    def _validate(value: Any) -> MediaBlock:
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise ValueError(f"expected a {cls.__name__} or its dict, got {type(value).__name__}")
        text, url, media_type = value.get("data"), value.get("url"), value.get("media_type")
        if text is not None and not isinstance(text, str):
            raise ValueError("data must be base64 text")
        if cls is DocumentBlock:
            filename = value.get("filename")
            if text is not None:
                return DocumentBlock.from_base64(text, media_type, filename=filename)
            return DocumentBlock(media_type or "", url=url, filename=filename)
        if text is not None:
            return ImageBlock.from_base64(text, media_type)
        return ImageBlock(media_type or "", url=url)

    return core_schema.no_info_plain_validator_function(
        validate, serialization=core_schema.plain_serializer_function_ser_schema(_dump))
