"""A PDF's text layer page by page (agentflow.documents.pdf), on real PDFs made here."""

from __future__ import annotations

import pytest
from fpdf.enums import EncryptionMethod

from agentflow.documents.budget import DEFAULT_BUDGET, WorkBudget
from agentflow.documents.pages import PAGE_SEPARATOR, page_of
from agentflow.documents.pdf import iter_page_texts, read_pdf
from agentflow.errors import CorruptDocumentError, DocumentTooComplexError, EncryptedDocumentError
from tests.pdfs import REPORT_PAGES, bomb_pdf, scanned_pdf, text_pdf, truncated_pdf


def test_pages_are_read_in_order_and_their_ranges_kept() -> None:
    pdf = read_pdf(text_pdf(), name="report.pdf")
    assert len(pdf.pages) == 3 and pdf.has_text
    for number, expected in enumerate(REPORT_PAGES, start=1):
        start, end = pdf.pages[number - 1]
        assert pdf.text[start:end] == expected  # each page's text exactly where the map says
    assert pdf.text == PAGE_SEPARATOR.join(REPORT_PAGES)
    at = pdf.text.index("Ines Okafor")
    assert page_of(at, pdf.pages) == 3 and page_of(pdf.text.index("Dana"), pdf.pages) == 1


def test_pages_come_one_at_a_time() -> None:
    pages = iter_page_texts(text_pdf(), name="report.pdf")
    assert next(pages) == REPORT_PAGES[0]  # the first page, before the others are parsed
    assert list(pages) == list(REPORT_PAGES[1:])


def test_a_scanned_pdf_has_pages_but_no_text() -> None:
    pdf = read_pdf(scanned_pdf(3))
    assert len(pdf.pages) == 3 and not pdf.has_text
    assert all(start == end for start, end in pdf.pages)


@pytest.mark.parametrize("method", [EncryptionMethod.RC4, EncryptionMethod.AES_128,
                                    EncryptionMethod.AES_256])
def test_an_owner_password_alone_does_not_stop_reading(method: EncryptionMethod) -> None:
    pdf = read_pdf(text_pdf(owner_password="owner", method=method))
    assert pdf.text == PAGE_SEPARATOR.join(REPORT_PAGES)


def test_a_user_password_is_an_encrypted_document_error() -> None:
    raw = text_pdf(owner_password="owner", user_password="s3cret")
    with pytest.raises(EncryptedDocumentError, match=r"locked\.pdf: encrypted PDF") as caught:
        read_pdf(raw, name="locked.pdf")
    assert "password" in caught.value.reason and "s3cret" not in str(caught.value)
    assert read_pdf(raw, password="s3cret").text.startswith("Quarterly")
    with pytest.raises(EncryptedDocumentError, match="password is wrong"):
        read_pdf(raw, password="guess")


@pytest.mark.parametrize(("raw", "why"), [
    (b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\nendobj\n", "pypdf cannot read it"),
    (b"", "not a PDF"),
    (b"PK\x03\x04 a zip file named .pdf", "not a PDF: no %PDF- header"),
])
def test_corrupt_files_say_why(raw: bytes, why: str) -> None:
    with pytest.raises(CorruptDocumentError, match=r"bad\.pdf: corrupt PDF") as caught:
        read_pdf(raw, name="bad.pdf")
    assert why in caught.value.reason and caught.value.path == "bad.pdf"


def test_a_truncated_download_is_read_as_far_as_it_goes_or_refused() -> None:
    try:  # pypdf rebuilds a lost cross-reference table when it can
        pdf = read_pdf(truncated_pdf(), name="cut.pdf")
    except CorruptDocumentError as exc:
        assert exc.reason
    else:
        assert all(pdf.text[s:e] in REPORT_PAGES for s, e in pdf.pages if e > s)


@pytest.mark.parametrize("budget", [None, DEFAULT_BUDGET], ids=["no budget", "budget"])
def test_a_decompression_bomb_is_too_complex_naming_the_readers_limit(
        budget: WorkBudget | None) -> None:
    from pypdf import apply_configuration

    raw = bomb_pdf(inflated=2_000_000)  # a few KB: past a 1 MB cap, as 300 MB is past 75 MB
    assert len(raw) < 20_000
    assert "Bomb" in read_pdf(raw, name="bomb.pdf", budget=budget).text  # under the cap: read
    with apply_configuration(zlib_maximum_output_length=1_000_000), pytest.raises(
            DocumentTooComplexError,
            match=r"bomb\.pdf: too costly to read \(page 1\): the PDF reader's safety limit: "
                  r"Limit reached while decompressing") as caught:
        read_pdf(raw, name="bomb.pdf", budget=budget)
    error = caught.value
    assert not isinstance(error, CorruptDocumentError)
    assert error.limit == "reader" and error.path == "bomb.pdf"
    assert "decompression bomb" in error.reason and "pdftotext" in error.reason
