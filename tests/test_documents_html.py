"""HTML -> text (agentflow.documents.html): what a reader sees, decoded as declared."""

from __future__ import annotations

import pytest

from agentflow.documents.html import html_to_text
from tests.pdfs import REPORT_HTML, report_html_bytes


def test_a_real_page_reads_as_a_browser_shows_it() -> None:
    text = html_to_text(report_html_bytes())
    assert text.splitlines()[0] == "Incident 4471 – North Ridge"  # the title first
    assert "Site: Hochwaldstraße 12, Zürich" in text  # windows-1252, from the meta tag
    assert "Reported by: Renée Façade on 2024-03-02. The pressure alarm tripped twice." in text
    assert "Unit\tStatus\nP-3\trestarted" in text  # cells by tabs, rows by lines
    assert "Valve V-17 closed\nCrew notified" in text  # unclosed <li>: the standard tree
    assert "Cost estimate: 2\u202f100 €" in text
    for unseen in ("tracking", "Mallory", "font-family", "not text", "nobody", "hidden"):
        assert unseen not in text
    assert "<" not in text and "&" not in text
    assert html_to_text(REPORT_HTML) == text  # str in: nothing left to decode


@pytest.mark.parametrize(("html", "text"), [
    ("<p>a</p><p>b</p>", "a\n\nb"),
    ("<div>a</div><div>b</div>", "a\nb"),
    ("a<br>b<br><br>c", "a\nb\n\nc"),
    ("<p>  lots \n of\t space  </p>", "lots of space"),
    ("x <b>bold</b> <i>it</i>al y", "x bold ital y"),
    ("<pre>  keep\n    this </pre>", "  keep\n    this "),
    ("<h2>Title</h2>body", "Title\n\nbody"),
    ("<p>5&nbsp;&lt;&nbsp;6 &amp; &#x263A; &eacute;</p>", "5 < 6 & ☺ é"),
    ("<div style='DISPLAY : none'>x</div>y", "y"),
    ("<table><tr><td>1<td>2<tr><td>3<td>4</table>", "1\t2\n3\t4"),
    ("<p>a<template><p>t</template><noscript>ns</noscript>b", "ab"),
    ("", ""),
])
def test_the_text_rules(html: str, text: str) -> None:
    assert html_to_text(html) == text


def test_encodings_bom_meta_and_undeclared() -> None:
    body = "<p>Привет, мир</p>"
    assert html_to_text(("<meta charset='koi8-r'>" + body).encode("koi8-r")) == "Привет, мир"
    http_equiv = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
    assert html_to_text((http_equiv + body).encode("cp1251")) == "Привет, мир"
    assert html_to_text(body.encode("utf-16")) == "Привет, мир"  # the BOM says UTF-16
    assert html_to_text(body.encode("utf-8")) == "Привет, мир"
    long = "<p>" + "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 20 + "</p>"
    assert html_to_text(long.encode("cp1251")).startswith("Съешь же ещё")  # undeclared: guessed


def test_a_deeply_nested_page_does_not_overflow_the_stack() -> None:
    # 1,000 is Python's default recursion limit; deeper pages are refused before
    # parsing (tests/test_documents_nesting.py)
    assert html_to_text("<div>" * 1_020 + "deep" + "</div>" * 1_020) == "deep"
