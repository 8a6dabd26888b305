"""One file's bytes -> text by kind (agentflow.documents.loading)."""

from __future__ import annotations

import pytest

from agentflow.documents import load_document
from agentflow.errors import DocumentError, NoTextLayerError
from tests.pdfs import REPORT_PAGES, report_html_bytes, scanned_pdf, text_pdf


def test_each_kind_by_its_bytes() -> None:
    pdf = load_document(text_pdf(), name="r.bin")
    assert pdf.kind == "pdf" and pdf.pages is not None and len(pdf.pages) == 3
    html = load_document(report_html_bytes(), name="incident")
    assert html.kind == "html" and html.pages is None and "Renée Façade" in html.text
    words = "Viele Grüße aus München, von der schönen Straße am Fluß. " * 5
    text = load_document(words.encode("cp1252"), name="note.txt")
    assert (text.kind, text.text) == ("text", words)
    forced = load_document(report_html_bytes(), name="incident", kind="text")
    assert forced.text.startswith("<!DOCTYPE html>")  # asked for the markup: gets it


def test_a_scanned_pdf_is_a_no_text_layer_error_that_says_what_to_do() -> None:
    with pytest.raises(NoTextLayerError) as caught:
        load_document(scanned_pdf(2), name="scan.pdf")
    error = caught.value
    assert error.pages == 2 and "scan.pdf: PDF without a text layer (2 pages" in str(error)
    assert "none of its 2 pages has text" in error.reason and "OCR" in error.reason
    assert "model that reads PDF documents" in error.reason


def test_a_text_layer_of_glyph_ids_is_no_text_layer() -> None:
    garbage = ["\x01\x02\x03\x04 \x05\x06\x07" * 40, *REPORT_PAGES[:1]]
    with pytest.raises(NoTextLayerError, match="not readable text"):
        load_document(text_pdf(garbage), name="glyphs.pdf")


def test_binary_bytes_are_not_text() -> None:
    with pytest.raises(DocumentError, match="blob: binary file, not text"):
        load_document(bytes(range(256)) * 4, name="blob")
