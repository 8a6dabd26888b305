"""A value's own punctuation is no separator (newcomer16 probes 1 and 3): a
right context the examples write as ``, see LICENSE for details.`` ends a
value only at the ``, `` that ``see`` follows (``Apache License, Version
2.0``), and a value whose ``:`` the rule reads to the line's end is never
sure in the clean form that drops it (``TODO list for 2.0:``)."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Module(BaseModel):
    name: str
    license: str | None = None


MODULES = [
    Example('"""\n    frob\n\n    :license: MIT, see LICENSE for details.\n"""\n',
            Module(name="frob", license="MIT")),
    Example('"""\n    quux\n\n    :license: Apache 2.0, see LICENSE for details.\n"""\n',
            Module(name="quux", license="Apache 2.0")),
]


def test_a_right_context_of_punctuation_ends_a_value_only_before_the_examples_next_word() -> None:
    rule = learn_locators(check_examples(MODULES, Module), Module)["license"]
    heso = ('"""\n    heso\n\n    :license: Apache License, Version 2.0, see LICENSE for '
            'more details.\n"""\n')
    gpl = '"""\n    g\n\n    :license: GNU GPL, version 2 or later, See COPYING.\n"""\n'
    assert rule.values(heso) == ["Apache License, Version 2.0"]
    assert rule.values(gpl) == ["GNU GPL, version 2 or later"]  # (letter case ignored)
    assert rule.right == ", " and rule.right_word == "see"
    # the whole word: ``seen`` is not ``see``
    assert rule.values(":license: BSD, seen as fine, see LICENSE\n") == ["BSD, seen as fine"]
    # a continuation no example writes: the rule cannot tell where the value
    # ends, so it reads nothing there and never pins the first ", "
    other = '"""\n    x\n\n    :license: Apache License, Version 2.0\n"""\n'
    assert rule.values(other) == []
    scores, _ = field_confidence(Module(name="x", license="Apache License"), other, {},
                                 {"license": rule})
    assert scores["license"] < REVIEW_BELOW
    scores, _ = field_confidence(Module(name="h", license="Apache License, Version 2.0"),
                                 heso, {}, {"license": rule})
    assert scores["license"] == HELD


def test_examples_that_write_different_words_after_the_right_context_learn_none() -> None:
    class Entry(BaseModel):
        dist: str

    shown = [Example("Dist: unstable; urgency=low\n", Entry(dist="unstable")),
             Example("Dist: stable; critical fix\n", Entry(dist="stable"))]
    rule = learn_locators(check_examples(shown, Entry), Entry)["dist"]
    # leave-one-out: a rule learned from one example alone (``; `` before
    # ``urgency``) is checked with the word all of them show (none), so the
    # other example's ``; critical`` does not make the label fail
    assert rule.right == "; " and rule.right_word == ""
    assert rule.values("Dist: experimental; urgency=high\n") == ["experimental"]


class Commit(BaseModel):
    author: str
    subject: str


COMMITS = [
    Example("From: Jane Doe\nSubject: [PATCH] Fix the parser on empty input\n\n",
            Commit(author="Jane Doe", subject="Fix the parser on empty input")),
    Example("From: Li Wei\nSubject: [PATCH] docs: explain the cache size option\n\n",
            Commit(author="Li Wei", subject="docs: explain the cache size option")),
]


def test_a_value_the_rule_reads_with_its_own_colon_is_not_sure_without_it() -> None:
    rule = learn_locators(check_examples(COMMITS, Commit), Commit)["subject"]
    assert rule.right == ""  # to the end of the line
    for doc, raw in [("From: Ann\nSubject: [PATCH] TODO list for 2.0:\n\n", "TODO list for 2.0:"),
                     ("From: Ann\nSubject: [PATCH] Drop the -O flag;\n\n", "Drop the -O flag;")]:
        assert rule.values(doc) == [raw]
        # clean edges (the extraction default) offer the value less its ":" /
        # ";": that shorter value is not what the rule reads, so not HELD
        clean, _ = field_confidence(Commit(author="Ann", subject=raw[:-1]), doc,
                                    {"subject": [(0, 1)]}, {"subject": rule})
        assert clean["subject"] < REVIEW_BELOW
        whole, _ = field_confidence(Commit(author="Ann", subject=raw), doc, {},
                                    {"subject": rule})
        assert whole["subject"] == HELD  # the rule's own value, where clean edges are off
    kept = "From: Ann\nSubject: [PATCH] Fix the parser.\n\n"  # a "." is no separator
    scores, _ = field_confidence(Commit(author="Ann", subject="Fix the parser."), kept, {},
                                 {"subject": rule})
    assert scores["subject"] == HELD
