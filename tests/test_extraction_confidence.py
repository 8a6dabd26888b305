"""Confidence per field and the honest ``ok`` (issue 30): each field of an ok
result gets a confidence from what the framework can check (a learned
locator, grounding, the same number or date in the text), and the records,
the progress line, the summary and the review page count an ok record with
a low-confidence field as *needs review*, naming the field."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Annotated, Any

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.cli.progress import Progress
from agentflow.extraction.confidence import (
    ABSENT,
    DISAGREES,
    GROUNDED,
    HELD,
    UNCHECKED,
    UNLOCATED_NULL,
    field_confidence,
)
from agentflow.extraction.records import to_record
from agentflow.extraction.report import render_report
from agentflow.grounding.locators import learn_locators
from agentflow.grounding.marker import Derived
from agentflow.grounding.typed_values import found_in
from agentflow.output.examples import check_examples
from agentflow.testing import FunctionModel, RecordedRequest


class Pkg(BaseModel):
    name: str | None = Field(None, description="the package name")
    homepage: str | None = Field(None, description="the homepage")
    size: int | None = None
    released: dt.date | None = None
    note: Annotated[str | None, Derived()] = None


EXAMPLES = [
    Example("Package: frob\nHomepage: https://frob.example/\nSize: 12\n",
            Pkg(name="frob", homepage="https://frob.example/", size=12)),
    Example("Package: quux\nSize: 3\n", Pkg(name="quux", size=3)),
]

DOC = "Package: acme\nSize: 1,200\nReleased on 5 March 2024.\nSee https://acme.example/ too.\n"
PLAIN = "Package: acme\nSize: 1,200\n"  # nothing but the examples' layout


def test_found_in_reads_numbers_dates_and_labels_by_value() -> None:
    assert found_in(1200, DOC) and found_in(1200.0, DOC) and not found_in(120, DOC)
    assert found_in(dt.date(2024, 3, 5), DOC) and not found_in(dt.date(2024, 5, 3), DOC)
    assert found_in(dt.date(2024, 3, 5), "on 05.03.2024") and found_in(
        dt.datetime(2024, 3, 5, 9), "2024-03-05T09:00")
    assert found_in("ACME", DOC) and not found_in("acm", DOC)
    assert not found_in(True, "true") and not found_in(None, DOC)


def test_each_field_gets_a_confidence_from_what_was_checked() -> None:
    locators = learn_locators(check_examples(EXAMPLES, Pkg), Pkg)
    assert set(locators) == {"name", "homepage", "size"} and locators["size"].number  # after
    # its key (``Size: 12``); DOC writes ``1,200``: another convention, scored by grounding
    out = Pkg(name="acme", homepage=None, size=1200, released=dt.date(2024, 3, 5), note="x")
    confidence, ungrounded = field_confidence(out, DOC, {"name": [(9, 13)]}, locators)
    # DOC writes prose the examples' layout does not (its homepage is there): no sure null
    assert confidence == {"name": HELD, "homepage": UNLOCATED_NULL, "size": GROUNDED,
                          "released": GROUNDED, "note": UNCHECKED}
    assert ungrounded == ["note"]
    plain = Pkg(name="acme", homepage=None, size=1200)
    confidence, _ = field_confidence(plain, PLAIN, {"name": [(9, 13)]}, locators)
    assert confidence["homepage"] == ABSENT  # the examples' layout alone: a sure null
    # other keys and prose, with nothing shaped like a homepage (``https://x.example/``)
    other = PLAIN + "Summary: Frobs widgets.\nRequires-Python: >=3.9\n"
    confidence, _ = field_confidence(plain, other, {"name": [(9, 13)]}, locators)
    assert confidence["homepage"] == ABSENT
    wrong = Pkg(name="acme", homepage="https://acme.example/", size=7)
    confidence, ungrounded = field_confidence(wrong, DOC, {"name": [(9, 13)]}, locators)
    assert confidence["homepage"] == DISAGREES  # the locator finds no Homepage line
    assert confidence["size"] == UNCHECKED and ungrounded == ["size"]


class Card(BaseModel):
    name: str | None = Field(None, description="the package name")
    homepage: str | None = Field(None, description="the homepage")


CARDS = [Example("Package: frob\nHomepage: https://frob.example/\n",
                 Card(name="frob", homepage="https://frob.example/")),
         Example("Package: quux\nSize: 3\n", Card(name="quux"))]


async def test_results_records_progress_summary_and_page_name_the_fields_to_review() -> None:
    replies = iter([{"name": "acme", "homepage": None},
                    {"name": "acme", "homepage": "https://acme.example/"}])

    def answer(request: RecordedRequest) -> str:
        return json.dumps(next(replies))

    results = [r async for r in extract_many(FunctionModel(answer), [PLAIN, DOC], Card,
                                             examples=CARDS, concurrency=1)]
    assert [r.ok for r in results] == [True, True]
    assert results[0].needs_review == ()  # every field checked and confident
    assert results[1].needs_review == ("homepage",)  # copied, but not where examples put it
    records = [to_record(r) for r in results]
    assert records[1]["needs_review"] == ["homepage"]
    assert records[1]["confidence"]["homepage"] == DISAGREES
    stream = io.StringIO()
    progress = Progress(2, stream)
    for record in records:
        progress.add(record)
    assert "ok 2 · failed 0 · suspect 0 · review 1" in progress.line()
    assert progress.review_note() == "; 1 ok needs review (homepage 1)"
    page = render_report(records, {"0": PLAIN, "1": DOC})
    assert "needs review (of ok)" in page and "low confidence in homepage" in page


def test_progress_line_is_unchanged_without_review() -> None:
    progress = Progress(1, io.StringIO())
    record: dict[str, Any] = {"id": "a", "ok": True, "needs_review": []}
    progress.add(record)
    assert "ok 1 · failed 0" in progress.line() and progress.review_note() == ""


def test_a_key_in_another_letter_case_is_located_and_a_mentioned_key_is_no_sure_null() -> None:
    locators = learn_locators(check_examples(CARDS, Card), Card)
    rule = locators["homepage"]
    assert rule.values("HOMEPAGE: https://a.example/\n") == ["https://a.example/"]
    confidence, _ = field_confidence(Card(name="acme"), "Package: acme\nSee the homepage.\n", {},
                                     locators)
    assert confidence["homepage"] < 0.9  # the key is mentioned: the null needs a look
    confidence, _ = field_confidence(Card(name="acme"), "Package: acme\n", {}, locators)
    assert confidence["homepage"] == ABSENT


class Deps(BaseModel):
    name: str | None = Field(None, description="the package name")
    requires: str | None = Field(None, description="public dependencies (Requires:)")
    libs: str | None = Field(None, description="linker flags (Libs:)")


DEPS = [Example("Name: a\nRequires: gmp\nLibs: -la\n", Deps(name="a", requires="gmp", libs="-la")),
        Example("Name: b\nRequires.private: zlib\nLibs: -lb\n", Deps(name="b", libs="-lb"))]


def test_an_empty_label_or_only_a_longer_key_is_evidence_for_null() -> None:
    locators = learn_locators(check_examples(DEPS, Deps), Deps)
    assert {"requires", "libs"} <= set(locators)
    null = Deps(name="x")
    for doc in ("Name: x\nRequires:\nLibs:  \n",  # the labels, with nothing after them
                "Name: x\nRequires.private: zlib\nLibs.private: -lm\n",  # longer keys only
                "Name: x\nRequires: \n",  # an empty label; no Libs line at all
                "Name: x\nRequires.private: libssl libcrypto\n"):  # 'libs' only inside words
        confidence, _ = field_confidence(null, doc, {}, locators)
        # requires: an example leaves it out (b), so its missing label is how its absence
        # looks; libs: no example shows it absent, so only its empty label is sure
        assert confidence["requires"] == ABSENT, doc
        assert confidence["libs"] == (ABSENT if "Libs:" in doc else UNLOCATED_NULL), doc
    # the key written with a value the locator does not read: the null needs a look
    for doc in ("Name: x\nRequires = gmp\n", "Name: x\nIt requires gmp and links with Libs.\n"):
        confidence, _ = field_confidence(null, doc, {}, locators)
        assert confidence["requires"] < 0.9, doc
