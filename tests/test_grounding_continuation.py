"""Values over continuation lines (issue 30): a field whose value runs on
over the indented lines after its own (RFC 822 / deb822 / DEP-5 fields,
e-mail headers, YAML block scalars, INI values) is located whole when the
examples show it, or show nothing else, and never cut in the middle
(``agentflow.grounding.lines.continuation``, ``agentflow.grounding.locators``;
the grammar the embedded model gets is checked as text)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.defaults import EXTRACTION_DEFAULT
from agentflow.grounding.lines import continuation, indent_of
from agentflow.grounding.locators import VALUES_KEY, apply_locators, learn_locators
from agentflow.grounding.marker import mark_all_strings
from agentflow.output.examples import check_examples
from agentflow.output.grammar import substring_grammar
from agentflow.output.schema import OutputSpec

SEPARATORS = {"key_separator": ": ", "item_separator": ", "}


def test_continuation_lines_are_the_deeper_indented_lines_right_after() -> None:
    lines = ["Key: a", " b", "\tc", "Next: d", " e"]
    assert continuation(lines, 0) == [" b", "\tc"]
    assert continuation(lines, 3) == [" e"]
    assert continuation(["  x: 1", "  y: 2"], 0) == []  # the same depth: a sibling
    assert continuation(["k: v", "   ", " w"], 0) == []  # a blank line ends the value
    assert indent_of("\tx") == 8 and indent_of("  x") == 2 and indent_of("x") == 0


class Credits(BaseModel):
    """A plain schema whose list field is one key's value over several lines."""

    name: str | None = Field(None, description="the project")
    holders: list[str] = Field(default_factory=list, description="who holds the rights")
    license: str | None = Field(None, description="the license's short name")


CREDITS = [
    Example("Name: frob\n\nFiles: *\nCopyright: 2015 Jane Roe <jane@example.org>\n"
            "           2019 Acme Ltd.\nLicense: MIT\n\nFiles: debian/*\n"
            "Copyright: 2020 Ann <ann@example.net>\nLicense: MIT\n",
            Credits(name="frob", holders=["2015 Jane Roe <jane@example.org>", "2019 Acme Ltd."],
                    license="MIT")),
    Example("Name: quux\n\nFiles: *\nCopyright: 1999 Sam Poe\nLicense: Expat\n"
            " Permission is hereby granted.\n",
            Credits(name="quux", holders=["1999 Sam Poe"], license="Expat")),
]


def test_a_list_over_continuation_lines_is_learned_as_one_block() -> None:
    rules = learn_locators(check_examples(CREDITS, Credits), Credits)
    holders = rules["holders"]
    assert holders.continued and holders.many and holders.left == "Copyright: "
    doc = ("Name: acme\n\nFiles: *\nCopyright:\n 2001 A. One\n 2002 B. Two <b@x.org>\n"
           "License: GPL-2+\n This program is free software.\n\nFiles: po/*\n"
           "Copyright: 2003 C. Three\nLicense: GPL-2+\n")
    # the label alone on its line: the value is its continuation lines; the
    # first block is the value, every block is offered
    assert holders.values(doc) == ["2001 A. One", "2002 B. Two <b@x.org>"]
    assert holders.blocks(doc) == [["2001 A. One", "2002 B. Two <b@x.org>"],
                                   ["2003 C. Three"]]
    # an example that stops at the end of a line with continuation lines:
    # that field's value is its first line only (the license's short name)
    assert not rules["license"].continued
    assert rules["license"].values(doc)[0] == "GPL-2+"


