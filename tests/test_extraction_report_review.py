"""The review page's *needs review* (issue 30 item 4): a filter with its count,
each field's confidence and what its level means, the flagged fields' rows
shaded, and a value with no span that the document does not write marked
*not in the document*; checked in the page's HTML and in headless Chromium."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, Field

from agentflow.batch import extract_many
from agentflow.cli import main
from agentflow.documents.names import BIDI_CONTROLS
from agentflow.extraction._report_fields import CHECK_BUDGET, LEVELS
from agentflow.extraction.confidence import DISAGREES, DOUBTED, GROUNDED, HELD, UNCHECKED
from agentflow.extraction.records import to_record
from agentflow.extraction.report import render_report, write_report
from agentflow.testing import FunctionModel, RecordedRequest
from tests.headless_chromium import chromium

NOTICE = ("## ASM Bytecode Manipulation Framework v8.0.1\n\n### ASM License\n\n"
          "Copyright (c) 2000-2011 France Télécom\nAll rights reserved.\n")


def span(text: str, needle: str) -> list[list[int]]:
    start = text.index(needle)
    return [[start, start + len(needle)]]


def notice_record(rid: str = "asm.md") -> dict[str, Any]:
    """An ok record as ``extract`` writes it: a year the document never writes
    (``ungrounded``), a field whose locator disagrees, one the model doubted."""
    return {
        "id": rid, "ok": True,
        "output": {"component": "ASM", "version": "0.1", "license_heading": "ASM License",
                   "copyright": "2000-2011 France Télécom", "first_year": 1994},
        "confidence": {"component": GROUNDED, "version": DOUBTED, "license_heading": HELD,
                       "copyright": DISAGREES, "first_year": UNCHECKED},
        "needs_review": ["component", "version", "copyright", "first_year"],
        "ungrounded": ["first_year"],
        "spans": {"component": span(NOTICE, "ASM"), "version": span(NOTICE, "0.1"),
                  "license_heading": span(NOTICE, "ASM License"),
                  "copyright": span(NOTICE, "2000-2011 France Télécom")},
    }


CLEAN = {"id": "clean.md", "ok": True, "output": {"component": "ASM"},
         "confidence": {"component": HELD}, "needs_review": [],
         "spans": {"component": span(NOTICE, "ASM")}}
FAILED = {"id": "bad.md", "ok": False, "error": {"type": "GroundingError", "message": "m"}}


class Rows(HTMLParser):
    """Each field-table row of each card: its classes and its cells' text, and the
    filter buttons' text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.cards: dict[str, str] = {}  # data-id -> class
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}  # (data-id, field path)
        self.buttons: dict[str, str] = {}
        self.hrefs: list[str] = []
        self.srcs: list[str] = []
        self._doc = ""
        self._row: dict[str, Any] | None = None
        self._button: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if "href" in a:
            self.hrefs.append(a["href"] or "")
        if "src" in a:
            self.srcs.append(a["src"] or "")
        if tag == "article":
            self._doc = a["data-id"] or ""
            self.cards[self._doc] = a["class"] or ""
        if tag == "tr" and "data-field" in a:
            self._row = {"class": (a.get("class") or "").split(), "cells": []}
            self.rows[(self._doc, a["data-field"] or "")] = self._row
        if tag == "td" and self._row is not None:
            self._row["cells"].append("")
        if tag == "button":
            self._button = a["data-filter"]
            self.buttons[self._button or ""] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None
        if tag == "button":
            self._button = None

    def handle_data(self, data: str) -> None:
        if self._row is not None and self._row["cells"]:
            self._row["cells"][-1] += data
        if self._button is not None:
            self.buttons[self._button] += data


