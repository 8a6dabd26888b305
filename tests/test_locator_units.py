"""A value's kind and end, not its examples' letter (the session-19 newcomer's
probe, findings 5 and 6): a quoted value ends at its closing quote, whatever
the examples write after it (``",`` before the next key; a JSON object's last
key writes none), and whatever the string holds is its own (a bracketed note,
several words); an opener inside an array's bracket is a label's opener
(``license=("GPL")`` for ``license=('MIT')``); a bracket written inside a word
(``%{name}``) is no bracketed note; and more words after a label, of the
kinds of characters the examples' values hold, are the line's value
(``GPL-2.0-or-later AND GPL-3.0-only`` for ``MIT``, ``GPLv2+``), never
words of another kind (``1.2 beta`` for ``1.4.2``)."""

from __future__ import annotations

import dataclasses

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.locators import learn_locators
from agentflow.grounding.token_shapes import same_kinds
from agentflow.grounding.value_clauses import clause_break, comment_tail
from agentflow.output.examples import check_examples


class Package(BaseModel):
    name: str | None = Field(None, description="the name")
    description: str | None = Field(None, description="the description")
    license: str | None = Field(None, description="the license")


PACKAGES = [
    Example('{\n  "name": "tiny-queue",\n  "description": "A tiny FIFO queue",\n'
            '  "license": "MIT",\n  "main": "queue.js"\n}\n',
            Package(name="tiny-queue", description="A tiny FIFO queue", license="MIT")),
    Example('{\n  "name": "left-pad",\n  "description": "Pad a string on the left",\n'
            '  "license": "ISC",\n  "version": "1.3.0"\n}\n',
            Package(name="left-pad", description="Pad a string on the left", license="ISC")),
]


def _confidence(doc: str, **values: str | None) -> dict[str, float]:
    rules = learn_locators(check_examples(PACKAGES, Package), Package)
    return field_confidence(Package(**values), doc, {}, rules)[0]


def test_a_quoted_value_ends_at_its_closing_quote() -> None:
    rules = learn_locators(check_examples(PACKAGES, Package), Package)
    assert rules["license"].right == '"' and "up to '\"'" in rules["license"].describe()
    last = '{\n  "name": "q",\n  "description": "A queue",\n  "license": "BSD-2-Clause"\n}\n'
    assert rules["license"].values(last) == ["BSD-2-Clause"]  # the object's last key
    assert _confidence(last, name="q", description="A queue", license="BSD-2-Clause")[
        "license"] == HELD
    escaped = '{\n  "name": "q",\n  "description": "Say \\"hi\\", then go",\n}\n'
    # escaped quotes: the value ends at the closing quote, read as JSON reads it
    assert rules["description"].values(escaped) == ['Say "hi", then go']


def test_whatever_a_quoted_value_holds_is_its_own() -> None:
    # no example's description holds a bracket: a line's rest would not be pinned with
    # one, but the quotes bound this one
    doc = ('{\n  "name": "aproba",\n  "description": "A light argument validator (now '
           'browser friendly); tiny",\n  "license": "ISC",\n}\n')
    value = "A light argument validator (now browser friendly); tiny"
    assert _confidence(doc, name="aproba", description=value, license="ISC")[
        "description"] == HELD


class Build(BaseModel):
    pkgname: str | None = None
    license: str | None = None


BUILDS = [
    Example("pkgname=tidyclip\npkgver=1.0\nlicense=('MIT')\narch=('x86_64')\n",
            Build(pkgname="tidyclip", license="MIT")),
    Example("pkgname=quickplot\npkgver=2.1\nlicense=('GPL-3.0-or-later')\narch=('any')\n",
            Build(pkgname="quickplot", license="GPL-3.0-or-later")),
]


def test_an_array_of_one_quoted_value_is_read_with_either_quote() -> None:
    rule = learn_locators(check_examples(BUILDS, Build), Build)["license"]
    assert rule.values('pkgname=x\nlicense=("custom:Proprietary")\n') == ["custom:Proprietary"]
    assert rule.values("pkgname=x\nlicense = ( 'MIT' )\n") == ["MIT"]
    assert rule.values("pkgname=x\nlicense=(MIT)\n") == []  # unquoted: not the examples' end


class Spec(BaseModel):
    name: str | None = None
    version: str | None = None
    license: str | None = None
    url: str | None = None


SPECS = [
    Example("Name:     tinyhttp\nVersion:  1.4.2\nLicense:  MIT\n"
            "URL:      https://github.com/example/tinyhttp\n",
            Spec(name="tinyhttp", version="1.4.2", license="MIT",
                 url="https://github.com/example/tinyhttp")),
    Example("Name: logwatcher\nVersion: 0.9\nLicense: GPLv2+\nURL: http://logwatcher.example.net/\n",
            Spec(name="logwatcher", version="0.9", license="GPLv2+",
                 url="http://logwatcher.example.net/")),
]


def _spec(doc: str) -> dict[str, float]:
    rules = learn_locators(check_examples(SPECS, Spec), Spec)
    values = {name: (rule.values(doc) or [None])[0] for name, rule in rules.items()}
    return field_confidence(Spec(**values), doc, {}, rules)[0]


