"""A key the document does not write (newcomer18 probe, finding 7): a field
one example leaves empty got no rule where the other writes its key after a
list marker or before a quote (``- cron: '30 2 * * *'``), so every value was
flagged; a manifest that does not write ``license`` was offered any span of
its text (junk such as ``path`` at 0.6) because one example's dependency
names counted as the layout a document must share; a list label ending in
a quote (``authors = ["``) was not taken as written when the document
closed its array otherwise (``",]``), so the grammar could force its null."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import ABSENT, HELD, field_confidence
from agentflow.grounding.locator_absence import absence_confirmed, absence_shown
from agentflow.grounding.locator_twins import key_label
from tests.locator_support import learned_rules


class Flow(BaseModel):
    name: str | None = None
    cron: str | None = Field(None, description="the first cron schedule")


FLOWS = [
    Example("name: Tests\non:\n  push:\njobs:\n  test:\n    runs-on: ubuntu-22.04\n"
            "    steps:\n      - run: make test\n", Flow(name="Tests", cron=None)),
    Example("name: Nightly\non:\n  schedule:\n    - cron: '30 2 * * *'\njobs:\n  build:\n"
            "    runs-on: ubuntu-latest\n    steps:\n      - run: ./build.sh\n",
            Flow(name="Nightly", cron="30 2 * * *")),
]


def test_a_key_after_a_list_marker_or_before_a_quote_is_a_label() -> None:
    assert key_label("- cron: '", "'")
    assert key_label('journal = {', '},')
    assert key_label("Version: ", "")
    assert not key_label("- cron: '", "")  # a quote nothing closes
    assert not key_label("(see ", ")")


def test_one_example_teaches_the_rule_the_other_leaves_empty() -> None:
    rule = learned_rules(FLOWS, Flow)["cron"]
    assert rule.shown_empty
    doc = ("name: Weekly\non:\n  schedule:\n    - cron: \"0 8 * * 1\"\njobs:\n  report:\n"
           "    runs-on: ubuntu-latest\n    steps:\n      - run: ./report.sh\n")
    assert rule.values(doc) == ["0 8 * * 1"]
    out = Flow(name="Weekly", cron="0 8 * * 1")
    assert field_confidence(out, doc, {}, {"cron": rule})[0]["cron"] == HELD
    none = "name: Lint\non:\n  push:\njobs:\n  lint:\n    runs-on: ubuntu-latest\n"
    assert absence_confirmed(rule, none)
    out = Flow(name="Lint", cron=None)
    assert field_confidence(out, none, {}, {"cron": rule})[0]["cron"] == ABSENT


class Crate(BaseModel):
    name: str | None = None
    version: str | None = None
    license: str | None = None
    authors: list[str] = Field(default_factory=list)


CRATES = [
    Example('[package]\nname = "tidy"\nversion = "0.3.2"\nauthors = ["Ana <a@x.org>"]\n'
            'license = "MIT"\n\n[dependencies]\ncsv = "1.3"\nserde = "1.0"\nregex = "1"\n'
            'tempfile = "3"\n', Crate(name="tidy", version="0.3.2", license="MIT",
                                      authors=["Ana <a@x.org>"])),
    Example('[package]\nname = "rgb"\nlicense = "Zlib"\nversion = "1.0.0"\n'
            'authors = ["Tom <t@x.org>"]\n\n[lib]\npath = "src/lib.rs"\n\n[dependencies]\n'
            'embedded-hal = "0.2"\nnb = "1"\n', Crate(name="rgb", version="1.0.0", license="Zlib",
                                                 authors=["Tom <t@x.org>"])),
]


def test_a_document_sharing_every_examples_keys_shows_an_unwritten_key_empty() -> None:
    rules = learned_rules(CRATES, Crate)
    rule = rules["license"]
    assert {"name", "version", "authors", "license"} <= set(rule.skeleton)
    assert "csv" not in rule.skeleton and "csv" in rule.layout
    doc = ('[package]\nname = "tool"\nversion = "0.1.0"\nauthors = ["Kim <k@x.org>"]\n\n'
           '[dependencies]\nclap = "4"\nanyhow = "1"\n')
    assert rule.values(doc) == []
    assert absence_shown(rule, doc)  # the grammar offers only null, no span of the text
    prose = "The tool crate, version 0.1.0, is MIT licensed.\n"
    assert not absence_shown(rule, prose)


def test_a_list_label_ending_in_a_quote_is_written_however_the_array_closes() -> None:
    rule = learned_rules(CRATES, Crate)["authors"]
    assert rule.key == "authors"
    doc = '[package]\nname = "many"\nversion = "2.0.0"\nauthors = ["Ada <ada@x.org>",]\n'
    assert rule.label_written(doc)
    assert not absence_shown(rule, doc)
