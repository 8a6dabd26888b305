"""What the fakes check of inline images and documents, shared by every
vendor fake (each wraps a problem in its own error envelope).

``decode`` reads base64 text strictly; ``kind_of`` tells the real type of the
bytes from their magic numbers (independently of ``agentflow.content``, so the
fakes do not trust the code under test); ``pdf_pages`` counts a PDF's page
objects (``/Type /Page``), as a vendor counts pages against its limit.
"""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["decode", "kind_of", "parse_data_url", "pdf_pages"]

_PAGE = re.compile(rb"/Type\s*/Page(?![s\w])")


_URLSAFE = re.compile(r"[A-Za-z0-9_-]*={0,2}")


def decode(text: object, *, urlsafe: bool = False) -> bytes | None:
    """The bytes of base64 ``text``, or ``None`` when it is not base64;
    ``urlsafe``: the URL-safe alphabet is taken too (proto3 JSON bytes, Gemini)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        pass
    if urlsafe and _URLSAFE.fullmatch(text):
        try:
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            return None
    return None


def kind_of(data: bytes) -> str | None:
    """The media type the bytes' magic numbers say, or ``None``."""
    signatures = (
        (b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF8", "image/gif"), (b"%PDF-", "application/pdf"), (b"BM", "image/bmp"),
        (b"II*\x00", "image/tiff"), (b"MM\x00*", "image/tiff"),
    )
    for magic, kind in signatures:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"mif1"):
        return "image/heic" if data[8:12] != b"mif1" else "image/heif"
    return None


def parse_data_url(url: object) -> tuple[str, bytes] | None:
    """``(media type, bytes)`` of a ``data:<type>;base64,<text>`` URL, else ``None``."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    header, sep, payload = url[5:].partition(",")
    if not sep or not header.endswith(";base64"):
        return None
    data = decode(payload)
    return None if data is None else (header[: -len(";base64")], data)


def pdf_pages(data: bytes) -> int:
    """How many page objects the PDF holds."""
    return len(_PAGE.findall(data))
