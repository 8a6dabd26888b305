"""Page maps (agentflow.documents.pages): which page a span is on."""

from __future__ import annotations

from agentflow.documents.pages import page_of, shift_pages, span_pages

PAGES = ((0, 10), (12, 12), (14, 30))  # page 2 has no text


def test_page_of_each_offset() -> None:
    assert [page_of(o, PAGES) for o in (0, 9, 10, 11, 12, 13, 14, 29, 30, 31)] == [
        1, 1, None, None, 2, None, 3, 3, 3, None]
    assert page_of(0, ()) is None


def test_span_pages_follow_the_spans_order() -> None:
    spans = {"title": [[2, 5]], "items[0]": [[20, 25], [3, 4]], "gap": [[11, 11]]}
    assert span_pages(spans, PAGES) == {"title": [1], "items[0]": [3, 1], "gap": [None]}


def test_shift_pages_to_a_slice() -> None:
    # the slice text[12:25]: page 1 is before it, page 3 cut at its end
    assert shift_pages(PAGES, 12, 13) == ((0, 0), (0, 0), (2, 13))
    assert shift_pages(PAGES, 0, 30) == PAGES
