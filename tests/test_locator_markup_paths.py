"""A markup element read by its indentation, not by the elements around it
(newcomer20 probe, finding 2). A rule learned on tidy XML kept "at nesting
depth 1", counted in indentation steps: a document whose outer children are
flush left and whose inner ones are indented put an inner element (a pom's
``<parent>``'s ``<groupId>``, an RSS item's ``<title>``) at the learned depth,
and it was pinned as the document's own. Now a markup document's depth and
parent keys are its open elements, whatever its indentation."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.depths import line_depths
from agentflow.grounding.key_paths import parent_keys
from agentflow.grounding.markup import element_paths, is_markup
from tests.locator_support import learned_rules, scored


class Feed(BaseModel):
    title: str | None = Field(None, description="the channel's own title")


FEEDS = [
    Example('<?xml version="1.0"?>\n<rss version="2.0">\n  <channel>\n'
            "    <title>Night Owl Notes</title>\n"
            "    <link>https://owl.example.org/</link>\n    <item>\n"
            "      <title>Moths in June</title>\n    </item>\n  </channel>\n</rss>\n",
            Feed(title="Night Owl Notes")),
    Example('<?xml version="1.0"?>\n<rss version="2.0">\n  <channel>\n'
            "    <title>Tide Tables</title>\n"
            "    <item>\n      <title>Spring tides</title>\n      <link>https://t.example.org/1</link>\n"
            "    </item>\n  </channel>\n</rss>\n",
            Feed(title="Tide Tables")),
]
# the channel's children flush left, the item's indented: by indentation the item's
# <title> is at the channel <title>'s depth of the examples, and comes first
FLUSH = ('<?xml version="1.0"?>\n<rss version="2.0">\n<channel>\n    <item>\n'
         "        <title>Low water</title>\n    </item>\n<title>Harbour Log</title>\n"
         "</channel>\n</rss>\n")
NO_OWN = ('<rss version="2.0">\n<channel>\n    <item>\n        <title>Low water</title>\n'
          "    </item>\n</channel>\n</rss>\n")


def test_markup_element_read_by_its_open_elements_not_its_indentation() -> None:
    rule = learned_rules(FEEDS, Feed)["title"]
    assert rule.parents == ("<channel>", "<rss>")
    assert "under '<channel>' under '<rss>'" in rule.describe()
    assert rule.values(FLUSH) == ["Harbour Log"]
    rules = {"title": rule}
    assert scored(Feed(title="Harbour Log"), FLUSH, rules, "title") == HELD
    assert scored(Feed(title="Low water"), FLUSH, rules, "title") < REVIEW_BELOW


def test_markup_element_only_inside_another_element_is_not_pinned() -> None:
    rule = learned_rules(FEEDS, Feed)["title"]
    assert rule.off_depth(NO_OWN)
    assert scored(Feed(title="Low water"), NO_OWN, {"title": rule}, "title") < REVIEW_BELOW


class Build(BaseModel):
    version: str | None = Field(None, description="the project's own version")


PROJECTS = [
    Example('<Project Sdk="Microsoft.NET.Sdk">\n  <PropertyGroup>\n    <Version>2.1.0</Version>\n'
            "  </PropertyGroup>\n  <ItemGroup>\n"
            '    <PackageReference Include="Serilog">\n      <Version>3.1.1</Version>\n'
            "    </PackageReference>\n  </ItemGroup>\n</Project>\n",
            Build(version="2.1.0")),
    Example('<Project Sdk="Microsoft.NET.Sdk">\n  <ItemGroup>\n'
            '    <PackageReference Include="Dapper">\n      <Version>2.0.123</Version>\n'
            "    </PackageReference>\n  </ItemGroup>\n  <PropertyGroup>\n"
            "    <Version>0.4.0-beta</Version>\n  </PropertyGroup>\n</Project>\n",
            Build(version="0.4.0-beta")),
]
# nothing indented: every <Version> at indentation depth 0, the package's first
UNINDENTED = ('<Project Sdk="Microsoft.NET.Sdk">\n<ItemGroup>\n<PackageReference Include="Polly">\n'
              "<Version>8.2.0</Version>\n</PackageReference>\n</ItemGroup>\n<PropertyGroup>\n"
              "<Version>1.0.5</Version>\n</PropertyGroup>\n</Project>\n")


def test_markup_element_of_an_unindented_document_read_under_its_parents() -> None:
    rule = learned_rules(PROJECTS, Build)["version"]
    assert rule.depth == 2 and rule.parents == ("<PropertyGroup>", "<Project>")
    assert rule.values(UNINDENTED) == ["1.0.5"]
    assert scored(Build(version="1.0.5"), UNINDENTED, {"version": rule}, "version") == HELD
    assert scored(Build(version="8.2.0"), UNINDENTED, {"version": rule}, "version") < REVIEW_BELOW


def test_element_paths_follow_tags() -> None:
    lines = ['<?xml version="1.0"?>', "<project>", "<!-- <parent> -->", "<parent>",
             "    <groupId>a</groupId>", "    <relativePath/>", "</parent>", "",
             "<groupId>b</groupId>",
             '<build><plugin x="a>b">', "  <id>c</id></plugin>", "</build>", "</project>"]
    assert is_markup(lines)
    assert element_paths(lines) == [(), (), ("<project>",), ("<project>",),
                                    ("<parent>", "<project>"), ("<parent>", "<project>"),
                                    ("<project>",), ("<project>",), ("<project>",),
                                    ("<project>",), ("<plugin>", "<build>", "<project>"),
                                    ("<project>",), ()]
    assert line_depths(lines)[4] == 2 and line_depths(lines)[8] == 1
    assert parent_keys(lines, 4) == ("<parent>", "<project>")


def test_html_void_elements_open_nothing() -> None:
    lines = ["<!DOCTYPE html>", "<html>", "<head>", '<meta charset="utf-8">', "<title>x</title>",
             "</head>", "</html>"]
    assert line_depths(lines) == [0, 0, 1, 2, 2, 1, 0]


def test_text_that_is_not_markup_keeps_its_indentation_depths() -> None:
    assert not is_markup(["<jane@example.org> wrote:", "  > hello"])
    assert not is_markup(["name: x", "  <b>y</b>"])
    assert not is_markup(['<p align="center"><img src="logo.png"/></p>', "", "# Tool", "",
                          "- a:", "  - b: c"])
    assert line_depths(["a:", "  b: <i>c</i>"]) == [0, 1]
