"""A file's bytes -> text, by a documented order, never by silent replacement.

    decode_bytes(raw, name="notes.txt")                     # Decoded(text, "utf-8", "utf-8")
    decode_bytes(page, name="p.html", declared="koi8-r")    # an HTML page's <meta charset>

The order (the first step that applies decides):

=====================================  ==============================================
the bytes                              decoded as
=====================================  ==============================================
start with a byte-order mark           its encoding (UTF-8, UTF-16 LE/BE), strictly;
                                       bytes that do not decode are an error
a declared encoding (an HTML page's    that encoding, strictly, unless the bytes are
``<meta charset>``; ``declared=``)     valid UTF-8 with non-ASCII characters (UTF-8
                                       wins: text in a legacy encoding is practically
                                       never valid UTF-8, so the declaration lies);
                                       an unknown label or bytes that do not decode
                                       in it go on to the next rows (logged)
valid UTF-8                            UTF-8 (a last character cut mid-sequence, a
                                       truncated file, becomes U+FFFD, logged)
anything else                          the encoding ``charset-normalizer`` detects
                                       (UTF-16/32 and UTF-7 are never guessed
                                       without a BOM; windows-1252 when it reads
                                       the bytes as cleanly as a single-byte
                                       guess), strictly over the whole file,
                                       logged with the name of the encoding
none of these                          ``DocumentEncodingError`` naming the file,
                                       the encodings tried and the first bad byte
=====================================  ==============================================

Labels are read as the WHATWG Encoding Standard lists them
(https://encoding.spec.whatwg.org/#names-and-labels; the table is
``agentflow.documents.encoding_labels``): ``iso-8859-1``, ``latin1`` and
``ascii`` mean windows-1252, ``gb2312`` means GBK, ``shift_jis`` means
windows-31J, ``euc-kr`` means windows-949, ``tis-620`` means windows-874; a
page declaring UTF-16 in its ``<meta>`` is read as UTF-8 (the HTML Standard's
rule: a ``<meta>`` that could be read was not UTF-16). A label the Standard
does not list is unknown, whatever Python's codec registry answers to it
(``utf-7``, ``unicode_escape``, ``cp037``: codecs no browser reads a page
with, some hiding markup in plain ASCII, ``+ADw-script+AD4-``), and so is one
of its *replacement* encoding (``iso-2022-kr``, ``hz-gb-2312``...).

``decode_text`` adds the binary check for files of unknown kind: NUL bytes
(without a BOM), more than ``MAX_CONTROL_SHARE`` control characters, or bytes
mostly invalid as UTF-8 that no encoding reads make a file binary (``None``);
text with a few undecodable bytes is a ``DocumentEncodingError``, not binary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentflow._logging import get_logger
from agentflow.documents.encoding_labels import LABELS
from agentflow.errors import DocumentEncodingError

__all__ = ["MAX_CONTROL_SHARE", "Decoded", "EncodingSource", "codec_for_label", "decode_bytes",
           "decode_text"]

MAX_CONTROL_SHARE = 0.05
"""Largest share of control characters (other than whitespace and ESC) in text;
also the largest share of invalid UTF-8 sequences in damaged text (more is binary)."""

_TEXT_CONTROLS = frozenset("\t\n\r\f\v\b\x1b")

_log = get_logger("agentflow.documents")

EncodingSource = Literal["bom", "declared", "utf-8", "detected"]
"""Which row of the module's table decided the encoding."""

_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))

_NEVER_GUESSED = ["utf_16", "utf_16_be", "utf_16_le", "utf_32", "utf_32_be", "utf_32_le",
                  "utf_7"]
"""Encodings detection may not pick without a BOM: on short or Latin text it
picks UTF-16 for bytes that are nothing of the kind."""

_DETECT_SAMPLE = 262_144
"""Bytes ``charset-normalizer`` looks at (it decodes the whole file after)."""

_WESTERN = "cp1252"
"""windows-1252: the encoding browsers assume for unlabelled legacy text (WHATWG
HTML Standard, "determining the character encoding", its locale default for
most locales). When detection finds several single-byte encodings that read a
file equally cleanly (short Western text such as ``François Müller`` reads
without a flaw as cp1250, cp1257, cp775...), it is the one taken."""


def _single_byte(codec: str) -> bool:
    """Whether ``codec`` maps each byte to one character (cp125x, iso8859_x, koi8...)."""
    try:
        return len(bytes(range(128, 256)).decode(codec, errors="replace")) == 128
    except LookupError:
        return False


@dataclass(frozen=True, slots=True)
class Decoded:
    """A file's text and how it was decoded.

    Attributes:
        text: the decoded text.
        encoding: Python's codec name used (``"utf-8"``, ``"cp1251"``...).
        source: which row of the module's table decided (``EncodingSource``).
    """

    text: str
    encoding: str
    source: EncodingSource


def codec_for_label(label: str) -> str | None:
    """Python's codec for the encoding label ``label`` (as a ``<meta charset>``
    gives it; read as the WHATWG Encoding Standard lists it, see the module
    docstring), or ``None`` for a label that names no encoding there."""
    return LABELS.get(label.strip().strip("\"'").lower())


