"""Input documents -> the text a model reads: PDF text layers page by page (page
ranges kept, so spans can name a page), HTML reduced to its text, plain text.

    from agentflow.documents import load_document, span_pages
    doc = load_document(raw, name="report.pdf")
    doc.text, doc.pages                        # the text layer; page n is doc.pages[n - 1]
    span_pages(result.spans, doc.pages)        # {"total": [3]}: the page of each span

Rooms: ``kinds`` (what a file is), ``pdf`` (pypdf, the ``pdf`` extra), ``html``
(Lexbor via selectolax, the ``html`` extra), ``nesting`` and ``attributes`` (the
depth and attribute caps before parsing HTML), ``encoding`` (bytes -> text, by a
documented order), ``pages`` (page maps), ``globs`` (lazy globs), ``loading``
(the dispatch), ``jsonl`` (one document per line, a bad line failing alone),
``routing`` (a PDF as text, as a document block, or both).
Errors are ``agentflow.errors.DocumentError`` and its subclasses.
"""

from agentflow.documents.encoding import Decoded, decode_bytes
from agentflow.documents.html import html_to_text
from agentflow.documents.kinds import DocumentKind, sniff_kind
from agentflow.documents.loading import DocumentText, load_document
from agentflow.documents.nesting import MAX_HTML_DEPTH, check_html_depth, html_depth
from agentflow.documents.pages import PAGE_SEPARATOR, PageMap, page_of, shift_pages, span_pages
from agentflow.documents.pdf import PdfText, iter_page_texts, read_pdf
from agentflow.documents.routing import PDF_MODES, Delivery, PdfMode, pdf_delivery

__all__ = [
    "MAX_HTML_DEPTH",
    "PAGE_SEPARATOR",
    "PDF_MODES",
    "Decoded",
    "Delivery",
    "DocumentKind",
    "DocumentText",
    "PageMap",
    "PdfMode",
    "PdfText",
    "check_html_depth",
    "decode_bytes",
    "html_depth",
    "html_to_text",
    "iter_page_texts",
    "load_document",
    "page_of",
    "pdf_delivery",
    "read_pdf",
    "shift_pages",
    "sniff_kind",
    "span_pages",
]
