"""A markup document's repeated elements are its records (newcomer21 probe,
finding 2), and its comments are no part of it (finding 7). An RSS feed's
``<item>``s, an Atom feed's ``<entry>``s, a pom's ``<dependency>``s were one
record: where the first item wrote no ``<pubDate>``, the second item's was
pinned as the first's (0.99); where every item wrote one, the rule found
several values and flagged the first item's (0.8) on every real feed. And
a ``<title>`` inside ``<!-- ... -->`` competed with the channel's own. Now
the elements of one path are records (``element`` record kind), the first
one's value is pinned, a value only a later one writes is offered beside
null, and a comment is never read."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, UNLOCATED_NULL
from agentflow.grounding.locator_rule import VALUES_KEY
from agentflow.grounding.markup import element_spans, uncommented
from agentflow.grounding.sibling_blocks import record_spans
from tests.locator_support import learned_rules, offered_node, scored


class Entry(BaseModel):
    feed: str | None = Field(None, description="the feed's own title")
    title: str | None = Field(None, description="the first entry's title")
    updated: str | None = Field(None, description="the first entry's updated date")


ATOM = [
    Example('<?xml version="1.0"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
            "  <title>Kiln Diary</title>\n  <entry>\n    <title>Glaze tests</title>\n"
            "    <updated>2024-05-02T10:00:00Z</updated>\n  </entry>\n  <entry>\n"
            "    <title>Bisque firing</title>\n    <updated>2024-04-20T09:00:00Z</updated>\n"
            "  </entry>\n</feed>\n",
            Entry(feed="Kiln Diary", title="Glaze tests", updated="2024-05-02T10:00:00Z")),
    Example('<?xml version="1.0"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
            "  <title>Loom Log</title>\n  <entry>\n    <title>Warping the loom</title>\n"
            "    <updated>2023-11-11T08:30:00Z</updated>\n  </entry>\n</feed>\n",
            Entry(feed="Loom Log", title="Warping the loom", updated="2023-11-11T08:30:00Z")),
]
# the first entry writes no <updated>; the second does (a blank line between them)
FIRST_UNDATED = ('<feed xmlns="http://www.w3.org/2005/Atom">\n  <title>Pottery</title>\n'
                 "  <entry>\n    <title>Studio closed</title>\n  </entry>\n\n  <entry>\n"
                 "    <title>Raku night</title>\n    <updated>2024-06-01T18:00:00Z</updated>\n"
                 "  </entry>\n</feed>\n")
# a real feed: every entry writes each field
THREE = ('<feed xmlns="http://www.w3.org/2005/Atom">\n<title>Pottery</title>\n'
         + "".join(f"<entry>\n<title>Post {n}</title>\n<updated>2024-06-0{n}T18:00:00Z</updated>\n"
                   "</entry>\n" for n in (3, 2, 1)) + "</feed>\n")
# a commented-out entry before the real one, and a commented-out feed title
COMMENTED = ('<feed xmlns="http://www.w3.org/2005/Atom">\n  <!-- <title>Old name</title> -->\n'
             "  <title>Pottery</title>\n  <!--\n  <entry>\n    <title>DRAFT: kiln</title>\n"
             "    <updated>2024-01-01T00:00:00Z</updated>\n  </entry>\n  -->\n  <entry>\n"
             "    <title>Raku night</title>\n    <updated>2024-06-01T18:00:00Z</updated>\n"
             "  </entry>\n</feed>\n")


def test_markup_elements_are_records_of_one_path() -> None:
    lines = FIRST_UNDATED.splitlines()
    assert record_spans(lines, "element feed/entry") == [(2, 5, ""), (6, 10, "")]
    assert ("feed/entry/title", 3, 4) in element_spans(lines)
    # two elements of a path on one line cannot be told apart by lines: no records
    assert not [s for s in element_spans(["<a>", "<b>x</b><b>y</b>", "</a>"]) if s[0] == "a/b"]
    assert record_spans(["name: x", "  <b>y</b>"], "element b") == []


def test_first_entry_without_the_field_leaves_a_later_one_unpinned() -> None:
    rules = learned_rules(ATOM, Entry)
    rule = rules["updated"]
    assert rule.record == "element feed/entry"
    assert "in the first element 'feed/entry'" in rule.describe()
    assert scored(Entry(updated="2024-06-01T18:00:00Z"), FIRST_UNDATED, rules,
                  "updated") < REVIEW_BELOW
    assert scored(Entry(), FIRST_UNDATED, rules, "updated") == UNLOCATED_NULL
    offered = offered_node(rule, FIRST_UNDATED)
    assert {"type": "null"} in offered["anyOf"]  # null beside the later entry's date


def test_first_entry_value_is_pinned_where_every_entry_writes_one() -> None:
    rules = learned_rules(ATOM, Entry)
    assert rules["title"].record == "element feed/entry"
    assert rules["title"].values(THREE) == ["Post 3", "Post 2", "Post 1"]
    assert scored(Entry(title="Post 3"), THREE, rules, "title") == HELD
    assert scored(Entry(updated="2024-06-03T18:00:00Z"), THREE, rules, "updated") == HELD
    assert scored(Entry(title="Post 2"), THREE, rules, "title") < REVIEW_BELOW
    assert offered_node(rules["title"], THREE)[VALUES_KEY] == ["Post 3"]
    # the feed's own title comes before the first entry: no record of it
    assert rules["feed"].record == ""
    assert scored(Entry(feed="Pottery"), THREE, rules, "feed") == HELD


def test_a_commented_out_element_is_never_read() -> None:
    rules = learned_rules(ATOM, Entry)
    assert rules["feed"].values(COMMENTED) == ["Pottery"]
    assert rules["title"].values(COMMENTED) == ["Raku night"]
    assert scored(Entry(feed="Pottery"), COMMENTED, rules, "feed") == HELD
    assert scored(Entry(title="Raku night"), COMMENTED, rules, "title") == HELD
    assert scored(Entry(title="DRAFT: kiln"), COMMENTED, rules, "title") < REVIEW_BELOW
    blanked = uncommented(COMMENTED)
    assert len(blanked) == len(COMMENTED) and "Old name" not in blanked
    # a comment of a text that is not markup is left as it is (a Markdown page's note)
    assert uncommented("# Tool\n<!-- pip install old -->\n") == "# Tool\n<!-- pip install old -->\n"
