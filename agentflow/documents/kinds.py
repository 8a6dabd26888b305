"""What kind of document a file is: PDF, HTML or plain text, from its first bytes
and its name.

    sniff_kind(b"%PDF-1.7\\n...", "scan.bin")       # "pdf": the magic bytes win
    sniff_kind(b"<!doctype html><p>Hi", "page")     # "html": the HTML Standard's sniffing
    sniff_kind(b"<p>not markup here", "notes.txt")  # "text": a text suffix is never sniffed

The decision table (first row that matches wins):

=============================================  ======
the first bytes / the name                     kind
=============================================  ======
``%PDF-`` within the first 1024 bytes          pdf
name ends ``.pdf``                             pdf (a file that is not one fails as corrupt)
name ends ``.html``, ``.htm``, ``.xhtml``      html
name ends with a plain-text suffix (``.txt``,  text
``.md``, ``.csv``, ``.log``, ``.json``...)
a tag that starts an HTML document (after      html
whitespace and a BOM; the HTML Standard's
MIME sniffing patterns, e.g. ``<!DOCTYPE
HTML``, ``<html``, ``<body``, ``<p``)
anything else                                  text
=============================================  ======

``.gz`` is looked through: ``page.html.gz`` is judged by ``page.html`` and by
the gunzipped bytes. Sources: the PDF header offset (1024 bytes) is what
Acrobat accepts (PDF 32000-1 Annex H.3, note 13); the HTML patterns are those
of the WHATWG MIME Sniffing Standard, section 7.1 ("identifying a resource
with an unknown MIME type").
"""

from __future__ import annotations

from typing import Literal

__all__ = ["HTML_SUFFIXES", "PDF_MAGIC", "TEXT_SUFFIXES", "DocumentKind", "sniff_kind"]

DocumentKind = Literal["pdf", "html", "text"]
"""The kinds ``agentflow extract`` reads: PDF (its text layer), HTML (its text)
and plain text."""

PDF_MAGIC = b"%PDF-"
"""The PDF header; readers accept it anywhere in the first 1024 bytes."""

HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml", ".shtml"})
"""File name suffixes read as HTML whatever the content."""

TEXT_SUFFIXES = frozenset({
    ".txt", ".text", ".md", ".markdown", ".rst", ".csv", ".tsv", ".log", ".json", ".xml",
    ".yaml", ".yml", ".ini", ".cfg", ".toml", ".tex", ".srt", ".vtt",
})
"""File name suffixes that declare plain text: never sniffed as HTML (the MIME
Sniffing Standard does not sniff ``text/plain`` either, so markup quoted in a
text file stays text)."""

_HTML_TAGS = (
    b"<!DOCTYPE HTML", b"<HTML", b"<HEAD", b"<SCRIPT", b"<IFRAME", b"<H1", b"<DIV", b"<FONT",
    b"<TABLE", b"<A", b"<STYLE", b"<TITLE", b"<B", b"<BODY", b"<BR", b"<P", b"<!--",
)
_TAG_END = (b" ", b">")
_LEADING_SPACE = b"\t\n\x0c\r "


def _name_suffix(name: str) -> str:
    """The suffix that names the format: ``a.html.gz`` -> ``.html``."""
    base = name.rsplit("/", 1)[-1].lower()
    if base.endswith(".gz"):
        base = base[:-3]
    dot = base.rfind(".")
    return base[dot:] if dot > 0 else ""


def _looks_like_html(head: bytes) -> bool:
    """The MIME Sniffing Standard's HTML patterns: after whitespace, one of the
    tags (case-insensitive) followed by a space or ``>``."""
    start = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    start = start.lstrip(_LEADING_SPACE)[:16].upper()
    for tag in _HTML_TAGS:
        if start.startswith(tag):
            rest = start[len(tag):len(tag) + 1]
            if tag == b"<!--" or rest in _TAG_END:
                return True
    return False


def sniff_kind(head: bytes, name: str = "") -> DocumentKind:
    """The kind of a document whose first bytes are ``head`` (1024 or more are
    enough) and whose file name is ``name`` (``""``: none); see the module's
    decision table."""
    if PDF_MAGIC in head[:1024]:
        return "pdf"
    suffix = _name_suffix(name)
    if suffix == ".pdf":
        return "pdf"
    if suffix in HTML_SUFFIXES:
        return "html"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return "html" if _looks_like_html(head) else "text"
