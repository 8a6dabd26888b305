"""Media types of image and document blocks: the types a block may hold, sniffing
them from magic bytes, and the checks of a block's bytes, base64, ``data:`` and
other URLs (``agentflow.content`` re-exports the public names)."""

from __future__ import annotations

import base64
import binascii
import mimetypes
from typing import Literal, TypeAlias
from urllib.parse import unquote_to_bytes, urlsplit

from agentflow._secrets import redact_urls
from agentflow.errors import InvalidInputError, MediaTypeError

__all__ = [
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_MEDIA_TYPES",
    "Modality",
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