def test_more_words_of_the_examples_kinds_are_the_line_value() -> None:
    doc = "Name: libfaketime\nVersion: 0.9.12\nLicense: GPL-2.0-or-later AND GPL-3.0-only\n"
    assert _spec(doc)["license"] == HELD
    # a word of another kind than every example's value holds: read past the value
    assert _spec("Name: frob\nVersion: 1.2 beta\nLicense: MIT\n")["version"] < REVIEW_BELOW
    assert same_kinds("GPL-2.0-or-later AND GPL-3.0-only", ["a", "a0+"])
    assert not same_kinds("builtin 0.006", ["a:"]) and not same_kinds("x", [])


def test_more_words_in_another_syntax_are_not_pinned() -> None:
    # a shell array of two names where every example's pkgname= is one bare word
    rules = learn_locators(check_examples(BUILDS, Build), Build)
    doc = "pkgname=('mdtool' 'mdtool-docs')\npkgver=1.0\nlicense=('MIT')\n"
    assert rules["pkgname"].values(doc) == ["('mdtool' 'mdtool-docs')"]
    confidence = field_confidence(Build(pkgname="('mdtool' 'mdtool-docs')", license="MIT"), doc,
                                  {}, rules)[0]
    assert confidence["pkgname"] < REVIEW_BELOW and confidence["license"] == HELD


def test_a_bracket_inside_a_word_is_no_clause() -> None:
    doc = "Name: R-CRAN-x\nVersion: 2.2\nURL: https://cran.r-project.org/package=%{packname}\n"
    assert _spec(doc)["url"] == HELD
    assert not clause_break("https://x.org/package=%{packname}") and not clause_break("f(x)")
    assert clause_break("20 May 2024 (rescheduled)") and clause_break("A tool {beta}")
    assert _spec("Name: x\nVersion: 2.2\nURL: https://x.org/ (mirror)\n")["url"] < REVIEW_BELOW


class Memo(BaseModel):
    number: str | None = None
    obsoletes: str | None = None


MEMOS = [
    Example("Request for Comments: 9876" + " " * 30 + "Example Corp\n"
            "Obsoletes: 4321" + " " * 49 + "B. Sample\n",
            Memo(number="9876", obsoletes="4321")),
    Example("Request for Comments: 3456" + " " * 12 + "Acme Labs\n", Memo(number="3456")),
]


def test_a_column_gap_is_layout_however_wide() -> None:
    rule = learn_locators(check_examples(MEMOS, Memo), Memo)["obsoletes"]
    assert not rule.right.strip() and rule.right_word == ""  # the next column is no end
    assert "up to a column gap" in rule.describe()
    doc = ("Request for Comments: 3986" + " " * 20 + "W3C/MIT\n"
           "Obsoletes: 2732, 2396, 1808" + " " * 34 + "L. Masinter\n")
    assert rule.values(doc) == ["2732, 2396, 1808"]  # one blank inside, a gap after
    confidence = field_confidence(Memo(number="3986", obsoletes="2732, 2396, 1808"), doc, {},
                                  {"obsoletes": rule})[0]
    assert confidence["obsoletes"] == HELD  # the rest of its column, numbers like 4321
    assert rule.values("Obsoletes: 2732 L. Masinter\n") == []  # no gap: no end


class Header(BaseModel):
    license: str | None = None


HEADERS = [Example("#!/usr/bin/env python3\n# SPDX-License-Identifier: Apache-2.0\nimport os\n",
                   Header(license="Apache-2.0")),
           Example("// SPDX-License-Identifier: MIT\n#include <stdio.h>\n", Header(license="MIT"))]


def test_more_words_after_a_key_written_inside_its_line_are_the_value() -> None:
    """The examples' SPDX lines begin with ``# `` and ``// ``: the key is written
    inside the line, after the comment's marker (its rule: after
    ``SPDX-License-Identifier: ``, unanchored). ``Apache-2.0 OR MIT`` is that
    line's value (newcomer21 probe, finding 7); a C comment's ``*/`` read with
    it is not."""
    learned = learn_locators(check_examples(HEADERS, Header), Header)["license"]
    rule = dataclasses.replace(learned, left="SPDX-License-Identifier: ", anchored=False)
    assert not rule.labelled and rule.values("# SPDX-License-Identifier: Apache-2.0 OR MIT\n") == [
        "Apache-2.0 OR MIT"]
    assert rule.pins("Apache-2.0 OR MIT") and rule.pins("MIT")
    assert not rule.pins("GPL-2.0 WITH Linux-syscall-note */")  # the comment's closer
    assert not rule.pins("Apache-2.0 WITH LLVM-exception      *|")  # a box comment's border
    assert rule.pins("Apache-2.0 WITH LLVM-exception")
    assert not rule.pins("MIT builtin 0.006")  # a word of another kind
    assert not dataclasses.replace(rule, left=": ").pins("Apache-2.0 OR MIT")  # no key
    assert comment_tail("GPL-2.0 */") and comment_tail("MIT -->") and not comment_tail("*/")
    assert not comment_tail("/usr/lib/*/x")
