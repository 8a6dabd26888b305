"""A learned locator reads a value as its document writes it, less the
document's syntax (newcomer16 probe, fault 2): a value that is one quoted
string where no example's value is quoted is read as its content (``From:
"John Q. Public" <jqp@example.org>``), one still carrying quotes is never
pinned; and a header folded before the rule's right context (``From: Name``
/ `` <e-mail>``, as git and RFC 822 write a long one) is read as one line."""

from __future__ import annotations

from typing import SupportsIndex

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.lines import unfolded_to
from agentflow.grounding.locators import learn_locators
from agentflow.grounding.quotes import (
    in_quotes,
    opens_quote,
    past_escaped,
    past_quote,
    quoted_content,
    split_outside,
)
from agentflow.output.examples import check_examples


class Commit(BaseModel):
    author: str | None = Field(None, description="the author's name")
    email: str | None = Field(None, description="the author's e-mail address")
    tags: list[str] = Field(default_factory=list, description="the commit's tags")


COMMITS = [
    Example("From 3f2a9c1 Mon Sep 17 00:00:00 2001\nFrom: Jane Doe <jane@example.org>\n"
            "Tags: parser, fix\nSubject: [PATCH] Fix the parser\n",
            Commit(author="Jane Doe", email="jane@example.org", tags=["parser", "fix"])),
    Example("From 0a1b2c3 Mon Sep 17 00:00:00 2001\nFrom: Li Wei <li.wei@example.com>\n"
            "Tags: docs\nSubject: [PATCH] docs: explain the cache\n",
            Commit(author="Li Wei", email="li.wei@example.com", tags=["docs"])),
]


def _author_confidence(doc: str, author: str) -> float:
    rules = learn_locators(check_examples(COMMITS, Commit), Commit)
    out = Commit(author=author, email="jqp@example.org")
    confidence, _ = field_confidence(out, doc, {}, {"author": rules["author"]})
    return confidence["author"]


def test_one_quoted_string_is_its_content() -> None:
    assert quoted_content('"John Q. Public"') == (1, 15)
    assert quoted_content(' \u201cDoe, Jane\u201d ') == (2, 11)
    assert quoted_content("'x'") == (1, 2) and quoted_content('""') == (1, 1)
    for text in ('"a" and "b"', '"John \\"JJ\\" Public"', '"open', "plain", '"',
                 "'s-Hertogenbosch"):
        assert quoted_content(text) is None, text
    assert opens_quote('"Weird Al" Yankovic') and opens_quote('"a \\"b\\""')
    assert in_quotes('"a" and "b"') and not in_quotes('"Weird Al" Yankovic')
    assert not opens_quote("'s-Hertogenbosch") and not opens_quote('John "JQ" Public')


def test_a_quoted_display_name_is_read_without_its_quotes() -> None:
    rules = learn_locators(check_examples(COMMITS, Commit), Commit)
    author = rules["author"]
    assert author.right == " <" and not author.quoted
    for line, name in (('From: "John Q. Public" <jqp@example.org>', "John Q. Public"),
                       ('From: "Doe, Jane" <jane@example.org>', "Doe, Jane"),
                       ("From: \u201cAnn Lee\u201d <ann@example.org>", "Ann Lee"),
                       ("From: Jo Roe <jo@example.org>", "Jo Roe")):
        doc = f"From 1234567 Mon Sep 17 00:00:00 2001\n{line}\nSubject: [PATCH] x\n"
        assert author.values(doc) == [name]
        assert _author_confidence(doc, name) == HELD
        if name != "Jo Roe":  # the value still carrying its quotes is never held
            assert _author_confidence(doc, f'"{name}"') < REVIEW_BELOW


def test_a_value_still_wrapped_in_quotes_is_not_pinned() -> None:
    author = learn_locators(check_examples(COMMITS, Commit), Commit)["author"]
    for name in ('"John \\"JJ\\" Public"', '"Ann" and "Bo"'):  # not one quoted string
        doc = f"From 1 Mon\nFrom: {name} <jqp@example.org>\nSubject: x\n"
        assert author.values(doc) == [name]  # read as written
        assert _author_confidence(doc, name) < REVIEW_BELOW
    # a value that only begins with a quoted string is the value (a nickname)
    doc = 'From 1 Mon\nFrom: "Weird Al" Yankovic <al@example.org>\nSubject: x\n'
    assert author.values(doc) == ['"Weird Al" Yankovic']
    assert _author_confidence(doc, '"Weird Al" Yankovic') == HELD


def test_quoted_list_items_are_read_as_their_content() -> None:
    doc = 'From 1 Mon\nFrom: Al <al@x.org>\nTags: "io, net", "fix"\nSubject: x\n'
    tags = learn_locators(check_examples(COMMITS, Commit), Commit)["tags"]
    assert tags.values(doc) == ["io, net", "fix"]  # (not split inside the quotes)
    assert split_outside('"io, net", fix, "a', ", ") == ['"io, net"', "fix", '"a']
    for text in ("a, b", "", ", ", "a, , b, ", "'s-Hertogenbosch, NL's"):  # as str.split
        assert split_outside(text, ", ") == text.split(", "), text
    doc = 'From 1 Mon\nFrom: Al <al@x.org>\nTags: "io", "fix"\nSubject: x\n'
    assert tags.values(doc) == ["io", "fix"]


