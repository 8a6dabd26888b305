"""Pages: where each page of a PDF lies in the extracted text, and which page a
span is on.

A page map is a tuple of ``[start, end)`` character ranges (Python ``str``
indices) into the text the model saw, page 1 first: ``pages[n - 1]`` is page
``n``. Ranges are in order and do not overlap; the text between two pages is
the separator (``PAGE_SEPARATOR``). A page with no text has an empty range
(``start == end``). In a JSONL record the map is the key ``pages``
(``[[start, end], ...]``) and the page of each span is the key ``span_pages``
(``{"path": [page, ...]}``, one 1-based page number per span of ``spans``, in
the same order)::

    {"spans": {"total": [[5120, 5128]]}, "pages": [[0, 2400], [2402, 5300]],
     "span_pages": {"total": [2]}}
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence

__all__ = ["PAGE_SEPARATOR", "PageMap", "page_of", "shift_pages", "span_pages"]

PAGE_SEPARATOR = "\n\n"
"""What stands between two pages' texts: a blank line, so chunking
(``agentflow.extraction.chunking``) prefers to split long documents at pages."""

PageMap = tuple[tuple[int, int], ...]
"""``pages[n - 1]`` is the ``[start, end)`` character range of page ``n``."""


def page_of(offset: int, pages: Sequence[tuple[int, int]]) -> int | None:
    """The 1-based number of the page holding character ``offset`` (a span's
    start), or ``None`` when ``offset`` is in no page's range (in a separator,
    or past the end).

    A zero-length span at the very end of a page counts as on that page."""
    return _page_of(offset, pages, [start for start, _ in pages])


def _page_of(offset: int, pages: Sequence[tuple[int, int]], starts: list[int]) -> int | None:
    index = bisect_right(starts, offset) - 1
    if index < 0:
        return None
    start, end = pages[index]
    if start <= offset < end or offset == end == start or (offset == end and index == len(
            pages) - 1):
        return index + 1
    return None


def span_pages(spans: Mapping[str, Sequence[Sequence[int]]],
               pages: Sequence[tuple[int, int]]) -> dict[str, list[int | None]]:
    """For each field path of ``spans``, the page of each of its spans (the page
    its start is on; ``None`` for a span outside every page), in span order."""
    starts = [start for start, _ in pages]
    return {path: [_page_of(int(span[0]), pages, starts) for span in ranges]
            for path, ranges in spans.items()}


def shift_pages(pages: Sequence[tuple[int, int]], offset: int, length: int) -> PageMap:
    """``pages`` for the slice ``text[offset:offset + length]`` of the text they
    describe: each range moved by ``-offset`` and clipped to ``[0, length]``
    (pages wholly outside the slice become empty ranges at its edge, so page
    numbers stay the PDF's)."""
    def clip(value: int) -> int:
        return min(max(value - offset, 0), length)

    return tuple((clip(start), clip(end)) for start, end in pages)
