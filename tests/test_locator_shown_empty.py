"""Nulls the document shows (newcomer20 probe, finding 5): a label closed
empty on its line (a gettext header's ``"Language: \\n"``) is a sure null,
however the line is quoted and whatever the next line holds; and a grouped
rule's group written with nothing but the examples' keys (a ``setup.cfg``
``[metadata]`` holding only ``license_files``) shows its field empty. Before,
both nulls scored 0.7: the quoted label line read as the key *mentioned*,
and a flat layout no example leaves the field empty in never gave a sure
null. Still unsure: the key written anywhere else (a body ``msgid
"Language: %s\\n"``, another group, a comment), an unknown key in the group
that could hold the value (``summary =`` for a description), a document
without the group."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import ABSENT, UNLOCATED_NULL, field_confidence
from agentflow.grounding.locator_absence import absence_confirmed, absence_shown
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples
from tests.locator_support import PoHeader, po_example

PO = [po_example("hello 2.10", "Italian <tp@lists.linux.it>", "it", message=("Hello", "Ciao")),
      po_example("tinyedit 0.4", "Polish team", "pl", message=("Open", "Otwórz"))]


def _null(rules: dict[str, object], field: str, doc: str, model: type[BaseModel]) -> float:
    return field_confidence(model(), doc, {}, rules)[0][field]  # type: ignore[arg-type]


def test_a_label_closed_empty_on_its_quoted_line_is_a_sure_null() -> None:
    rules = dict(learn_locators(check_examples(PO, PoHeader), PoHeader))
    doc = ('msgid ""\nmsgstr "Project-Id-Version: sampler 1.1\\n"\n"Language-Team: \\n"\n'
           '"Language: \\n"\n"Plural-Forms: nplurals=2;\\n"\n')
    for field in ("team", "language"):  # (team's next line is no key line: still empty)
        assert absence_shown(rules[field], doc) and absence_confirmed(rules[field], doc)  # type: ignore[arg-type]
        assert _null(rules, field, doc, PoHeader) == ABSENT


def test_the_key_written_on_another_line_keeps_the_null_unsure() -> None:
    rules = dict(learn_locators(check_examples(PO, PoHeader), PoHeader))
    body = '\nmsgid "Language: %s\\n"\nmsgstr "Sprache: %s\\n"\n'
    unwritten = 'msgid ""\nmsgstr ""\n"Project-Id-Version: x 1\\n"\n"MIME-Version: 1.0\\n"\n'
    assert _null(rules, "language", unwritten + body, PoHeader) == UNLOCATED_NULL
    empty = 'msgid ""\nmsgstr ""\n"Language: \\n"\n"MIME-Version: 1.0\\n"\n'
    assert _null(rules, "language", empty, PoHeader) == ABSENT
    assert _null(rules, "language", empty + body, PoHeader) == UNLOCATED_NULL


class Meta(BaseModel):
    name: str | None = None
    author: str | None = None
    description: str | None = None


CFG = [Example("[metadata]\nname = widgetlib\nauthor = Jane Roe\ndescription = Small widgets\n"
               "license_files = LICENSE\n\n[options]\npackages = find:\n\n[flake8]\n"
               "max-line-length = 100\n",
               Meta(name="widgetlib", author="Jane Roe", description="Small widgets")),
       Example("[bdist_wheel]\nuniversal = 1\n\n[metadata]\ndescription = A tiny HTTP client\n"
               "name = tinyhttp\nauthor = Li Wei\n",
               Meta(name="tinyhttp", author="Li Wei", description="A tiny HTTP client"))]


def test_a_group_with_only_the_examples_keys_shows_its_fields_empty() -> None:
    rules = dict(learn_locators(check_examples(CFG, Meta), Meta))
    assert all(r.group == "[metadata]" for r in rules.values())  # type: ignore[attr-defined]
    doc = "[metadata]\nlicense_files = LICENSE\n\n[pycodestyle]\ncount = False\n"
    for field in ("name", "author", "description"):
        assert absence_shown(rules[field], doc)  # type: ignore[arg-type]
        assert _null(rules, field, doc, Meta) == ABSENT


def test_a_group_null_stays_unsure_where_the_value_may_be() -> None:
    rules = dict(learn_locators(check_examples(CFG, Meta), Meta))
    other = "[metadata]\nname = mock\nsummary = Rolling backport of unittest.mock\n"
    assert _null(rules, "description", other, Meta) == UNLOCATED_NULL  # another spelling
    moved = "[metadata]\nname = x\n\n[options]\nauthor = Ann Lee\n"
    assert _null(rules, "author", moved, Meta) == UNLOCATED_NULL  # the key in another group
    commented = "[metadata]\nname = x\n# author = Old Author\n"
    assert _null(rules, "author", commented, Meta) == UNLOCATED_NULL
    no_group = "[flake8]\nmax-line-length = 100\n\n[bdist_wheel]\nuniversal = 1\n"
    assert not absence_confirmed(rules["name"], no_group)  # type: ignore[arg-type]
    assert _null(rules, "name", no_group, Meta) == UNLOCATED_NULL
