"""A value one example also writes earlier, and a label's other separator
(newcomer20 probe, finding 4). A gettext header writes each key inside a
quoted string up to an escape (``"Language-Team: Polish\\n"``); the example
that also names ``Polish`` in its first comment taught no rule, since the
label's place, its value glued to ``\\n``, was not a place at all (all 15 .po
records flagged ``Language-Team``, and the log said "no common place"). An
INI label the examples write ``name = `` is also written ``name: quux``
(configparser reads both): it was read nowhere, every field flagged."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD, field_confidence
from agentflow.grounding.locator_places import places_at
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples
from tests.locator_support import PoHeader, po_catalogue, po_example

EXAMPLES = [po_example("hello 2.10", "Italian <tp@lists.linux.it>", "it",
                       comment="Italian translation of hello.", message=("Hello", "Ciao")),
            po_example("tinyedit 0.4", "Polish", "pl", comment="Polish translations for tinyedit.",
                       message=("Open", "Otwórz"))]
IT, PL = (example.text for example in EXAMPLES)
DE = po_catalogue("ndisc6 1.0", "German <de@li.org>", "de", comment="German translation.")


def test_a_value_before_an_escape_in_a_quoted_key_line_is_a_place() -> None:
    places = places_at("Polish", PL)
    assert [p.before for p in places] == ["# ", '"Language-Team: ']
    assert places[1].after == '\\n"'
    # only right after the line's key: a value inside another word is no place
    text = '# Pol\n"Language-Team: Polish\\n"\n'
    assert [p.before for p in places_at("Pol", text)] == ["# "]


def test_a_value_one_example_writes_earlier_still_teaches_its_label() -> None:
    examples = check_examples(EXAMPLES, PoHeader)
    rules = learn_locators(examples, PoHeader)
    rule = rules["team"]
    assert rule.left == '"Language-Team: ' and rule.anchored
    assert rule.values(DE) == ["German <de@li.org>"]
    output = PoHeader(team="German <de@li.org>", language="de")
    assert field_confidence(output, DE, {}, rules)[0]["team"] == HELD
    assert learned_lines(rules, examples, PoHeader)[0].startswith(
        "learned: team: at the start of a line after '\"Language-Team: '")


def test_the_no_rule_line_says_where_each_example_writes_the_value() -> None:
    prose = ("# Polish translations for tinyedit, by the Polish team.\nmsgid \"\"\n"
             "msgstr \"\"\n\"Language: pl\\n\"\n")
    examples = check_examples([EXAMPLES[0], Example(prose, PoHeader(team="Polish", language="pl"))],
                              PoHeader)
    lines = learned_lines(learn_locators(examples, PoHeader), examples, PoHeader)
    assert lines[0] == ("no rule: team (the 2 examples filling it write it first after "
                        "'\"Language-Team: ' and after '# ': no common place that held on each)")


class Meta(BaseModel):
    name: str | None = None
    version: str | None = None
    license: str | None = None


CFG = [Example("[metadata]\nname = widgetlib\nversion = 2.4.1\nlicense = MIT\n\n[options]\n"
               "packages = find:\n", Meta(name="widgetlib", version="2.4.1", license="MIT")),
       Example("[metadata]\nversion = 0.9\nname = tinyhttp\nlicense = Apache-2.0\n",
               Meta(name="tinyhttp", version="0.9", license="Apache-2.0"))]


def test_a_spaced_equals_label_is_read_written_with_a_colon() -> None:
    rules = learn_locators(check_examples(CFG, Meta), Meta)
    doc = ("[metadata]\r\nname: quux\r\n# version = 0.1\r\nversion : 0.3.1\r\n"
           "classifiers =\r\n    License :: OSI Approved :: MIT License\r\n")
    assert rules["name"].values(doc) == ["quux"]
    assert rules["version"].values(doc) == ["0.3.1"]  # never the commented line
    assert rules["license"].values(doc) == []  # a classifier's "::" is no separator
    output = Meta(name="quux", version="0.3.1")
    assert field_confidence(output, doc, {}, rules)[0]["name"] == HELD


class Release(BaseModel):
    name: str | None = None


def test_an_unspaced_or_colon_label_keeps_its_separator() -> None:
    os_release = [Example('NAME=Debian\nID=debian\n', Release(name="Debian")),
                  Example('ID=arch\nNAME=Arch\n', Release(name="Arch"))]
    rule = learn_locators(check_examples(os_release, Release), Release)["name"]
    assert rule.values("ID=x\nNAME: Other\n") == []  # ``:`` is no separator of ``NAME=``
    control = [Example("Name: tidy\nVersion: 1\n", Release(name="tidy")),
               Example("Version: 2\nName: rgb\n", Release(name="rgb"))]
    rule = learn_locators(check_examples(control, Release), Release)["name"]
    assert rule.values("Version: 3\nName = other\n") == []  # nor ``=`` of ``Name: ``