def test_the_grammar_offers_one_whole_block_never_a_cut_one() -> None:
    rules = learn_locators(check_examples(CREDITS, Credits), Credits)
    doc = ("Name: acme\nFiles: *\nCopyright: 2001 A. One\n 2002 B. Two\n\n"
           "Files: po/*\nCopyright: 2003 C. Three\n")
    schema = mark_all_strings(OutputSpec.of(Credits).schema_for("local").schema,
                              EXTRACTION_DEFAULT)
    # the examples write the field twice and always take the first block
    assert rules["holders"].first and rules["license"].first
    located = apply_locators(schema, rules, doc)
    assert located["properties"]["holders"][VALUES_KEY] == [["2001 A. One", "2002 B. Two"]]
    grammar = substring_grammar(located, doc, SEPARATORS)
    assert grammar is not None
    assert '"[" "\\"2001 A. One\\"" ", " "\\"2002 B. Two\\"" "]"' in grammar
    assert '"[" "\\"2003 C. Three\\"" "]"' not in grammar
    # examples that write the field once each show no order: any one whole
    # block is offered, never a cut one (nor items of two blocks)
    once = [Example("Name: x\nCopyright: 2 B\n 3 C\nLicense: BSD\n",
                    Credits(name="x", holders=["2 B", "3 C"], license="BSD")),
            CREDITS[1]]
    rules = learn_locators(check_examples(once, Credits), Credits)
    assert rules["holders"].continued and not rules["holders"].first
    located = apply_locators(schema, rules, doc)
    assert located["properties"]["holders"][VALUES_KEY] == [
        ["2001 A. One", "2002 B. Two"], ["2003 C. Three"]]
    grammar = substring_grammar(located, doc, SEPARATORS)
    assert grammar is not None
    assert ('"[" "\\"2001 A. One\\"" ", " "\\"2002 B. Two\\"" "]" | '
            '"[" "\\"2003 C. Three\\"" "]"') in grammar
    # an example whose value is a later block: no locator holds (grounding decides)
    later = [CREDITS[0], Example(
        "Name: x\n\nFiles: a/*\nCopyright: 1 A\nLicense: MIT\n\nFiles: *\n"
        "Copyright: 2 B\n 3 C\nLicense: BSD\n",
        Credits(name="x", holders=["2 B", "3 C"], license="BSD"))]
    assert "holders" not in learn_locators(check_examples(later, Credits), Credits)


class Mail(BaseModel):
    """E-mail headers: RFC 5322 folds a long header over indented lines."""

    subject: str | None = Field(None, description="the subject")
    sender: str | None = Field(None, description="who sent it")


MAIL = [
    Example("From: Jo <jo@example.org>\nSubject: Meeting moved to\n  Thursday at noon\n"
            "To: team@example.org\n\nBody text.\n",
            Mail(subject="Meeting moved to Thursday at noon", sender="Jo <jo@example.org>")),
    Example("Subject: Lunch\nFrom: Al <al@example.net>\n\nHi.\n",
            Mail(subject="Lunch", sender="Al <al@example.net>")),
]


def test_a_string_over_continuation_lines_is_located_whole() -> None:
    rules = learn_locators(check_examples(MAIL, Mail), Mail)
    subject = rules["subject"]
    assert subject.continued and not subject.many
    doc = ("Received: by mx\nFrom: Bo <bo@example.com>\nSubject: Budget review for\n"
           "\tthe second quarter,\n\tdraft 2\nDate: Mon, 1 Jan 2024\n\n"
           "Subject: not a header\n")
    whole = "Budget review for\n\tthe second quarter,\n\tdraft 2"
    assert subject.values(doc)[0] == whole  # the document's own text, cut nowhere
    assert subject.holds("Budget review for the second quarter, draft 2", doc)
    assert not subject.holds("Budget review for", doc)
    schema = mark_all_strings(OutputSpec.of(Mail).schema_for("local").schema,
                              EXTRACTION_DEFAULT)
    located = apply_locators(schema, rules, doc)
    assert located["properties"]["subject"][VALUES_KEY][0] == whole
    # the sender's examples show no continuation either way: a value is the
    # whole of its lines, as RFC 5322 unfolds a header
    assert rules["sender"].continued
    assert rules["sender"].values("From: A <a@x.org>,\n B <b@x.org>\n") == [
        "A <a@x.org>,\n B <b@x.org>"]


def test_yaml_block_scalars_and_ini_values_read_the_same_way() -> None:
    class Conf(BaseModel):
        description: str | None = Field(None, description="what it is")
        owner: str | None = Field(None, description="who owns it")

    shown = [Example("name: a\ndescription: fetches the feeds\n  and stores them\nowner: ops\n",
                     Conf(description="fetches the feeds and stores them", owner="ops")),
             Example("description: one line\nowner: web\n",
                     Conf(description="one line", owner="web"))]
    rules = learn_locators(check_examples(shown, Conf), Conf)
    assert rules["description"].continued
    assert rules["description"].values(
        "[svc]\ndescription: polls\n    the queue\nowner: data\n") == ["polls\n    the queue"]
    # a line at the same depth is the next key, not a continuation
    assert rules["description"].values("description: x\nowner: y\n") == ["x"]


def test_a_value_that_crosses_into_a_line_that_does_not_continue_it_is_no_block() -> None:
    class Two(BaseModel):
        note: str | None = Field(None, description="a note")

    shown = [Example("Note: first part\nsecond part\n", Two(note="first part second part")),
             Example("Note: other\n", Two(note="other"))]
    # the value runs into an unindented line: no locator can say where it ends
    assert "note" not in learn_locators(check_examples(shown, Two), Two)