def test_flagged_fields_show_their_confidence_why_and_a_shaded_row() -> None:
    html = render_report([notice_record(), CLEAN, FAILED], {"asm.md": NOTICE, "clean.md": NOTICE})
    page = Rows(html)
    assert page.buttons == {"all": "all 3", "ok": "ok 2", "review": "needs review 1",
                            "failed": "failed 1", "suspect": "suspect 1"}
    assert "needs-review" in page.cards["asm.md"].split()
    assert "needs-review" not in page.cards["clean.md"].split()
    assert "needs-review" not in page.cards["bad.md"].split()
    rows = {path: row for (doc, path), row in page.rows.items() if doc == "asm.md"}
    assert {p for p, r in rows.items() if "flagged" in r["class"]} == {
        "component", "version", "copyright", "first_year"}
    conf = {path: row["cells"][2] for path, row in rows.items()}
    assert conf["license_heading"] == f"0.99{LEVELS[HELD]}"
    assert conf["copyright"] == "0.20its locator disagrees (it finds another value, or none)"
    assert conf["version"].startswith("0.60the model was unsure")
    assert conf["component"].startswith("0.80copied from the document, but nothing confirms")
    assert conf["first_year"] == "0.50not found in the document: nothing checked it"
    assert re.search(r'<span class="score low">0\.20</span>', html)
    assert '<span class="score">0.99</span>' in html
    assert "low confidence in component, version, copyright, first_year" in html


def test_every_confidence_level_has_its_meaning() -> None:
    """A level added to ``agentflow.extraction.confidence`` (or to a module that
    lowers its scores afterwards: ``list_repeats``, ``masked``, ``dropped``), or two
    made equal, must be described here too, or the page would show it without a reason."""
    from agentflow.extraction import confidence, dropped, list_repeats, masked

    names = [(m, n) for m in (confidence, list_repeats, masked, dropped) for n in m.__all__
             if n.isupper() and n not in ("REVIEW_BELOW", "DOUBT_BELOW", "MASKED_REASON")]
    values = {getattr(m, n) for m, n in names}
    assert len(values) == len(names) == len(LEVELS) and values == set(LEVELS)
    assert all(0 <= v <= 1 and round(v, 3) == v for v in values)  # records round to 3 places


def test_a_value_no_span_places_is_marked_not_in_the_document() -> None:
    record = notice_record()
    record["output"]["holder"] = "France Télécom"  # written, but no span (e.g. a locator held)
    record["confidence"]["holder"] = HELD
    page = Rows(render_report([record], {"asm.md": NOTICE}))
    year, holder = page.rows[("asm.md", "first_year")], page.rows[("asm.md", "holder")]
    assert "nodoc" in year["class"] and year["cells"][1] == "1994 not in the document"
    assert "nodoc" not in holder["class"] and holder["cells"][1] == "France Télécom no span"
    spanned = page.rows[("asm.md", "component")]
    assert spanned["cells"][1] == "ASM" and not {"nodoc", "nospan"} & set(spanned["class"])


def test_an_item_listed_ungrounded_is_marked_and_its_siblings_are_not() -> None:
    text = "tags: alpha, beta"
    record = {"id": "d", "ok": True,
              "output": {"tags": ["alpha", "gamma", {"n": "delta"}], "note": None, "e": ""},
              "confidence": {"tags": UNCHECKED, "note": 0.7, "e": 0.7},
              "needs_review": ["tags", "note", "e"], "ungrounded": ["tags[1]", "tags[2]"],
              "spans": {"tags[0]": span(text, "alpha")}}
    page = Rows(render_report([record], {"d": text}))
    marked = {path for (_, path), row in page.rows.items() if "nodoc" in row["class"]}
    assert marked == {"tags[1]", "tags[2].n"}  # an item, and a leaf inside an item
    # a field's confidence is shown once, on its first row; nulls are never "not in the document"
    assert [page.rows[("d", p)]["cells"][2][:4] for p in ("tags[0]", "tags[1]", "note")] == [
        "0.50", "", "0.70"]
    assert page.rows[("d", "note")]["cells"][1] == "null"


