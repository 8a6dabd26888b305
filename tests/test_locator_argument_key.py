"""A line-argument rule keyed on its line's first word alone (newcomer20
probe, finding 3). Learned from sentences ("We recommend that you upgrade
your curl packages."), "argument 6 of a line that begins with 'We'" read a
word of any sentence beginning with ``We`` ("We thank Jane Q. Doe for
reporting ...": ``reporting``) and pinned it, and read one word of a line
naming two things. Now the words every example's line writes before the
value are the line's key, the words every one writes after it must end the
line, and sentences that share their first word alone teach no rule."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.lines import arguments_after
from tests.locator_support import learned_rules, scored


class Minutes(BaseModel):
    chair: str | None = Field(None, description="who chaired the meeting")


# the chair is named first in other words in each, so no text around its first place
# is common: the value is learned as an argument of its sentence
MINUTES = [
    Example("Okafor welcomed the new members.\n\nThe meeting was chaired by Okafor this week.\n",
            Minutes(chair="Okafor")),
    Example("Notes kept by Moreau for Lindqvist.\n\n"
            "The meeting was chaired by Lindqvist this week.\n",
            Minutes(chair="Lindqvist")),
]
OTHER_SENTENCE = "Brandt wrote the notes.\n\nThe minutes were taken by Brandt this week.\n"
TWO_CHAIRS = "Chen sent apologies.\n\nThe meeting was chaired by Park and Chen this week.\n"
SAME_SENTENCE = "Chen sent apologies.\n\nThe meeting was chaired by Park this week.\n"


def test_argument_rule_keyed_on_every_word_before_the_value() -> None:
    rules = learned_rules(MINUTES, Minutes)
    rule = rules["chair"]
    assert rule.arg == 0 and rule.left == "The meeting was chaired by" and rule.tail == "this week."
    assert rule.values(SAME_SENTENCE) == ["Park"]
    assert scored(Minutes(chair="Park"), SAME_SENTENCE, rules, "chair") == HELD
    assert rule.values(OTHER_SENTENCE) == []  # was ``Brandt``, pinned
    assert scored(Minutes(chair="Brandt"), OTHER_SENTENCE, rules, "chair") < REVIEW_BELOW


def test_argument_rule_reads_no_line_that_ends_otherwise() -> None:
    rules = learned_rules(MINUTES, Minutes)
    assert rules["chair"].values(TWO_CHAIRS) == []  # was ``Park``, pinned
    assert scored(Minutes(chair="Park"), TWO_CHAIRS, rules, "chair") < REVIEW_BELOW


def test_sentences_sharing_their_first_word_alone_teach_no_rule() -> None:
    examples = [
        Example("Okafor welcomed the new members.\n\nThe meeting was chaired by Okafor today.\n",
                Minutes(chair="Okafor")),
        Example("Notes kept by Moreau for Lindqvist.\n\nThe session was led by Lindqvist today.\n",
                Minutes(chair="Lindqvist")),
    ]
    assert "chair" not in learned_rules(examples, Minutes)


class Requirement(BaseModel):
    version: str | None = Field(None, description="the required version")


def test_command_lines_keep_their_keyword_rule() -> None:
    examples = [
        Example("module example.org/a\n\nrequire example.org/x v1.2.0\n",
                Requirement(version="v1.2.0")),
        Example("module example.org/b\n\nrequire example.org/y/v2 v2.0.1 // indirect\n",
                Requirement(version="v2.0.1")),
    ]
    rule = learned_rules(examples, Requirement)["version"]
    assert (rule.left, rule.arg, rule.tail) == ("require", 1, "")
    assert rule.values("module example.org/c\nrequire example.org/z v0.3.1\n") == ["v0.3.1"]


def test_arguments_after_a_head_of_several_words() -> None:
    line = 'We recommend that you upgrade your "curl" packages.'
    rest = arguments_after(line, "We recommend that you upgrade your")
    assert rest is not None and [line[slice(*a)] for a in rest] == ["curl", "packages."]
    assert arguments_after(line, "We") is not None
    assert arguments_after(line, "We recommend") is not None
    assert arguments_after("Weather is fine.", "We") is None
    assert arguments_after("We thank Jane.", "We recommend that") is None
    assert arguments_after("", ".TH") is None
