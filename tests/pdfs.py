"""Real PDF files made in the test suite (fpdf2, a dev dependency), and a real HTML page.

Every PDF is written by a PDF library and read back by pypdf: nothing is a
hand-made byte string pretending to be a PDF, except the corrupt ones.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from fpdf import FPDF
from fpdf.enums import EncryptionMethod

REPORT_PAGES = (
    "Quarterly maintenance report\nPrepared by: Dana Whitfield\nSite: North Ridge pumping "
    "station",
    "Findings\nValve V-17 leaks at the flange.\nPump P-3 vibration within limits.",
    "Costs\nParts: 1,240.00 EUR\nLabour: 860.00 EUR\nTotal due: 2,100.00 EUR\nApproved by: "
    "Ines Okafor",
)
"""Three pages of a small report; each value a test asks for is on one known page."""


def text_pdf(pages: Sequence[str] = REPORT_PAGES, *, owner_password: str | None = None,
             user_password: str | None = None,
             method: EncryptionMethod = EncryptionMethod.RC4) -> bytes:
    """A PDF with one page per item of ``pages`` (lines split on newlines), in a
    core font (Latin-1 text); encrypted when a password is given."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        for line in text.split("\n"):
            pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    if owner_password is not None:
        pdf.set_encryption(owner_password, user_password, encryption_method=method)
    return bytes(pdf.output())


def scanned_pdf(pages: int = 2) -> bytes:
    """A PDF whose pages are images only (what a scanner writes): no text layer."""
    from PIL import Image, ImageDraw

    pdf = FPDF()
    for number in range(pages):
        image = Image.new("RGB", (400, 200), "white")
        ImageDraw.Draw(image).text((20, 80), f"scanned page {number + 1}", fill="black")
        pdf.add_page()
        pdf.image(image, x=10, y=10, w=180)
    return bytes(pdf.output())


def truncated_pdf() -> bytes:
    """The first half of a real PDF: a download cut short."""
    raw = text_pdf()
    return raw[: len(raw) // 2]


REPORT_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="windows-1252">
  <title>Incident 4471 &ndash; North Ridge</title>
  <style>body { font-family: sans-serif } .x::before { content: "not text" }</style>
  <script>var tracking = "Reported by: Mallory";</script>
</head>
<body>
  <nav><a href="/">Home</a> | <a href="/incidents">Incidents</a></nav>
  <h1>Incident&nbsp;4471</h1>
  <p>Site: Hochwaldstraße 12, Zürich</p>
  <p>Reported by: <b>Ren&eacute;e Fa&ccedil;ade</b> on 2024-03-02.
     The   pressure alarm tripped
     twice.</p>
  <!-- Reported by: nobody in a comment -->
  <div hidden>Reported by: a hidden element</div>
  <table>
    <tr><th>Unit</th><th>Status</th></tr>
    <tr><td>P-3</td><td>restarted</td></tr>
  </table>
  <ul><li>Valve V-17 closed<li>Crew notified</ul>
  <p>Cost estimate: 2&#8239;100 &euro;</p>
</body>
</html>
"""
"""A real page: a legacy charset declared in a meta tag, entities, a script and a
style whose text must not show, a comment and a hidden element, a table and
an unclosed list."""


def report_html_bytes() -> bytes:
    """``REPORT_HTML`` as a server would send it: encoded as its meta tag says."""
    return REPORT_HTML.encode("cp1252", errors="xmlcharrefreplace")


def hostile_pdf(pages: int = 20, operators: int = 1_000_000) -> bytes:
    """A small PDF that is costly to read: its ``pages`` pages all draw one
    Flate-compressed content stream of ``operators`` text-showing operators
    (``(x) Tj``), so a text extractor parses the whole stream once per page
    (20 pages x 1M operators: about 14 KB on disk). Written by pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    body = b"BT /F1 1 Tf " + b"(x) Tj " * operators + b"ET"
    stream = DecodedStreamObject()
    stream.set_data(body)
    content = writer._add_object(stream.flate_encode())
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Contents")] = content
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
            {NameObject("/F1"): font})})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def bomb_pdf(inflated: int = 2_000_000) -> bytes:
    """A one-page PDF whose Flate-compressed content stream inflates to about
    ``inflated`` bytes (blanks after one text operator): a few KB on disk for
    2 MB, a decompression bomb when ``inflated`` passes the reader's output
    cap (pypdf's ``zlib_maximum_output_length``). Written by pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    stream = DecodedStreamObject()
    stream.set_data(b"BT /F1 12 Tf 72 712 Td (Bomb) Tj ET\n" + b" " * inflated)
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    page = writer.add_blank_page(612, 792)
    page[NameObject("/Contents")] = writer._add_object(stream.flate_encode())
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
        {NameObject("/F1"): font})})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
