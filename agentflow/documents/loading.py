"""One file's bytes -> the text a model reads, by kind (PDF, HTML, plain text).

    doc = load_document(Path("invoice.pdf").read_bytes(), name="invoice.pdf")
    doc.kind, doc.text, doc.pages        # "pdf", the text layer, page ranges

``agentflow extract`` reads every input through this (``agentflow.documents.inputs``),
and ``agentflow report`` re-reads sources through it, so the review page shows
the same text the model saw and spans line up.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentflow.documents.budget import WorkBudget
from agentflow.documents.encoding import decode_text
from agentflow.documents.html import html_to_text
from agentflow.documents.kinds import DocumentKind, sniff_kind
from agentflow.documents.pages import PageMap
from agentflow.documents.pdf import read_pdf
from agentflow.errors import DocumentError, NoTextLayerError

__all__ = ["MAX_CONTROL_SHARE", "DocumentText", "load_document"]

MAX_CONTROL_SHARE = 0.05
"""Largest share of control characters in a PDF's text layer: more means the
fonts carry no Unicode mapping and the "text" is glyph ids, not words."""

_TEXT_CONTROLS = frozenset("\t\n\r\f\v")


@dataclass(frozen=True, slots=True)
class DocumentText:
    """The text of one document.

    Attributes:
        text: what the model reads.
        kind: ``"pdf"``, ``"html"`` or ``"text"``.
        pages: a PDF's page map (``agentflow.documents.pages``): ``pages[n - 1]``
            is page ``n``'s ``[start, end)`` range in ``text``; ``None`` for other kinds.
    """

    text: str
    kind: DocumentKind
    pages: PageMap | None = None


def _unreadable_share(text: str) -> float:
    sample = text[:65536]
    bad = sum(1 for c in sample if (c < " " and c not in _TEXT_CONTROLS) or c in "\x7f\ufffd")
    return bad / max(1, len(sample.strip()))


def load_document(raw: bytes, *, name: str = "", kind: DocumentKind | None = None,
                  password: str | None = None, allow_no_text: bool = False,
                  budget: WorkBudget | None = None) -> DocumentText:
    """The text of the document ``raw`` (a file's bytes, gunzipped).

    Args:
        name: the file name: its suffix helps tell the kind, and it names the
            file in errors.
        kind: ``"pdf"``, ``"html"`` or ``"text"``; ``None``: told by
            ``agentflow.documents.kinds.sniff_kind`` (magic bytes, then suffix).
        password: a PDF's user password.
        allow_no_text: a PDF without a usable text layer comes back with empty
            text (and empty page ranges) instead of raising: for a model that
            reads the PDF itself.
        budget: a PDF's work budget (``agentflow.documents.budget``; its CPU
            limit is the caller's to enforce); ``None``: none.

    Raises:
        NoTextLayerError: a PDF without text (scanned pages) or whose text layer
            is unreadable (glyph ids: fonts without a Unicode mapping).
        EncryptedDocumentError / CorruptDocumentError: see ``agentflow.documents.pdf``.
        DocumentTooComplexError: HTML nested too deep (``agentflow.documents.nesting``),
            or a PDF past ``budget``.
        DocumentEncodingError: text or HTML whose bytes do not decode
            (``agentflow.documents.encoding``).
        DocumentError: plain "text" that is binary; the reader a kind needs
            (the ``pdf`` or ``html`` extra) is not installed.
    """
    kind = kind or sniff_kind(raw[:1024], name)
    if kind == "pdf":
        pdf = read_pdf(raw, name=name, password=password, budget=budget)
        count = len(pdf.pages)
        if allow_no_text and (not pdf.has_text or _unreadable_share(pdf.text) > MAX_CONTROL_SHARE):
            return DocumentText("", "pdf", tuple((0, 0) for _ in pdf.pages))
        if not pdf.has_text:
            pages_have_no = f"none of its {count} pages has" if count != 1 else (
                "its one page has no")
            raise NoTextLayerError(
                f"{name}: PDF without a text layer ({count} page{'s' * (count != 1)}, no text)",
                path=name, pages=count,
                reason=f"{pages_have_no} text: a scanned PDF holds images. "
                       "Run OCR on it first (e.g. ocrmypdf), or use a model that reads PDF "
                       "documents itself (see 'agentflow models')")
        if _unreadable_share(pdf.text) > MAX_CONTROL_SHARE:
            raise NoTextLayerError(
                f"{name}: PDF whose text layer is not readable text", path=name, pages=count,
                reason="its fonts map glyphs to no Unicode characters, so the extracted text "
                       "is glyph ids; run OCR on it first, or use a model that reads PDF "
                       "documents itself")
        return DocumentText(pdf.text, "pdf", pdf.pages)
    if kind == "html":
        return DocumentText(html_to_text(raw, name=name), "html")
    text = decode_text(raw, name=name)
    if text is None:
        raise DocumentError(f"{name}: binary file, not text", path=name,
                            reason="not a PDF or HTML, and no text encoding reads it")
    return DocumentText(text, "text")
