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
from agentflow.grounding import Grounded
from agentflow.grounding.lines import continuation, indent_of, paragraph_continuation
from agentflow.grounding.locator_rule import line_arguments
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
    # the rule reads the first block (each example's value is its first)
    located = apply_locators(schema, rules, doc)
    assert located["properties"]["holders"][VALUES_KEY] == [["2001 A. One", "2002 B. Two"]]
    grammar = substring_grammar(located, doc, SEPARATORS)
    assert grammar is not None
    assert '"[" "\\"2001 A. One\\"" ", " "\\"2002 B. Two\\"" "]"' in grammar
    assert '"[" "\\"2003 C. Three\\"" "]"' not in grammar
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


def test_a_value_that_wraps_onto_plain_lines_runs_to_its_paragraph_s_end() -> None:
    class Page(BaseModel):
        summary: str | None = Field(None, description="the one-line description")

    shown = [Example(".SH NAME\nfrob \\- control the frob\n.SH SYNOPSIS\n",
                     Page(summary="control the frob")),
             Example('.SH "NAME"\nquux \\- a filter for the quux\nmail system\n.SH X\n',
                     Page(summary="a filter for the quux mail system"))]
    rule = learn_locators(check_examples(shown, Page), Page)["summary"]
    assert rule.continued and rule.paragraph and (rule.left, rule.anchored) == (" \\- ", False)
    doc = ".TH LS 1\n.SH NAME\nls \\- list directory\ncontents, sorted\n.SH SYNOPSIS\n.B ls\n"
    assert rule.values(doc) == ["list directory\ncontents, sorted"]  # up to the markup line
    assert paragraph_continuation(["a", "b c", "Key: v"], 0) == ["b c"]  # a key ends it
    assert paragraph_continuation(["a", "# note"], 0) == [] and paragraph_continuation(
        ["a", "", "b"], 0) == []


def test_a_value_that_crosses_into_a_key_line_is_no_block() -> None:
    class Two(BaseModel):
        note: str | None = Field(None, description="a note")

    shown = [Example("Note: first part\nOther: second part\n",
                     Two(note="first part Other: second part")),
             Example("Note: other\n", Two(note="other"))]
    # the value runs into a line that begins with a key: no rule says where it ends
    assert "note" not in learn_locators(check_examples(shown, Two), Two)


class Title(BaseModel):
    """Fields that are the arguments of one line, quoted or not."""

    name: str | None = Field(None, description="the title")
    section: str | None = Field(None, description="the section")
    date: str | None = Field(None, description="the date")


def test_the_same_argument_of_the_same_line_is_learned_when_no_text_is_common() -> None:
    assert line_arguments('.TH "A B" 1 "" x') == [(0, 3), (5, 8), (10, 11), (13, 13), (15, 16)]
    shown = [Example('.TH FROB "1" "March 2021"\n.SH NAME\n',
                     Title(name="FROB", section="1", date="March 2021")),
             Example('.TH "QUUX.CONF" "5" "2020-05-14"\n',
                     Title(name="QUUX.CONF", section="5", date="2020-05-14"))]
    rules = learn_locators(check_examples(shown, Title), Title)
    assert {n: (r.left, r.arg) for n, r in rules.items()} == {
        "name": (".TH", 0), "section": (".TH", 1), "date": (".TH", 2)}
    doc = '.\\" made by hand, 2 "x"\n.TH "GIT\\-LOG" 1 "" "Git 2.39"\n.SH NAME\n'
    assert [rules[n].values(doc) for n in ("name", "section", "date")] == [
        ["GIT\\-LOG"], ["1"], []]  # an empty argument: nothing (the field is null)
    # one example alone, or examples that disagree on the place: no rule
    assert learn_locators(check_examples(shown[:1], Title), Title) == {}
    other = [shown[0], Example('.TH "QUUX" "2020-05-14" "5"\n',
                               Title(name="QUUX", section="5", date="2020-05-14"))]
    learned = learn_locators(check_examples(other, Title), Title)
    assert learned["name"].arg == 0 and "section" not in learned  # arguments 2 and 3


def test_a_block_s_punctuation_lines_are_no_items_and_clean_edges_are_offered() -> None:
    rules = learn_locators(check_examples(CREDITS, Credits), Credits)
    doc = ("Name: j\n\nFiles: *\nCopyright: 2004 Meta Ltd. <m@x.org>,\n"
           "           2009 HP Company, L.P.,\n .\n 2012 Eric\nLicense: MIT\n")
    assert rules["holders"].values(doc) == [
        "2004 Meta Ltd. <m@x.org>,", "2009 HP Company, L.P.,", "2012 Eric"]  # no "." item
    schema = mark_all_strings(OutputSpec.of(Credits).schema_for("local").schema,
                              EXTRACTION_DEFAULT)
    located = apply_locators(schema, rules, doc)
    # under clean edges (the extraction default) the grammar offers each item
    # without the separator after it, which verification would refuse
    assert located["properties"]["holders"][VALUES_KEY] == [
        ["2004 Meta Ltd. <m@x.org>", "2009 HP Company, L.P.", "2012 Eric"]]
    plain = mark_all_strings(OutputSpec.of(Credits).schema_for("local").schema,
                             Grounded())
    assert apply_locators(plain, rules, doc)["properties"]["holders"][VALUES_KEY] == [
        ["2004 Meta Ltd. <m@x.org>,", "2009 HP Company, L.P.,", "2012 Eric"]]


def test_a_located_value_is_held_to_clean_edges_where_it_is_and_never_made_impossible() -> None:
    shown = [Example('.TH FROB "1" "March 2021"\n', Title(name="FROB", section="1",
                                                          date="March 2021")),
             Example('.TH "QUUX" "5" "2020-05-14"\n', Title(name="QUUX", section="5",
                                                            date="2020-05-14"))]
    rules = learn_locators(check_examples(shown, Title), Title)
    schema = mark_all_strings(OutputSpec.of(Title).schema_for("local").schema,
                              EXTRACTION_DEFAULT)
    # "Version 590: ..." reads like a label, but not where a line's content
    # begins: verification takes it, so the grammar offers it
    doc = '.TH LESS 1 "Version 590: 03 Jun 2021"\n.SH NAME\n'
    grammar = substring_grammar(apply_locators(schema, rules, doc), doc, SEPARATORS)
    assert grammar is not None and '("Version 590: 03 Jun 2021")' in grammar
    # a located value that verification would refuse (a label where its
    # line begins) leaves the field grounded as without a locator: the
    # grammar neither offers it nor makes the field impossible
    odd = "Version: 3 of May\n"
    located = apply_locators(schema, rules, odd)
    string = schema["properties"]["date"]["anyOf"][0]
    assert string["type"] == "string"
    located["properties"]["date"] = {**string, VALUES_KEY: ["Version: 3 of May"]}
    grammar = substring_grammar(located, odd, SEPARATORS)
    assert grammar is not None and '("Version: 3 of May")' not in grammar


def test_continuation_reads_only_the_lines_it_takes() -> None:
    """Every line of a megabyte of labelled lines asked for its continuation
    (as a continued locator asks) is answered in well under a second in all
    (each call copied the rest of the lines: minutes); the time is
    benchmarks/bench_linear.py's."""
    lines = ["Order: C-3"] * 100_000
    assert not any(continuation(lines, i) or paragraph_continuation(lines, i)
                   for i in range(0, len(lines), 2))
