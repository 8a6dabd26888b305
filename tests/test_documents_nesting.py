"""The HTML depth cap (agentflow.documents.nesting): hostile nesting is refused
before Lexbor parses it; real markup is never mistaken for deep nesting."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow import DocumentTooComplexError
from agentflow.documents import MAX_HTML_DEPTH, html_depth, html_to_text, load_document
from agentflow.documents.inputs import iter_documents


def test_a_hostile_page_of_100k_nested_tags_is_a_typed_error_not_a_hang() -> None:
    page = ("<html><body>" + "<div>" * 100_000 + "x" + "</div>" * 100_000).encode()
    with pytest.raises(DocumentTooComplexError) as info:
        load_document(page, name="deep.html")
    assert info.value.depth > MAX_HTML_DEPTH and info.value.path == "deep.html"
    assert "1024" in str(info.value) and "deep.html" in str(info.value)
    assert "nest" in info.value.reason


@pytest.mark.parametrize("page", [
    "<section>" * 50_000,                               # never closed
    "<div/>" * 50_000,                                  # '/>' does not close an HTML element
    "<b><i>" * 30_000,                                  # formatting elements
    "<table><tr><td>" * 20_000,                         # tables nested in cells
    "<!-- c --><div>" * 5_000 + "</div>" * 5_000,       # comments between
])
def test_every_shape_of_deep_nesting_is_caught(page: str) -> None:
    with pytest.raises(DocumentTooComplexError):
        html_to_text(page)
    with pytest.raises(DocumentTooComplexError):
        html_to_text(page.encode("utf-16"))             # the scan reads UTF-16 by its BOM


@pytest.mark.parametrize(("page", "depth"), [
    ("<div><div><p>x</div></div>", 2),
    ("<ul>" + "<li>item" * 5_000 + "</ul>", 1),          # unclosed <li>: siblings, not nesting
    ("<p>para" * 5_000, 0),                              # unclosed <p> likewise
    ("<table>" + "<tr><td>a<td>b" * 3_000 + "</table>", 1),
    ("<select>" + "<option>o" * 3_000 + "</select>", 1),
    ("<p>" + "line<br>" * 5_000 + "<img src=a.png>" * 1_000, 0),   # void elements
    ("<svg>" + '<path d="M0 0"/>' * 5_000 + "</svg>", 1),            # self-closing in SVG
    ("<script>" + "if (a<b) { s = '<div>'; }" * 5_000 + "</script>", 0),  # raw text
    ("<!--" + "<div>" * 5_000 + "-->", 0),                # inside a comment
    ("<div title='a > b'>x</div>" * 5_000, 1),
])
def test_real_markup_is_not_mistaken_for_deep_nesting(page: str, depth: int) -> None:
    assert html_depth(page) == depth
    html_to_text(page)  # read, not refused


def test_a_page_at_the_cap_is_read_and_not_walked_recursively() -> None:
    # deeper than Python's default recursion limit (1000): the text walk has no recursion
    depth = MAX_HTML_DEPTH
    assert html_to_text("<div>" * depth + "deep" + "</div>" * depth) == "deep"


def test_extract_records_the_refusal_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "deep.html").write_text("<div>" * 20_000 + "x")
    (tmp_path / "fine.html").write_text("<p>fine</p>")
    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)])}
    assert docs["deep.html"].problem_type == "DocumentTooComplexError"
    assert docs["deep.html"].reason and "deep" in (docs["deep.html"].problem or "")
    assert docs["fine.html"].text == "fine" and docs["fine.html"].problem is None
