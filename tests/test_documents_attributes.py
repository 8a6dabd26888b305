"""The HTML attribute cap (agentflow.documents.attributes): an element with
more attributes than any real page carries is refused before Lexbor parses it
(its parse time grows with the square of one element's attribute count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow import DocumentTooComplexError
from agentflow.documents import html_to_text
from agentflow.documents.attributes import MAX_HTML_ATTRIBUTES, most_attributes
from agentflow.documents.inputs import iter_documents


def page(count: int, attribute: str = "a{i}=x") -> str:
    names = " ".join(attribute.format(i=i) for i in range(count))
    return f"<html><body><p>Ann</p><div {names}>x</div></body></html>"


@pytest.mark.parametrize("attribute", ["a{i}=x", "a{i}", 'data-k{i}="v"', "a{i} = 'v w'"])
def test_an_element_with_too_many_attributes_is_refused(attribute: str) -> None:
    with pytest.raises(DocumentTooComplexError) as info:
        html_to_text(page(MAX_HTML_ATTRIBUTES + 1, attribute).encode(), name="wide.html")
    assert info.value.limit == "attributes" and info.value.path == "wide.html"
    assert info.value.measured == MAX_HTML_ATTRIBUTES + 1
    assert str(info.value) == "wide.html: an HTML element with 1,025 attributes (limit 1,024)"
    assert html_to_text(page(MAX_HTML_ATTRIBUTES, attribute)) == "Ann\n\nx"  # at the cap: read


def test_real_markup_is_not_counted_as_attributes() -> None:
    uri = '<img src="data:image/png;base64,' + "A" * 100_000 + '" alt="a picture">'
    flat = "<p class=a id=b>word word</p>" * 20_000
    text = "<p>" + "word " * 50_000 + "</p>"
    for markup in (uri, flat, text):
        assert most_attributes(f"<html><body>{markup}</body></html>") <= 2


def test_a_hostile_page_among_inputs_is_one_failed_record(tmp_path: Path) -> None:
    (tmp_path / "wide.html").write_text(page(1_000_000))  # 9 MB: an hour of parsing
    (tmp_path / "ok.html").write_text(page(3))
    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)])}
    assert docs["wide.html"].problem_type == "DocumentTooComplexError"
    assert "1,000,000 attributes" in (docs["wide.html"].problem or "")
    assert docs["ok.html"].text == "Ann\n\nx"
