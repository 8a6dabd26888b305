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
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar
from urllib.parse import unquote_to_bytes, urlsplit

from pydantic_core import core_schema

from agentflow._secrets import redact_urls
from agentflow.errors import InvalidInputError, MediaTypeError, UnsupportedInputError

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

    from agentflow.messages import Msg
    from agentflow.model import ModelProfile

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

Modality: TypeAlias = Literal["text", "image", "pdf"]
"""An input modality a model may accept (``ModelProfile.input_modalities``)."""

IMAGE_MEDIA_TYPES = frozenset({
    "image/png", "image/jpeg", "image/gif", "image/webp",
    "image/heic", "image/heif", "image/bmp", "image/tiff",
})
"""Image media types a block may hold (each recognized by its magic bytes)."""

DOCUMENT_MEDIA_TYPES = frozenset({"application/pdf"})
"""Document media types a block may hold."""

_ALIASES = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png",
            "image/x-ms-bmp": "image/bmp", "image/tif": "image/tiff", "application/x-pdf":
            "application/pdf"}

_HEIC_BRANDS = frozenset({b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis"})
_HEIF_BRANDS = frozenset({b"mif1", b"msf1", b"heif"})


def sniff_media_type(data: bytes) -> str | None:
    """The media type ``data`` starts with (its magic bytes), or ``None``.

    Recognized: PNG, JPEG, GIF, WebP, HEIC/HEIF, BMP, TIFF and PDF (whose
    ``%PDF-`` header may follow up to 1024 bytes of junk, as PDF readers allow).
    """
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp":
        if head[8:12] in _HEIC_BRANDS:
            return "image/heic"
        if head[8:12] in _HEIF_BRANDS:
            return "image/heif"
    if head.startswith(b"BM") and len(data) >= 26:
        return "image/bmp"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    if b"%PDF-" in data[:1024]:
        return "application/pdf"
    return None


def _normalize(media_type: str) -> str:
    value = media_type.split(";", 1)[0].strip().lower()
    return _ALIASES.get(value, value)


def redact_url(url: str) -> str:
    """``url`` without its query and fragment (where presigned URLs keep
    credentials), for reprs and error messages."""
    if urlsplit(url).scheme == "data":
        return f"data:{url[5:].split(',', 1)[0]},<{len(url)} chars>"
    return redact_urls(url)


def _checked_bytes(kind: str, allowed: frozenset[str], data: bytes, media_type: str | None,
                   origin: str) -> str:
    """The media type of ``data`` (given or sniffed), checked against ``allowed``."""
    sniffed = sniff_media_type(data)
    given = _normalize(media_type) if media_type else None
    names = ", ".join(sorted(allowed))
    if given is not None and given not in allowed:
        raise MediaTypeError(f"{kind} {origin}: media type {media_type!r} is not one a {kind} "
                             f"block holds ({names})", media_type=media_type)
    if sniffed is None:
        raise MediaTypeError(
            f"{kind} {origin}: {len(data)} bytes of an unknown type (their first bytes "
            f"{data[:8]!r} match none of {names})", media_type=given)
    if given is not None and given != sniffed:
        raise MediaTypeError(f"{kind} {origin}: media type {media_type!r} was given but the bytes "
                             f"are {sniffed}", media_type=given)
    if sniffed not in allowed:
        raise MediaTypeError(f"{kind} {origin}: the bytes are {sniffed}, not one a {kind} block "
                             f"holds ({names})", media_type=sniffed)
    return sniffed


def _url_media_type(kind: str, allowed: frozenset[str], url: str,
                    media_type: str | None) -> str:
    """The media type of a URL source: given, else guessed from its path's extension."""
    guessed = mimetypes.guess_type(urlsplit(url).path)[0]
    value = _normalize(media_type or guessed or "")
    if not value:
        raise MediaTypeError(f"{kind} URL {redact_url(url)}: its media type cannot be told from "
                             f"the path; pass media_type= (one of {', '.join(sorted(allowed))})")
    if value not in allowed:
        raise MediaTypeError(f"{kind} URL {redact_url(url)}: media type {value!r} is not one a "
                             f"{kind} block holds ({', '.join(sorted(allowed))})",
                             media_type=value)
    return value


def _compact(text: str) -> str:
    """Base64 text without the line breaks MIME encoders insert."""
    return "".join(text.split()) if any(c.isspace() for c in text[:80]) else text


def _decode_base64(kind: str, text: str) -> bytes:
    if not isinstance(text, str):
        raise InvalidInputError(f"{kind}: base64 text must be a str, got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInputError(f"{kind}: the base64 text is malformed ({exc}); "
                                f"it starts {text[:20]!r}") from exc


def _data_url(kind: str, url: str) -> tuple[bytes, str | None, str | None]:
    """``(bytes, media type, base64 text)`` of a ``data:`` URL."""
    header, sep, payload = url[5:].partition(",")
    if not sep:
        raise InvalidInputError(f"{kind}: malformed data URL (no comma): {redact_url(url)}")
    params = header.split(";")
    media_type = params[0] or None
    if "base64" in params[1:]:
        text = "".join(payload.split())
        return _decode_base64(kind, text), media_type, text
    return unquote_to_bytes(payload), media_type, None


def _source_checked(kind: str, data: bytes | None, url: str | None) -> None:
    if (data is None) == (url is None):
        raise InvalidInputError(f"a {kind} block holds exactly one source: data (bytes) or url")
    if data is not None and not isinstance(data, bytes):
        raise InvalidInputError(f"{kind} data must be bytes, got {type(data).__name__}")
    if url is not None:
        scheme = urlsplit(url).scheme if isinstance(url, str) else ""
        if scheme not in ("http", "https", "gs"):
            raise InvalidInputError(f"{kind} URL must be http(s):// or gs://, got "
                                    f"{redact_url(url) if isinstance(url, str) else repr(url)}"
                                    "; a data: URL goes through from_url")


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


# ----------------------------------------------------------------------------- the check


def modality(block: object) -> Modality:
    """The input modality ``block`` needs: ``"image"``, ``"pdf"`` or ``"text"``."""
    if isinstance(block, ImageBlock):
        return "image"
    if isinstance(block, DocumentBlock):
        return "pdf"
    return "text"


def _mb(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 100_000 else f"{n} bytes"


def check_inputs(messages: Iterable[Msg], profile: ModelProfile, model_name: str, *,
                 first_index: int = 0, inline: int = 0) -> int:
    """Refuse, before any request, a block the model does not take; return the
    base64 bytes of the inline blocks so far (``inline`` plus those of
    ``messages``), so a caller can check a conversation a part at a time
    (``agentflow._input_checks``): ``first_index`` is the index of the first of
    ``messages`` in the conversation (errors name it).

    Decision table, per image/document block (profile data only):

    ======================================================  =====================
    the block is in a message whose role is not ``user``      InvalidInputError
    modality not in ``profile.input_modalities``              UnsupportedInputError
    a URL source, modality not in ``url_input_modalities``    UnsupportedInputError
    image media type not in ``profile.image_media_types``     UnsupportedInputError
    bytes over ``max_image_bytes`` / ``max_document_bytes``   UnsupportedInputError
    base64 of all blocks over ``max_inline_bytes``            UnsupportedInputError
    ======================================================  =====================

    Raises:
        UnsupportedInputError: naming the model, the modality, the block and the limit.
        InvalidInputError: an image or document outside a user message.
    """
    for index, msg in enumerate(messages, start=first_index):
        for block in msg.content:
            if not isinstance(block, ImageBlock | DocumentBlock):
                continue
            kind = modality(block)
            where = f"message {index}: {block!r}"
            if msg.role != "user":
                raise InvalidInputError(
                    f"images and documents go in user messages; {where} is in a {msg.role} "
                    "message")
            if kind not in profile.input_modalities:
                accepted = ", ".join(sorted(profile.input_modalities))
                raise UnsupportedInputError(
                    f"model {model_name!r} does not accept {kind} input ({where}); it takes: "
                    f"{accepted}. Use a model whose profile lists {kind!r} in input_modalities, "
                    "or send the content as text", model=model_name, modality=kind)
            if block.url is not None:
                if kind not in profile.url_input_modalities:
                    raise UnsupportedInputError(
                        f"model {model_name!r} does not fetch {kind} input from a URL ({where}); "
                        f"pass the bytes instead ({type(block).__name__}.from_path/from_bytes)",
                        model=model_name, modality=kind)
                continue
            assert block.data is not None
            if isinstance(block, ImageBlock) and block.media_type not in profile.image_media_types:
                raise UnsupportedInputError(
                    f"model {model_name!r} does not accept {block.media_type} images ({where}); "
                    f"it takes {', '.join(sorted(profile.image_media_types))}",
                    model=model_name, modality=kind)
            limit = (profile.max_image_bytes if isinstance(block, ImageBlock)
                     else profile.max_document_bytes)
            if limit is not None and len(block.data) > limit:
                raise UnsupportedInputError(
                    f"{kind} too large for model {model_name!r}: {_mb(len(block.data))} > "
                    f"{_mb(limit)} per {kind} ({where})", model=model_name, modality=kind)
            inline += 4 * ((len(block.data) + 2) // 3)
            if profile.max_inline_bytes is not None and inline > profile.max_inline_bytes:
                raise UnsupportedInputError(
                    f"inline content too large for model {model_name!r}: the base64 of the "
                    f"images and documents comes to {_mb(inline)} > {_mb(profile.max_inline_bytes)}"
                    f" per request (at {where}); send fewer or smaller files, or URLs",
                    model=model_name, modality=kind)
    return inline
