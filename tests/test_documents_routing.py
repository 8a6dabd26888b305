"""How a PDF reaches the model (agentflow.documents.routing): the decision table."""

from __future__ import annotations

import pytest

from agentflow.documents.routing import pdf_delivery


@pytest.mark.parametrize(("mode", "reads_pdf", "has_text", "delivery"), [
    ("text", True, True, "text"),
    ("text", False, True, "text"),
    ("text", True, False, "no_text"),
    ("text", False, False, "no_text"),
    ("auto", True, True, "text"),
    ("auto", False, True, "text"),
    ("auto", True, False, "document"),
    ("auto", False, False, "no_text"),
    ("document", True, True, "document+text"),
    ("document", True, False, "document"),
    ("document", False, True, "unsupported"),
    ("document", False, False, "unsupported"),
])
def test_the_decision_table(mode: str, reads_pdf: bool, has_text: bool, delivery: str) -> None:
    assert pdf_delivery(mode, model_reads_pdf=reads_pdf, has_text=has_text) == delivery  # type: ignore[arg-type]