class Release(BaseModel):
    name: str | None = Field(None, description="the distribution's name")
    title: str | None = Field(None, description="its title")


def test_values_the_examples_quote_keep_their_quotes() -> None:
    examples = [Example('NAME=Debian\nTITLE="Bookworm" edition\n',
                        Release(name="Debian", title='"Bookworm" edition')),
                Example('NAME=Fedora\nTITLE="Forty"\n', Release(name="Fedora", title='"Forty"'))]
    rules = learn_locators(check_examples(examples, Release), Release)
    assert not rules["name"].quoted and rules["title"].quoted
    doc = 'NAME="Ubuntu Linux"\nTITLE="Noble"\n'
    assert rules["name"].values(doc) == ["Ubuntu Linux"]  # an assignment's quotes: syntax
    assert rules["title"].values(doc) == ['"Noble"']  # as the examples write the value


def test_a_header_folded_before_the_right_context_is_read_as_one_line() -> None:
    rules = learn_locators(check_examples(COMMITS, Commit), Commit)
    author, email = rules["author"], rules["email"]
    doc = ("From 5bcc0e6 Mon Sep 17 00:00:00 2001\nFrom: Seed 18d5f280 maintainers\n"
           " <maintainers@users.noreply.example>\nDate: Sun, 6 Dec 2026 20:20:12 +0000\n")
    assert author.values(doc) == ["Seed 18d5f280 maintainers"]
    assert email.values(doc) == ["maintainers@users.noreply.example"]
    out = Commit(author="Seed 18d5f280 maintainers", email="maintainers@users.noreply.example")
    confidence, _ = field_confidence(out, doc, {}, rules)
    assert confidence["author"] == HELD and confidence["email"] == HELD
    # folded inside the value, with a tab; quoted and folded
    doc = 'From 1 Mon\nFrom: "A Very Long \n\tName, Jr." \n\t<a@x.org>\nSubject: x\n'
    assert [" ".join(v.split()) for v in author.values(doc)] == ["A Very Long Name, Jr."]
    # folded right after its label
    doc = 'From 1 Mon\nFrom:\n "Doe, Jane"\n <jane@x.org>\nSubject: x\n'
    assert author.values(doc) == ["Doe, Jane"]
    # no right context on the line nor on its continuation lines: no value, as before
    assert author.values("From 1 Mon\nFrom: Jo Roe\n jo at x.org\nSubject: x\n") == []
    # a line that is not a continuation (not indented) is not read
    assert author.values("From 1 Mon\nFrom: Jo Roe\n<jo@x.org>\n") == []
    # nor one that begins with a key or a list marker: a nested field or list
    for nested in ("  Name: Jo <jo@x.org>", "  - Jo <jo@x.org>", "  2. Jo <jo@x.org>"):
        assert author.values(f"From 1 Mon\nFrom: Jo Roe\n{nested}\n") == [], nested


class Notes(BaseModel):
    notes: list[str] = Field(default_factory=list, description="the notes")


def test_a_list_items_whole_content_keeps_its_quotes() -> None:
    examples = [Example("Notes:\n- Bring a pen\n- Arrive early\n\nEnd.\n",
                        Notes(notes=["Bring a pen", "Arrive early"])),
                Example("Intro.\n\nNotes:\n- Parking is free\n", Notes(notes=["Parking is free"]))]
    rule = learn_locators(check_examples(examples, Notes), Notes)["notes"]
    assert not rule.quoted and rule.heading  # (a bullet under its heading: labelled)
    # the item's whole line content, as a whole-lines value must be: its quotes kept
    assert rule.values('Notes:\n- "Quiet, please"\n- Bring tea\n') == ['"Quiet, please"',
                                                                        "Bring tea"]


class Person(BaseModel):
    name: str | None = Field(None, description="the person's name")
    town: str | None = Field(None, description="where they live")


def test_the_end_of_a_value_is_looked_for_past_the_quoted_string_it_begins_with() -> None:
    assert past_quote('"Doe, Jane", 42', 0) == 11 and past_quote('x "a, b", 1', 1) == 8
    assert past_quote("'s-Hertogenbosch, Brabant's", 0) == 0  # an apostrophe, no closing quote
    assert past_quote('"open, 1', 0) == 0 and past_quote("plain, 1", 0) == 0
    examples = [Example("Name: Jo Roe, Town: Leeds\n", Person(name="Jo Roe", town="Leeds")),
                Example("Name: Al Poe, Town: York\n", Person(name="Al Poe", town="York"))]
    rules = learn_locators(check_examples(examples, Person), Person)
    assert rules["name"].right == ", "
    doc = 'Name: "Smith, John", Town: Bath\n'
    assert rules["name"].values(doc) == ["Smith, John"]  # not '"Smith'
    out = Person(name="Smith, John", town="Bath")
    confidence, _ = field_confidence(out, doc, {}, rules)
    assert confidence["name"] == HELD
    confidence, _ = field_confidence(out.model_copy(update={"name": '"Smith'}), doc, {}, rules)
    assert confidence["name"] < REVIEW_BELOW


