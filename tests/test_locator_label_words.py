"""A label is its whole words, and the word after a value is a whole token
(the newcomer's session-21 probe): two examples writing ``SPDX-License-Identifier: ``
after ``# `` and after ``// `` learn that label, not the ``: `` every
``key: value`` line writes (``# encoding: utf-8`` read as a license, sure); a
value's end learned before ``bookworm`` is not one before ``bookworm-backports``."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import REVIEW_BELOW
from agentflow.grounding.lines import word_after
from agentflow.grounding.locator_places import right_end, shared_label
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples
from tests.locator_support import run_one


class Header(BaseModel):
    license: str | None = None


HEADERS = [
    Example("#!/usr/bin/env python3\n# SPDX-License-Identifier: Apache-2.0\n"
            "# Copyright 2019 Acme Ltd.\nimport os\n", Header(license="Apache-2.0")),
    Example("// SPDX-License-Identifier: MIT\n/*\n * Copyright (c) 2015 Jane Doe\n */\n"
            "#include <stdio.h>\n", Header(license="MIT")),
]
CODING = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# encoding: utf-8\n\"\"\"A tool.\"\"\"\n"


def test_an_unanchored_label_keeps_its_whole_words() -> None:
    rule = learn_locators(check_examples(HEADERS, Header), Header)["license"]
    assert (rule.left, rule.anchored) == ("SPDX-License-Identifier: ", False)
    assert rule.values(CODING) == []  # no ``key: value`` line is the label's
    assert rule.values("/*\n * SPDX-License-Identifier: BSD-3-Clause\n */\n") == ["BSD-3-Clause"]
    assert rule.values("# XSPDX-License-Identifier: MIT\n") == []  # its first word whole
    result = run_one({"license": "utf-8"}, CODING, Header, HEADERS)
    assert result.ok and "license" in result.needs_review


def test_the_shared_label_is_whole_only_where_the_lines_differ_in_punctuation() -> None:
    assert shared_label(["# SPDX-License-Identifier: ", "// SPDX-License-Identifier: "]) == (
        "SPDX-License-Identifier: ")
    assert shared_label(["  * SPDX-License-Identifier: ", "SPDX-License-Identifier: "]) == (
        "SPDX-License-Identifier: ")
    assert shared_label(["barbaz (", "foobaz ("]) == " ("  # ``baz`` ends other words
    assert shared_label(["barbaz (", "quux ("]) == " ("
    assert shared_label(["Friday 12 July 2024, ", "Saturday 3 February 2024, "]) == ", "
    assert shared_label(["ORGANIZER;CN=Jane Doe:mailto:", "ORGANIZER;CN=Bob Smith:mailto:"]) == (
        ":")  # the line's key (``ATTENDEE`` is another) is no part of ``mailto:``
    assert shared_label(["were discovered in ", "a use-after-free in "]) == " "  # prose
    assert shared_label(["# one two three:", "// one two three:"], 8) == ":"  # too long


def test_a_key_separator_without_its_key_is_no_label() -> None:
    shown = [Example("# License: Apache-2.0\n# (c) Ann\n", Header(license="Apache-2.0")),
             Example("// Licence: MIT\n// (c) Bo\n", Header(license="MIT"))]
    checked = check_examples(shown, Header)
    assert "license" not in learn_locators(checked, Header)  # not ``: `` of any key
    (line,) = learned_lines(learn_locators(checked, Header), checked, Header)
    assert line.startswith("no rule: license")


def test_the_word_after_a_value_is_a_whole_token() -> None:
    assert word_after(",bookworm-backports,", 1) == "bookworm-backports"
    assert word_after(", see LICENSE.", 1) == "see"
    assert word_after(" MIT-0 ", 0) == "mit-0" and word_after(" v2.0-rc1;", 0) == "v2.0-rc1"
    assert right_end("12,bookworm-backports,x", 0, ",", "bookworm") == -1
    assert right_end("12,bookworm-backports,x,Bookworm,", 0, ",", "bookworm") == 23


class Row(BaseModel):
    codename: str


ROWS = [
    Example("version,codename,series\n11,Bullseye,bullseye\n12,Bookworm,bookworm\n",
            Row(codename="Bookworm")),
    Example("version,codename,series,created\n12,Bookworm,bookworm,2021-08-14\n",
            Row(codename="Bookworm")),
]


def test_a_value_ends_only_before_the_whole_next_token() -> None:
    rule = learn_locators(check_examples(ROWS, Row), Row)["codename"]
    assert rule.right_word == "bookworm"
    assert rule.values("version,codename,series\n12,Bookworm,bookworm,2021-08-14\n") == [
        "Bookworm"]
    backports = "version,codename,series\n12,Bookworm,bookworm-backports,2023-06-10\n"
    assert rule.values(backports) == []
    result = run_one({"codename": "Bookworm"}, backports, Row, ROWS)
    assert result.ok and result.confidence["codename"] < REVIEW_BELOW


class Release(BaseModel):
    version: str | None = None
    codename: str | None = None


RELEASES = [  # the bookworm row both times: every cell of it the same in each example
    Example("version,codename,series,created\n11,Bullseye,bullseye,2019-07-06\n"
            "12,Bookworm,bookworm,2021-08-14\n", Release(version="12", codename="Bookworm")),
    Example("version,codename,series,created,eol\n12,Bookworm,bookworm,2021-08-14,2026-06-10\n"
            "13,Trixie,trixie,2023-06-10\n", Release(version="12", codename="Bookworm")),
]
TABLE = "| version | codename | series |\n|---|---|---|\n"
PIPES = [  # the same kind in a Markdown table
    Example(TABLE + "| 11 | Bullseye | bullseye |\n| 12 | Bookworm | bookworm |\n",
            Release(version="12", codename="Bookworm")),
    Example(TABLE + "| 12 | Bookworm | bookworm |\n| 13 | Trixie | trixie |\n",
            Release(version="12", codename="Bookworm")),
]


def test_a_row_every_example_picks_is_sure_only_where_a_line_writes_all_its_cells() -> None:
    rules = learn_locators(check_examples(RELEASES, Release), Release)
    # the version's end is learned before the codename cell (``Bookworm``), which the
    # examples cannot tell from the series: the rule keeps their shared cells
    assert rules["version"].right_word == "bookworm" and rules["version"].row == (
        "", ",Bookworm,bookworm,2021-08-14")
    assert rules["version"].describe().endswith(
        "(every example's line writes ',Bookworm,bookworm,2021-08-14' after it: where a line "
        "does not, unpinned)")
    backports = "version,codename,series,created\n12,Bookworm,bookworm-backports,2023-06-10\n"
    assert rules["version"].values(backports) == ["12"]
    result = run_one({"version": "12", "codename": "Bookworm"}, backports, Release, RELEASES)
    assert result.ok and {"version", "codename"} <= set(result.needs_review)
    row = "version,codename,series,created\n12,Bookworm,bookworm,2021-08-14\n14,Forky,forky\n"
    result = run_one({"version": "12", "codename": "Bookworm"}, row, Release, RELEASES)
    assert result.ok and not result.needs_review, result.confidence
    rules = learn_locators(check_examples(PIPES, Release), Release)
    assert rules["version"].row and rules["codename"].row
    wrong = TABLE + "| 12 | Bookworm | bookworm-security |\n"
    result = run_one({"version": "12", "codename": "Bookworm"}, wrong, Release, PIPES)
    assert result.ok and {"version", "codename"} <= set(result.needs_review), result.confidence


def test_a_context_of_values_the_examples_vary_keeps_no_row() -> None:
    shown = [Example("version,codename\n11,Bullseye\n", Release(version="11", codename="Bullseye")),
             Example("version,codename\n12,Bookworm\n", Release(version="12", codename="Bookworm"))]
    assert all(not r.row for r in learn_locators(check_examples(shown, Release), Release).values())
