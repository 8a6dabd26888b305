"""The review page builder: escaping, overlapping spans, Unicode offsets, summary, streaming."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentflow.errors import InvalidRecordError
from agentflow.extraction import report as report_module
from agentflow.extraction.report import (
    Source,
    is_suspect,
    latest_records,
    render_report,
    suspect_record,
    write_report,
)


class Page(HTMLParser):
    """The parts of a review page the tests look at, parsed the way a browser would
    for these constructs (one newline after ``<pre>`` dropped, character references
    decoded)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.sources: dict[str, str] = {}  # article data-id -> text of its <pre>
        self.spans: dict[str, dict[str, Any]] = {}  # data-span -> {field, text, firsts, elements}
        self.failed_rows: list[list[str]] = []
        self.counts: dict[str, str] = {}
        self.script_tags = 0
        self._doc: str | None = None
        self._in_pre = False
        self._pre_start = False
        self._open: list[str | None] = []  # data-span of each open mark (None: other element)
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._count: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            self.script_tags += 1
        if tag == "article":
            self._doc = a["data-id"]
        if tag == "pre" and self._doc is not None:
            self._in_pre, self._pre_start = True, True
            self.sources[self._doc] = ""
        if tag == "mark":
            key = a["data-span"]
            assert key is not None
            info = self.spans.setdefault(key, {"field": a["data-field"], "text": "",
                                               "firsts": 0, "elements": 0, "doc": self._doc})
            info["elements"] += 1
            info["firsts"] += "first" in (a.get("class") or "").split()
            self._open.append(key)
        elif tag in ("span",) and self._in_pre:
            self._open.append(None)
        if tag == "tr" and a.get("class") == "failed-record":
            self._row = []
        if tag == "td" and self._row is not None:
            self._cell = []
        if tag == "div" and a.get("data-count"):
            self._count = a["data-count"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._in_pre = False
        if tag in ("mark", "span") and self._in_pre and self._open:
            self._open.pop()
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.failed_rows.append(self._row)
            self._row = None
        if tag == "div":
            self._count = None

    def handle_data(self, data: str) -> None:
        if self._in_pre and self._doc is not None:
            if self._pre_start and data.startswith("\n"):
                data = data[1:]
            self._pre_start = False
            self.sources[self._doc] += data
            for key in {k for k in self._open if k is not None}:
                self.spans[key]["text"] += data
        if self._cell is not None:
            self._cell.append(data)
        if self._count is not None and self._count not in self.counts:
            self.counts[self._count] = data


TRICKY = ("\nhello (1.0) <b>&amp;</b> \"quoted\" 'single' café 😀 ẞ\r\n\ttab 𝔘𝔫𝔦 "
          "e\u0301 \x85 \u200b end\r")


def find(text: str, needle: str) -> list[int]:
    start = text.index(needle)
    return [start, start + len(needle)]


def test_escaping_keeps_text_and_never_leaks_markup() -> None:
    evil = '<script>alert("x")</script>&lt;'
    record = {"id": evil, "ok": False,
              "error": {"type": "Bad<Type>", "message": evil, "reason": evil},
              "output": {evil: evil}, "spans": {evil: [find(TRICKY, "<b>&amp;</b>")]}}
    html = render_report([record], {evil: TRICKY}, title=evil)
    assert html.count("<script") == 1  # the page's own script only
    page = Page(html)
    assert page.sources == {evil: TRICKY}
    (span,) = page.spans.values()
    assert span["field"] == evil and span["text"] == "<b>&amp;</b>"
    assert page.failed_rows == [[evil, "Bad<Type>", evil, ""]]


def test_astral_characters_keep_code_point_offsets() -> None:
    text = "😀😀 x 𝔘𝔫𝔦 y 👩‍👩‍👧 z"
    spans = {"a": [find(text, "x")], "b": [find(text, "𝔘𝔫𝔦")], "c": [find(text, "👩‍👩‍👧 z")]}
    page = Page(render_report([{"id": "d", "ok": True, "output": {}, "spans": spans}],
                              {"d": text}))
    assert page.sources["d"] == text
    assert sorted((s["field"], s["text"]) for s in page.spans.values()) == [
        ("a", "x"), ("b", "𝔘𝔫𝔦"), ("c", "👩‍👩‍👧 z")]


def test_nested_crossing_identical_and_empty_spans() -> None:
    text = "0123456789abcdef"
    spans = {"outer": [[0, 10]], "inner": [[2, 5]], "cross": [[8, 14]], "same": [[2, 5]],
             "empty": [[5, 5]], "tail": [[14, 16]]}
    html = render_report([{"id": "d", "ok": True, "spans": spans}], {"d": text})
    page = Page(html)
    assert page.sources["d"] == text
    got = {s["field"]: (s["text"], s["firsts"], s["elements"]) for s in page.spans.values()}
    assert got == {"outer": ("0123456789", 1, 1), "inner": ("234", 1, 1),
                   "same": ("234", 1, 1), "empty": ("", 1, 1),
                   "cross": ("89abcd", 1, 2),  # split at the end of "outer"
                   "tail": ("ef", 1, 1)}
    # nested spans nest as elements: "inner" is inside "outer"
    assert re.search(r'data-field="outer"[^>]*>(<mark[^>]*>)*01<mark[^>]*data-field="(inner|same)"',
                     html)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab <&\r\n\t😀é\u0301𝔘"), max_size=40), st.data())
def test_every_span_is_one_highlight_with_its_text(text: str, data: st.DataObject) -> None:
    bounds = st.integers(0, len(text))
    pairs = data.draw(st.lists(st.tuples(bounds, bounds).map(sorted), max_size=8))
    spans = {f"f[{i}]": [list(p)] for i, p in enumerate(pairs)}
    page = Page(render_report([{"id": "d", "ok": True, "spans": spans}], {"d": text}))
    assert page.sources["d"] == text
    assert len(page.spans) == len(pairs)
    for info in page.spans.values():
        start, end = spans[info["field"]][0]
        assert info["text"] == text[start:end]
        assert info["firsts"] == 1


def test_invalid_and_differing_spans_are_reported_not_drawn() -> None:
    text = "name: Ann Lee"
    record = {"id": "d", "ok": True, "output": {"name": "Ann  LEE", "age": 3, "tags": []},
              "spans": {"name": [[6, 13]], "age": [[3, 99]], "bad": ["x"], "neg": [[5, 2]],
                        "other": [[0, 4]]}}
    record2 = {"id": "e", "ok": True, "output": {"name": "Bob"}, "spans": {"name": [[6, 9]]}}
    chunks = []
    stats = write_report([record, record2], {"d": text, "e": text}, chunks.append)
    html = "".join(chunks)
    page = Page(html)
    assert {s["field"] for s in page.spans.values()} == {"name", "other"}  # "e" name too
    assert stats.spans == 3 and stats.invalid_spans == 3
    assert stats.differing == 1  # "Ann" != "Bob"; "Ann Lee" ~ "Ann  LEE" (whitespace, case)
    assert len(re.findall(r'<mark class="[^"]*\bdiffers\b', html)) == 1
    assert "past the end of the text" in html and "not a [start, end] pair" in html
    assert '<td class="path">tags</td><td class="val"><span class="v">[]</span></td>' in html
    assert "(not in the output)" in html  # "other" has a span but no value


def test_source_offset_shifts_spans_and_missing_sources_are_shown() -> None:
    shown = "HEADER\nbody Ann"
    records = [
        {"id": "d", "ok": True, "output": {"n": "Ann"}, "spans": {"n": [[5, 8]]}},
        {"id": "gone", "ok": True, "output": {"n": "x"}, "spans": {"n": [[0, 1]]}},
    ]

    def sources(record: Any) -> Source:
        if record["id"] == "gone":
            return Source(None, problem="no file 'gone'")
        return Source(shown, offset=7, note="whole file")

    stats = write_report(records, sources, lambda _: None)
    page = Page(render_report(records, sources))
    assert [s["text"] for s in page.spans.values()] == ["Ann"]
    assert stats.unavailable == [(2, "gone", "no file 'gone'")]
    html = render_report(records, sources)
    assert "Source not available: no file 'gone'" in html
    # the unreadable document still lists its span offsets, as text (nothing to link to)
    assert '<span class="span-link">[0, 1)</span>' in html and 'href="#s2-' not in html
    assert stats.spans == 1


def test_summary_counts_failures_and_newest_record_wins() -> None:
    records = [
        {"id": "a", "ok": False, "error": {"type": "ProviderTimeoutError", "message": "slow"}},
        {"id": "b", "ok": False, "error": {"type": "DegenerateOutputError", "message": "m",
                                           "reason": "repetition loop: d/d/d"}},
        {"id": "c", "ok": False, "error": {"type": "GroundingError", "message": "m",
                                           "reason": "maintainer not found in the document"}},
        {"id": "d", "ok": False, "error": "weird"},
        {"id": "a", "ok": True, "output": {"x": 1}},  # a retry that worked: newest wins
    ]
    stats = write_report(records, {}, lambda _: None)
    assert (stats.records, stats.superseded, stats.ok, stats.failed, stats.suspect) == (
        4, 1, 1, 3, 2)
    assert stats.by_error_type == {"DegenerateOutputError": 1, "GroundingError": 1,
                                   "UnknownError": 1}
    page = Page(render_report(records, {}))
    assert page.counts == {"records": "4", "ok": "1", "needs": "0", "failed": "3",
                           "suspect": "2", "older": "1", "spans": "0", "differing": "0",
                           "invalid": "0", "unavailable": "4"}
    assert [row[:3] for row in page.failed_rows] == [
        ["b", "DegenerateOutputError", "repetition loop: d/d/d"],
        ["c", "GroundingError", "maintainer not found in the document"],
        ["d", "UnknownError", "weird"]]
    html = render_report(records, {})
    assert html.index('id="doc-1" data-id="b"') < html.index('data-id="a"')


@pytest.mark.parametrize(("kind", "suspect"), [
    ("DegenerateOutputError", True), ("GroundingError", True), ("UngroundedValueError", True),
    ("StructuredOutputValidationError", False), ("ProviderTimeoutError", False),
    ("InputError", False)])
def test_is_suspect(kind: str, suspect: bool) -> None:
    assert is_suspect(kind) is suspect


@pytest.mark.parametrize("bad", [{"ok": True}, {"id": 3, "ok": True}, {"id": "x"}, "text"])
def test_records_without_the_record_shape_are_refused(bad: Any) -> None:
    with pytest.raises(InvalidRecordError, match="record 2"):
        latest_records([{"id": "a", "ok": True}, bad])


def test_sources_are_read_one_document_at_a_time() -> None:
    events: list[str] = []
    records = [{"id": str(i), "ok": True, "output": {"v": str(i)}, "spans": {"v": [[0, 1]]}}
               for i in range(3)]

    def sources(record: Any) -> Source:
        events.append(f"read {record['id']}")
        return Source(record["id"])

    def write(piece: str) -> None:
        if 'class="doc' in piece:
            events.append("wrote doc")

    write_report(records, sources, write)
    assert events == ["read 0", "wrote doc", "read 1", "wrote doc", "read 2", "wrote doc"]


def test_cr_nul_and_lone_surrogates_are_one_character_each() -> None:
    text = "a\r\nb\rc\x00d\ud800e"
    page = Page(render_report([{"id": "d", "ok": True, "spans": {"x": [[5, 8]]}}],
                              {"d": text}))
    assert page.sources["d"] == "a\r\nb\rc\ufffdd\ufffde"
    assert [s["text"] for s in page.spans.values()] == ["c\ufffdd"]
    assert "\r" not in render_report([{"id": "d", "ok": True}], {"d": text})


def test_module_exports() -> None:
    for name in report_module.__all__:
        assert getattr(report_module, name).__doc__


def test_chunk_gaps_and_cuts_are_shown() -> None:
    text = "alpha beta gamma delta"
    record = {"id": "d", "ok": True, "output": {"a": "alpha"}, "spans": {"a": [[0, 5]]},
              "chunks": {"total": 3, "failed": 1, "missing": [[6, 16]]},
              "truncated": {"kept_chars": 17, "total_chars": 22}}
    html = render_report([record], {"d": text})
    page = Page(html)
    assert page.sources["d"] == text and len(page.spans) == 1  # a gap is not a highlight
    assert re.search(r'<span class="missing" title="not extracted[^>]*>beta gamma</span>', html)
    assert re.search(r'<span class="missing" title="not read by the model[^>]*>delta</span>',
                     html)
    assert "3 chunks, 1 failed" in html and "the model saw 17 of 22 characters" in html


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12)


