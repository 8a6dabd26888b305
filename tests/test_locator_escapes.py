"""A value the document writes escaped is read as the parser reads it, and a
CDATA wrapper is no part of the value (newcomer21 probe, finding 3). An RSS
item's ``<title><![CDATA[Croissants & Coffee]]></title>`` was read with its
wrapper and pinned (0.99); a link written ``?p=412&amp;lang=en`` (XML's
escape of ``?p=412&lang=en``) was pinned as written, and so would a JSON
string's ``Say \\"hi\\"``. The user means the parser's text: a rule now reads
out of a CDATA wrapper, reads a markup or JSON document's escapes (grounding
finds that value where the document writes it escaped), and never pins a
value it reads with an escape it cannot read (a YAML double-quoted string)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.escapes import read_escaped, unwrap_cdata, written_escaped
from agentflow.grounding.locate import locate
from tests.locator_support import learned_rules, scored


class Post(BaseModel):
    title: str | None = Field(None, description="the post's title")
    link: str | None = Field(None, description="the post's link")


POSTS = [
    Example("<post>\n  <title>Garlic in October</title>\n"
            "  <link>https://garden.example.org/garlic</link>\n</post>\n",
            Post(title="Garlic in October", link="https://garden.example.org/garlic")),
    Example("<post>\n  <link>https://quux.example.com/3.2</link>\n"
            "  <title>Quux 3.2 released</title>\n</post>\n",
            Post(title="Quux 3.2 released", link="https://quux.example.com/3.2")),
]
CDATA = ("<post>\n  <title><![CDATA[Croissants & Coffee]]></title>\n"
         "  <link>https://bakery.example.net/c</link>\n</post>\n")
ENTITY = ("<post>\n  <title>Salt &amp; Pepper</title>\n"
          "  <link>https://bakery.example.net/?p=412&amp;lang=en</link>\n</post>\n")


def test_a_cdata_wrapper_is_read_out_of() -> None:
    rules = learned_rules(POSTS, Post)
    assert rules["title"].values(CDATA) == ["Croissants & Coffee"]
    assert scored(Post(title="Croissants & Coffee"), CDATA, rules, "title") == HELD
    assert scored(Post(title="<![CDATA[Croissants & Coffee]]>"), CDATA, rules,
                  "title") < REVIEW_BELOW
    assert unwrap_cdata("<![CDATA[a]]> and <![CDATA[b]]>") == "<![CDATA[a]]> and <![CDATA[b]]>"


def test_a_value_written_with_a_markup_reference_is_read_as_the_parser_reads_it() -> None:
    rules = learned_rules(POSTS, Post)
    link = "https://bakery.example.net/?p=412&lang=en"
    assert rules["link"].values(ENTITY) == [link]
    assert scored(Post(link=link), ENTITY, rules, "link") == HELD
    assert scored(Post(title="Salt & Pepper"), ENTITY, rules, "title") == HELD
    raw = "https://bakery.example.net/?p=412&amp;lang=en"
    assert scored(Post(link=raw), ENTITY, rules, "link") < REVIEW_BELOW
    span = locate("Salt & Pepper", ENTITY, whole_tokens=True)  # grounding finds it escaped
    assert span is not None and ENTITY[span[0]:span[1]] == "Salt &amp; Pepper"
    assert read_escaped("a &#8217; b", ENTITY) == "a \u2019 b"
    # outside markup, ``&amp;`` is text as written (a Markdown page showing it)
    assert not written_escaped("a &amp; b", "# Notes\n\nWrite a &amp; b.\n")
    assert locate("a & b", "# Notes\n\nWrite a &amp; b.\n") is None


class Release(BaseModel):
    name: str | None = Field(None, description="the release's name")


RELEASES = [
    Example('{\n  "id": 1,\n  "name": "Rocket 2.3"\n}\n', Release(name="Rocket 2.3")),
    Example('{\n  "name": "Lamp fixes",\n  "id": 2\n}\n', Release(name="Lamp fixes")),
]


def test_a_json_string_escape_is_read_as_the_parser_reads_it() -> None:
    rules = learned_rules(RELEASES, Release)
    quoted = '{\n  "name": "Say \\"hi\\" now",\n  "id": 3\n}\n'
    assert rules["name"].values(quoted) == ['Say "hi" now']
    assert scored(Release(name='Say "hi" now'), quoted, rules, "name") == HELD
    assert scored(Release(name='Say \\"hi\\" now'), quoted, rules, "name") < REVIEW_BELOW
    accent = '{\n  "name": "Caf\\u00e9 1.0",\n  "id": 3\n}\n'
    assert rules["name"].values(accent) == ["Caf\u00e9 1.0"]
    assert locate("Caf\u00e9 1.0", accent, whole_tokens=True) is not None
    # a backslash outside a quoted string is text as written (a Windows path in an INI file)
    assert not written_escaped("C:\\new\\table", "[paths]\nroot = C:\\new\\table\n")


class Entry(BaseModel):
    title: str | None = Field(None, description="the entry's title")


ENTRIES = [
    Example("version: 2\ntitle: Rocket launch\nid: 1\n", Entry(title="Rocket launch")),
    Example("id: 2\ntitle: Lamp fixes\nversion: 3\n", Entry(title="Lamp fixes")),
]


def test_a_yaml_double_quoted_escape_is_not_pinned() -> None:
    rules = learned_rules(ENTRIES, Entry)
    doc = 'id: 3\ntitle: "Caf\\u00e9 opening"\nversion: 1\n'
    assert rules["title"].values(doc) == ["Caf\\u00e9 opening"]  # read out of its quotes
    assert scored(Entry(title="Caf\\u00e9 opening"), doc, rules, "title") < REVIEW_BELOW
    plain = 'id: 3\ntitle: "Cafe opening"\nversion: 1\n'
    assert scored(Entry(title="Cafe opening"), plain, rules, "title") == HELD
