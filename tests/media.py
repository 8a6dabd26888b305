"""Real image and PDF bytes for tests, made here (no binary fixtures)."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 2, height: int = 2, *, pad: int = 0) -> bytes:
    """A valid RGB PNG of ``width`` x ``height`` grey pixels; ``pad`` bytes of
    incompressible data in an ancillary chunk make it as large as a test needs."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + b"\x80\x80\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    filler = (bytes(range(256)) * (pad // 256 + 1))[:pad]
    extra = chunk(b"teXt", b"pad\x00" + filler) if pad else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300080606070605080707070909080a0c140d0c0b0b0c19"
    "12130f141d1a1f1e1d1a1c1c20242e2720222c231c1c2837292c30313434341f27393d38323c2e333432ffc0000b08"
    "0001000101011100ffc4001f0000010501010101010100000000000000000102030405060708090a0bffda0008010100"
    "003f00d2cf20ffd9"
)
"""A 1x1 baseline JPEG."""

GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00," \
      b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
"""A 1x1 GIF."""

WEBP = (b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00"
        b"\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
"""A 1x1 lossless WebP."""


def pdf(pages: int = 1, text: str = "Hello") -> bytes:
    """A valid PDF of ``pages`` pages, each showing ``text`` and its number
    (objects and cross-reference table written out by hand)."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    for n in range(pages):
        page_id = 3 + 2 * n
        kids.append(f"{page_id} 0 R")
        stream = f"BT /F1 24 Tf 72 720 Td ({text} {n + 1}) Tj ET".encode()
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
                       f"{page_id + 1} 0 R /Resources << /Font << /F1 {3 + 2 * pages} 0 R >> >> >>"
                       .encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {pages} >>".encode()
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)