def test_older_records_without_confidence_are_looked_up_in_the_text() -> None:
    text = "Version 2.0, released 5 March 2024 by Ann"
    values = {"version": "2.0", "by": "Ann", "year": 1994, "date": "2024-03-05", "v": 2.0}
    record = {"id": "d", "ok": True, "output": values}
    page = Rows(render_report([record], {"d": text}))
    tags = {path: row["cells"][1].rsplit(" ", 1)[-1] if "nodoc" not in row["class"] else "nodoc"
            for (_, path), row in page.rows.items()}
    assert tags == {"version": "span", "by": "span", "year": "nodoc", "date": "nodoc",
                    "v": "span"}  # a date *string* is looked up as words: not written so
    # the source unavailable: nothing to look up
    unknown = Rows(render_report([record], {}))
    assert all("nodoc" not in row["class"] and "nospan" in row["class"]
               for row in unknown.rows.values())
    assert "not checked against the document" in render_report([record], {})


def test_look_ups_are_bounded_per_document() -> None:
    n = CHECK_BUDGET + 20
    record = {"id": "d", "ok": True, "output": {"items": [f"x{i}" for i in range(n)]}}
    html = render_report([record], {"d": "nothing here"})
    assert html.count("not in the document</span>") == CHECK_BUDGET
    assert html.count('title="no span; not checked against the document"') == 20


def test_the_page_grows_linearly_with_its_fields() -> None:
    def page(n: int) -> int:
        record = {"id": "d", "ok": True, "output": {"items": [f"v{i}" for i in range(n)]},
                  "confidence": {"items": UNCHECKED}, "needs_review": ["items"],
                  "ungrounded": [f"items[{i}]" for i in range(0, n, 2)],
                  "spans": {f"items[{i}]": [[i, i + 1]] for i in range(1, n, 2)}}
        return len(render_report([record], {"d": "x" * (2 * n)}))

    small, large = page(500), page(4000)
    assert large < 8.5 * small


HOSTILE = "\u202eevil\u2066<script>alert(1)</script>\x1b[2J\u200f"


def test_hostile_field_names_and_values_stay_inert() -> None:
    record = {"id": HOSTILE, "ok": True,
              "output": {HOSTILE: HOSTILE, "n": 7},
              "confidence": {HOSTILE: 0.2, "n": "high", "x": float("nan")},
              "needs_review": [HOSTILE, 3], "ungrounded": [HOSTILE, None]}
    html = render_report([record], {HOSTILE: f"a {HOSTILE} b"}, title=HOSTILE, notes=[HOSTILE])
    assert html.count("<script") == 1  # the page's own only
    assert not set(html) & set(BIDI_CONTROLS)  # nothing can reorder what is shown
    page = Rows(html)
    row = page.rows[("\ufffdevil\ufffd<script>alert(1)</script>\x1b[2J\ufffd",
                     "\ufffdevil\ufffd<script>alert(1)</script>\x1b[2J\ufffd")]
    assert "flagged" in row["class"] and "nodoc" in row["class"]
    assert row["cells"][2].startswith("0.20")
    assert page.rows[(next(iter(page.cards)), "n")]["cells"][2] == "—"  # not a number: no score


def test_nothing_in_the_page_needs_the_network() -> None:
    html = render_report([notice_record(), CLEAN, FAILED], {"asm.md": NOTICE, "clean.md": NOTICE})
    page = Rows(html)
    assert page.srcs == [] and page.hrefs and all(h.startswith("#") for h in page.hrefs)
    assert not re.search(r"url\(|@import|https?://|//[a-z]", html.split("<main>")[0])
    assert "fetch(" not in html and "XMLHttpRequest" not in html