def _label(name: str) -> str:
    return name or "<bytes>"


def _error(raw: bytes, exc: UnicodeDecodeError, name: str, codec: str, tried: str
           ) -> DocumentEncodingError:
    return DocumentEncodingError(
        f"{_label(name)}: not valid {tried}", path=name, encoding=codec,
        reason=f"byte 0x{raw[exc.start]:02x} at offset {exc.start} does not decode as "
               f"{tried} ({exc.reason}); convert the file to UTF-8 (e.g. iconv -f ENCODING "
               "-t UTF-8 file)")


def _strict(raw: bytes, codec: str, name: str, tried: str) -> str:
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise _error(raw, exc, name, codec, tried) from None


def _utf8(raw: bytes) -> str | None:
    """``raw`` as UTF-8, or ``None``; a last character cut mid-sequence (a
    truncated file) becomes U+FFFD when the rest shows the file is UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        cut = exc.start >= len(raw) - 3 and exc.reason == "unexpected end of data"
        if not cut or raw[:exc.start].isascii():
            return None  # a lone high byte at the end of ASCII is a legacy encoding's
        return raw[:exc.start].decode("utf-8") + "\ufffd"


def decode_bytes(raw: bytes, *, name: str = "", declared: str | None = None) -> Decoded:
    """``raw`` decoded by the module's table.

    Args:
        raw: the file's bytes.
        name: the file's name, for errors and logs.
        declared: the encoding label the document declares (an HTML page's
            ``<meta charset>``); ``None``: none.

    Raises:
        DocumentEncodingError: a BOM whose encoding the bytes break, or bytes no
            step of the table decodes (``.encoding``: the last encoding tried).
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            text = _strict(raw[len(bom):], codec, name, f"{codec.split('-sig')[0].upper()} "
                           "(its byte-order mark says so)")
            return Decoded(text, codec, "bom")
    utf8 = _utf8(raw)
    if declared is not None:
        label_codec = codec_for_label(declared)
        if label_codec is None:
            _log.warning("unknown_declared_encoding", file=_label(name), label=declared[:60])
        elif label_codec == "utf-8" or utf8 is None or raw.isascii():
            try:
                return Decoded(raw.decode(label_codec), label_codec, "declared")
            except UnicodeDecodeError as exc:
                _log.warning("declared_encoding_does_not_decode", file=_label(name),
                             label=declared[:60], offset=exc.start)
        else:
            _log.warning("declared_encoding_overruled_by_utf8", file=_label(name),
                         label=declared[:60])
    if utf8 is not None:
        if utf8.endswith("\ufffd") and not raw.endswith(b"\xef\xbf\xbd"):
            _log.warning("cut_last_character", file=_label(name), encoding="utf-8")
        return Decoded(utf8, "utf-8", "utf-8")
    import charset_normalizer

    sample = raw[:_DETECT_SAMPLE]
    best = charset_normalizer.from_bytes(sample, cp_exclusion=_NEVER_GUESSED).best()
    detected = best.encoding if best is not None else None
    if detected is not None and detected != _WESTERN and _single_byte(detected):
        western = charset_normalizer.from_bytes(sample, cp_isolation=[_WESTERN]).best()
        if western is not None and best is not None and western.chaos <= best.chaos:
            detected = _WESTERN  # a tie among single-byte guesses: the WHATWG default
    if detected is None:  # strict UTF-8 fails (it did above): the error names the bad byte
        text = _strict(raw, "utf-8", name, "UTF-8, and no other encoding reads it "
                       "(charset-normalizer found none)")
        return Decoded(text, "utf-8", "utf-8")
    text = _strict(raw, detected, name, f"{detected} (detected: the file declares no encoding)")
    _log.warning("encoding_detected", file=_label(name), encoding=detected)
    return Decoded(text, detected, "detected")


def _texty(text: str) -> str | None:
    sample = text[:65536]
    controls = sum(1 for c in sample if (c < " " and c not in _TEXT_CONTROLS) or c == "\x7f")
    return None if controls > MAX_CONTROL_SHARE * max(1, len(sample)) else text


def decode_text(raw: bytes, *, name: str = "") -> str | None:
    """``raw`` (a file of no declared encoding: plain text) decoded by the module's
    table, or ``None`` when it is binary (see the module docstring).

    Raises:
        DocumentEncodingError: text that does not decode (a BOM the bytes break,
            a few bad bytes in otherwise readable text).
    """
    if not raw.startswith(tuple(bom for bom, _ in _BOMS)) and b"\0" in raw[:65536]:
        return None
    try:
        decoded = decode_bytes(raw, name=name)
    except DocumentEncodingError:
        if raw.startswith(tuple(bom for bom, _ in _BOMS)):
            raise
        sample = raw[:65536].decode("utf-8", errors="replace")
        if sample.count("\ufffd") > MAX_CONTROL_SHARE * max(1, len(sample)):
            return None  # mostly not text at all
        raise
    return _texty(decoded.text)
