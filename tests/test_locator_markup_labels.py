"""A markup element's start tag is the label of the value it holds, less a
CDATA wrapper and the attributes the examples do not all write alike
(newcomer23 probe, finding 3). Two Atom examples writing ``<title>Field
Notes</title>`` and ``<title><![CDATA[Bits & Bytes]]></title>`` (both common
generators) learned no rule ("no common place"), nor did ``<title>`` beside
``<title type="html">``; examples both in CDATA learned one that read no
plain ``<title>``. An attribute every example writes the same stays part of
the label (``<string name="app_name">``: there it is the key)."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD
from agentflow.grounding.label_forms import label_at, tag_label
from tests.locator_support import learned_rules, scored


class Feed(BaseModel):
    title: str | None = None
    entry: str | None = None


def _feed(title: str, entry: str) -> str:
    return (f"<feed>\n  {title}\n  <id>x</id>\n  <entry>\n    {entry}\n"
            "    <id>y</id>\n  </entry>\n</feed>\n")


PLAIN = Example(_feed("<title>Field Notes</title>", "<title>Moving house</title>"),
                Feed(title="Field Notes", entry="Moving house"))
WRAPPED = Example(_feed("<title><![CDATA[Bits & Bytes]]></title>",
                        '<title type="html"><![CDATA[Profiling Go]]></title>'),
                  Feed(title="Bits & Bytes", entry="Profiling Go"))
DOCS = {
    "plain": (_feed("<title>Quiet Hours</title>", "<title>On tea</title>"),
              "Quiet Hours", "On tea"),
    "cdata": (_feed("<title><![CDATA[R&D Log]]></title>",
                    "<title type='html'><![CDATA[<b>Bold</b> move]]></title>"),
              "R&D Log", "<b>Bold</b> move"),
    "attributes": (_feed('<title type="text">Plain Talk</title>',
                         '<title xml:lang="en" type="text">First</title>'),
                   "Plain Talk", "First"),
}


def test_a_cdata_wrapper_and_attributes_are_no_part_of_an_element_label() -> None:
    rules = learned_rules([PLAIN, WRAPPED], Feed)
    assert rules["title"].left == "<title>" and rules["entry"].left == "<title>"
    for doc, title, entry in DOCS.values():
        assert rules["title"].values(doc)[:1] == [title]
        assert rules["entry"].values(doc)[:1] == [entry]
        assert scored(Feed(title=title, entry=entry), doc, rules, "title") == HELD


def test_examples_both_in_cdata_read_a_plain_element() -> None:
    both = Example(PLAIN.text.replace("<title>Field Notes", "<title><![CDATA[Field Notes")
                   .replace("Notes</title>", "Notes]]></title>"), PLAIN.output)
    rules = learned_rules([both, WRAPPED], Feed)
    assert rules["title"].left == "<title>"
    assert rules["title"].values(DOCS["plain"][0]) == ["Quiet Hours"]


class Strings(BaseModel):
    app_name: str | None = None


def test_an_attribute_every_example_writes_alike_stays_the_key() -> None:
    def strings(first: str, name: str) -> str:
        return (f'<resources>\n  <string name="title">Welcome</string>\n  {first}\n'
                f"</resources>\n").replace("{name}", name)
    examples = [
        Example(strings('<string name="app_name">{name}</string>', "Notepad"),
                Strings(app_name="Notepad")),
        Example(strings('<string name="app_name" translatable="false"><![CDATA[{name}]]>'
                        "</string>", "Tally & Co"), Strings(app_name="Tally & Co")),
    ]
    rule = learned_rules(examples, Strings)["app_name"]
    assert rule.left == '<string name="app_name">'
    doc = strings("<string translatable='false' name='app_name'>Ledger</string>", "")
    assert rule.values(doc) == ["Ledger"]  # never the first string's "Welcome"


def test_start_tag_labels() -> None:
    assert tag_label(["<a>", '<a k="1"><![CDATA['], ["</a>", "]]></a> x"]) == (
        "<a>", ["</a>", "</a> x"])
    assert tag_label(['<a k="1">', "<a k='1' j=\"2\">"], ["</a>", "</a>"]) == (
        '<a k="1">', ["</a>", "</a>"])
    assert tag_label(["<a>", "<b>"], ["</a>", "</b>"]) is None  # two elements
    assert tag_label(["<a>", "<a>"], ["</a>", "</a>"]) is None  # as written already
    assert tag_label(["<a><![CDATA[", "<a>"], ["</a>", "</a>"]) is None  # no CDATA closer
    assert label_at('<a j="2" k="1">x', '<a k="1">') == (15, "")
    assert label_at('<a j="2">x', '<a k="1">') is None
    assert label_at("<ab>x", "<a>") is None