def test_report_summary_names_the_fields_to_review(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "asm.md").write_text(NOTICE)
    other = notice_record("other.md")
    other["needs_review"] = ["first_year"]
    (tmp_path / "out.jsonl").write_bytes(b"".join(
        orjson.dumps(r) + b"\n" for r in (notice_record(), other, CLEAN, FAILED)))
    assert main(["report", "out.jsonl", "--input", "asm.md", "-o", "page.html"]) == 0
    assert ("4 documents: 3 ok, 1 failed (1 suspect); 2 ok need review (first_year 2, "
            "component 1, copyright 1, version 1); ") in capsys.readouterr().err
    stats = write_report([CLEAN], {}, lambda _: None)
    assert stats.review_note() == ""


class Notice(BaseModel):
    component: str | None = Field(None, description="the component from the '## ' heading")
    first_year: int | None = Field(None, description="the first year of the copyright")


async def test_records_the_pipeline_writes_mark_an_invented_year() -> None:
    """From ``extract_many`` to the page: in a run that opts out of grounding
    (a grounded one refuses the year: tests/test_grounding_typed.py), the
    year the model invented is *ungrounded* in the record, flagged, and
    marked on the page."""
    def answer(request: RecordedRequest) -> str:
        return json.dumps({"component": "ASM", "first_year": 1994})

    (result,) = [r async for r in extract_many(FunctionModel(answer), [NOTICE], Notice,
                                               ground=False)]
    record = to_record(result)
    assert record["ok"] and record["ungrounded"] == ["first_year"]
    page = Rows(render_report([record], {record["id"]: NOTICE}))
    (doc,) = page.cards
    year = page.rows[(doc, "first_year")]
    assert {"flagged", "nodoc"} <= set(year["class"])
    assert year["cells"][1] == "1994 not in the document"
    assert year["cells"][2] == f"{UNCHECKED:.2f}{LEVELS[UNCHECKED]}"
    assert page.buttons["review"] == "needs review 1"


def test_the_needs_review_filter_in_headless_chromium(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    records = [notice_record("a.md"), CLEAN, notice_record("b.md"), FAILED]
    page = tmp_path / "review.html"
    page.write_text(render_report(records, {"a.md": NOTICE, "b.md": NOTICE,
                                            "clean.md": NOTICE}), encoding="utf-8")
    with chromium() as browser:
        browser.get(page.as_uri())
        cards = {a.get_attribute("data-id"): a
                 for a in browser.find_elements(By.CSS_SELECTOR, "article.doc")}

        def shown() -> set[str]:
            return {k for k, a in cards.items() if a.is_displayed()}

        assert shown() == {"a.md", "clean.md", "b.md", "bad.md"}
        button = browser.find_element(By.CSS_SELECTOR, 'button[data-filter="review"]')
        assert button.text == "needs review 2"
        button.click()
        assert shown() == {"a.md", "b.md"}
        assert "on" in button.get_attribute("class").split()
        browser.find_element(By.ID, "search").send_keys("b.md")
        assert shown() == {"b.md"}  # the id filter narrows the status filter
        browser.find_element(By.ID, "search").clear()
        browser.execute_script("document.getElementById('search')"
                               ".dispatchEvent(new Event('input'))")
        assert shown() == {"a.md", "b.md"}
        # a flagged row is shaded, an unflagged one not; the invented year is tagged, visibly
        card = cards["a.md"]

        def background(path: str) -> str:
            cell = card.find_element(By.CSS_SELECTOR, f'tr[data-field="{path}"] td.val')
            return str(browser.execute_script(
                "return getComputedStyle(arguments[0]).backgroundColor", cell))

        assert background("copyright") != background("license_heading")
        tag = card.find_element(By.CSS_SELECTOR, 'tr[data-field="first_year"] .tag.nodoc')
        assert tag.is_displayed() and tag.text == "not in the document"
        browser.find_element(By.CSS_SELECTOR, 'button[data-filter="ok"]').click()
        assert shown() == {"a.md", "clean.md", "b.md"}
        browser.find_element(By.CSS_SELECTOR, 'button[data-filter="all"]').click()
        assert shown() == set(cards)
        # the page fetched nothing: no resource besides the file itself
        assert browser.execute_script(
            "return performance.getEntriesByType('resource').length") == 0