def carried(text: str) -> str:
    """``text`` as the page carries it: NUL and lone surrogates are U+FFFD."""
    return "".join("\ufffd" if c == "\0" or "\ud800" <= c <= "\udfff" else c for c in text)


@settings(max_examples=100, deadline=None)
@given(st.fixed_dictionaries({"id": st.text(max_size=6), "ok": st.booleans()},
                             optional={k: json_values for k in (
                                 "output", "error", "spans", "chunks", "truncated", "usage",
                                 "attempts", "duration_s", "source_offset", "confidence",
                                 "needs_review", "ungrounded")}),
       st.text(max_size=30))
def test_any_json_record_renders(record: dict[str, Any], text: str) -> None:
    page = Page(render_report([record], {record["id"]: text}))
    assert page.sources[carried(record["id"])] == carried(text)


def test_a_failure_before_any_request_is_failed_not_suspect() -> None:
    records = [
        {"id": "b4", "ok": False, "attempts": 0, "error": {
            "type": "GroundingError", "message": "no value of the document can fill reported_on",
            "reason": "- reported_on: no date the document writes could be read"}},
        {"id": "b5", "ok": False, "attempts": 2, "error": {
            "type": "GroundingError", "message": "m", "reason": "title not found"}},
    ]
    stats = write_report(records, {}, lambda _: None)
    assert (stats.failed, stats.suspect) == (2, 1)
    assert stats.suspect_by_type == {"GroundingError": 1}
    assert [suspect_record(r) for r in records] == [False, True]
    html = render_report(records, {})
    assert 'class="doc is-failed' in html.split('data-id="b4"')[0].rsplit("<article", 1)[1]
    assert Page(html).counts["suspect"] == "1"