class Module(BaseModel):
    license: str | None = Field(None, description="the license")


def test_a_folded_right_context_needs_the_word_the_examples_write_after_it() -> None:
    examples = [Example(":license: MIT, see LICENSE for details.\n", Module(license="MIT")),
                Example(":license: BSD, see LICENSE for details.\n", Module(license="BSD"))]
    rule = learn_locators(check_examples(examples, Module), Module)["license"]
    assert (rule.right, rule.right_word) == (", ", "see")
    doc = ":license: Apache License, Version 2.0,\n    see LICENSE for details.\n"
    assert [" ".join(v.split()) for v in rule.values(doc)] == ["Apache License, Version 2.0"]
    assert rule.values(":license: GPL, version 2,\n    or later\n") == []


class _Copies(str):
    """Text that counts the characters its slices and indexing copy."""

    copied = 0

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        part = super().__getitem__(key)
        _Copies.copied += len(part)
        return part


def test_quoted_strings_are_looked_past_without_copying_the_text() -> None:
    """Each value of a long line once copied the rest of the line, and read
    it a character at a time (quadratic: a 1 MB line took seconds); now the
    items of a line copy each character once, quoted or not (time itself:
    benchmarks/bench_linear.py)."""
    for line in ("item, " * 2000, '"a, ' * 2000, '"a", ' * 2000, "'s, " * 2000):
        text = _Copies(line)
        _Copies.copied = 0
        assert split_outside(text, ", ") == split_outside(line, ", ")
        assert _Copies.copied <= len(line)


def test_the_closing_quote_is_the_same_asked_in_any_order() -> None:
    """A text's later values reuse where its closing quotes were found."""
    text = '"a" x "b, c", "d, e'
    fresh = [past_quote((text + "!")[:-1], at) for at in range(len(text) + 1)]
    assert fresh[0] == 3 and fresh[6] == 12 and fresh[14] == 14
    for order in (range(len(text) + 1), range(len(text), -1, -1), [14, 6, 0, 13, 5, 1]):
        assert [past_quote(text, at) for at in order] == [fresh[at] for at in order]


class Project(BaseModel):
    name: str | None = Field(None, description="the project's name")
    description: str | None = Field(None, description="one-line summary")


PROJECTS = [
    Example('[project]\nname = "widgetlib"\ndescription = "Widgets for the command line"\n',
            Project(name="widgetlib", description="Widgets for the command line")),
    Example('[project]\nname = "tinydb-tools"\ndescription = "Helpers for TinyDB files"\n',
            Project(name="tinydb-tools", description="Helpers for TinyDB files")),
]


def test_a_value_is_not_cut_at_a_quote_it_escapes() -> None:
    """newcomer17 probe, fault 3: a rule read up to ``"`` stopped at ``\\"``
    and pinned ``Parse \\`` of ``"Parse \\"smart\\" quotes in text"``."""
    rule = learn_locators(check_examples(PROJECTS, Project), Project)["description"]
    assert rule.right == '"'
    doc = '[project]\nname = "q"\ndescription = "Parse \\"smart\\" quotes in text"\n'
    assert rule.values(doc) == ['Parse \\"smart\\" quotes in text']
    cut = Project(name="q", description="Parse \\")
    confidence, _ = field_confidence(cut, doc, {}, {"description": rule})
    assert confidence["description"] < REVIEW_BELOW
    # an escaped backslash before the closing quote escapes nothing
    assert rule.values('description = "C:\\\\tools\\\\"\n') == ["C:\\\\tools\\\\"]
    # a value ending in a lone backslash has no closing quote the rule can tell
    assert rule.values('description = "C:\\tools\\" # note\n') == []
    # doubled quotes (YAML single-quoted, CSV) escape too; a quoted empty string is empty
    assert rule.values('description = "Say ""hi"" now"\n') == ['Say ""hi"" now']
    assert rule.values('description = ""\n') == []
    assert rule.values('description = """Fast\n    parser"""\n') == []


def test_an_escaped_quote_neither_closes_a_quoted_item_nor_a_folded_value() -> None:
    assert past_quote('"a \\"b, c\\" d", e', 0) == 14
    assert past_quote('"a \\\\", e', 0) == 6
    assert split_outside('"x \\", y", z', ", ") == ['"x \\", y"', "z"]
    assert past_escaped('"It\'\'s"', 3, 1) == 5 and past_escaped('"It\'\'s"', 6, 1) == 6
    assert past_escaped("'abc'''", 4, 1) == 6 and past_escaped("''", 1, 1) == 1
    assert past_escaped('\u201ca\u201d', 2, 1) == 2 and past_escaped("x", 0) == 0
    lines = ['Title: "A \\"', '  long\\" one" (x)']
    assert unfolded_to(lines, 0, 8, '"') == 'A \\"\n  long\\" one'
