"""How a PDF reaches the model: its text layer, the PDF itself as a document
block, or both.

    pdf_delivery("auto", model_reads_pdf=True, has_text=False)   # "document"

The decision table (``mode`` is ``agentflow extract --pdf``):

==========  ===============  ========  =================  ==============================
mode        model reads PDF  has text  delivery           spans / pages
==========  ===============  ========  =================  ==============================
text        either           yes       ``text``           from the text layer
text        either           no        ``no_text``        (a ``NoTextLayerError`` record)
auto        either           yes       ``text``           from the text layer
auto        yes              no        ``document``       none: there is no text to point into
auto        no               no        ``no_text``        (a ``NoTextLayerError`` record)
document    yes              yes       ``document+text``  from the text layer (sent beside the PDF)
document    yes              no        ``document``       none
document    no               either    ``unsupported``    (refused before any request)
==========  ===============  ========  =================  ==============================

Why ``auto`` prefers the text layer when there is one: it costs a fraction of
the tokens (vendors bill a PDF page as text plus an image of the page), works
on every model, and is what spans and grounding point into. The PDF itself
is worth sending when the layout or the images carry the meaning (``--pdf
document``) or when there is no text layer (a scan). "Model reads PDF" is
profile data: ``"pdf" in ModelProfile.input_modalities``.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["PDF_MODES", "Delivery", "PdfMode", "pdf_delivery"]

PdfMode = Literal["auto", "text", "document"]
"""``agentflow extract --pdf``: how PDFs reach the model."""

PDF_MODES: tuple[PdfMode, ...] = ("auto", "text", "document")

Delivery = Literal["text", "document", "document+text", "no_text", "unsupported"]
"""What is sent for one PDF (see the module's table)."""


def pdf_delivery(mode: PdfMode, *, model_reads_pdf: bool, has_text: bool) -> Delivery:
    """What to send for one PDF: see the module's decision table."""
    if mode == "document":
        if not model_reads_pdf:
            return "unsupported"
        return "document+text" if has_text else "document"
    if has_text:
        return "text"
    return "document" if mode == "auto" and model_reads_pdf else "no_text"
