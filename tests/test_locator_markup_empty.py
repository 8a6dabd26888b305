"""An empty markup element (``<x .../>``) is a record as an element with an
end tag is (newcomer22 probe, finding 1). A ``.csproj``'s
``<PackageReference Include=".." Version=".."/>``s, an Android manifest's
``<uses-permission .../>``s and ``<activity .../>``s, NuGet's
``<package .../>``s were no records: the first of several was never pinned
(0.8, example 1's own text included), a one-line ``<activity .../>`` before
a multi-line ``<activity>`` left the later one's name pinned as the first's
(0.99, wrong), and a lone ``<activity`` written over lines up to ``/>`` had
its attribute lines outside it (the label off its depth: 0.8). The same
examples written with end tags learned "in the first element" and pinned.
A rule read at the start of an element's attribute lines (``android:name="``)
reads the attribute on its start tag's line too (``<activity
android:name=".Splash" />``): of the element it reads inside, only.
And a manifest written as Android Studio writes it, an attribute a line,
has more attribute lines than tag lines: it was read by its indentation,
not as markup, and its package and label were flagged (4 of 10 real
manifests)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.markup import element_paths, element_spans, is_markup
from agentflow.grounding.sibling_blocks import record_spans
from tests.locator_support import learned_rules, scored


class Project(BaseModel):
    framework: str | None = None
    first_package: str | None = Field(None, description="the first PackageReference's Include")


def csproj(framework: str, packages: list[str], *, closed: bool = False) -> str:
    """A ``.csproj`` referencing ``packages``, each ``<PackageReference .../>``
    on a line (``closed``: with an end tag on the next line)."""
    end = ">\n    </PackageReference>\n" if closed else " />\n"
    refs = "".join(f'    <PackageReference Include="{p}" Version="1.0.{i}"{end}'
                   for i, p in enumerate(packages))
    return (f'<Project Sdk="Microsoft.NET.Sdk">\n  <PropertyGroup>\n'
            f"    <TargetFramework>{framework}</TargetFramework>\n  </PropertyGroup>\n"
            f"  <ItemGroup>\n{refs}  </ItemGroup>\n</Project>\n")


def csproj_examples(*, closed: bool = False) -> list[Example]:
    return [Example(csproj("net8.0", ["Serilog", "Dapper"], closed=closed),
                    Project(framework="net8.0", first_package="Serilog")),
            Example(csproj("net6.0", ["Polly", "xunit"], closed=closed),
                    Project(framework="net6.0", first_package="Polly"))]


class Manifest(BaseModel):
    first_activity: str | None = Field(None, description="android:name of the first <activity>")


def manifest(activities: str) -> str:
    """An Android manifest whose ``<application>`` holds ``activities``."""
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<manifest xmlns:android="http://schemas.android.com/apk/res/android">\n'
            "    <application>\n" + activities + "    </application>\n</manifest>\n")


def activity(name: str, *, empty: bool = False) -> str:
    """An ``<activity`` written over lines, up to ``/>`` (``empty``) or with an intent filter."""
    head = (f'        <activity\n            android:name="{name}"\n'
            '            android:exported="true"')
    if empty:
        return head + " />\n"
    return (head + ">\n            <intent-filter>\n                <action android:name="
            '"android.intent.action.MAIN" />\n            </intent-filter>\n        </activity>\n')


MANIFESTS = [
    Example(manifest(activity(".MainActivity") + activity(".SettingsActivity", empty=True)),
            Manifest(first_activity=".MainActivity")),
    Example(manifest(activity(".ui.MapActivity")), Manifest(first_activity=".ui.MapActivity")),
]


def test_an_empty_element_spans_its_tags_lines() -> None:
    lines = csproj("net8.0", ["Serilog", "Dapper"]).splitlines()
    assert record_spans(lines, "element Project/ItemGroup/PackageReference") == [
        (5, 6, ""), (6, 7, "")]
    lines = manifest(activity(".A", empty=True) + activity(".B")).splitlines()
    assert record_spans(lines, "element manifest/application/activity") == [
        (3, 6, ""), (6, 13, "")]
    # two empty elements of a path on one line cannot be told apart by lines: no records
    assert not [s for s in element_spans(["<a>", "<b x='1'/><b x='2'/>", "</a>"]) if s[0] == "a/b"]


def test_an_empty_elements_attribute_lines_are_inside_it() -> None:
    lines = manifest(activity(".A", empty=True) + "        <service />\n").splitlines()
    paths = element_paths(lines)
    inside = ("<activity>", "<application>", "<manifest>")
    assert paths[4] == inside and paths[5] == inside  # android:name=, android:exported= />
    assert paths[6] == ("<application>", "<manifest>")  # the next element's line: outside it
    assert paths[3] == ("<application>", "<manifest>")  # its own tag's first line, as <x>'s


def test_the_first_of_several_empty_elements_is_pinned() -> None:
    for closed in (False, True):  # as it is where each has an end tag
        rules = learned_rules(csproj_examples(closed=closed), Project)
        rule = rules["first_package"]
        assert rule.record == "element Project/ItemGroup/PackageReference"
        assert "in the first element 'Project/ItemGroup/PackageReference'" in rule.describe()
        three = csproj("net7.0", ["Moq", "NUnit", "Bogus"], closed=closed)
        assert scored(Project(first_package="Moq"), three, rules, "first_package") == HELD
        own = csproj_examples(closed=closed)[0].text
        assert scored(Project(first_package="Serilog"), own, rules, "first_package") == HELD
        assert scored(Project(first_package="NUnit"), three, rules, "first_package") < REVIEW_BELOW


def test_an_attribute_on_a_start_tags_line_is_read() -> None:
    rules = learned_rules(MANIFESTS, Manifest)
    rule = rules["first_activity"]
    assert rule.record == "element manifest/application/activity"
    # example 1's one-line <activity .../> is read: its two activities differ, the first's meant
    assert rule.values(MANIFESTS[0].text) == [".MainActivity", ".SettingsActivity"]
    assert rule.several
    one_line = '        <activity android:name=".SplashActivity" android:theme="@style/S" />\n'
    doc = manifest(one_line + activity(".MainActivity"))
    assert rule.values(doc) == [".SplashActivity", ".MainActivity"]
    assert scored(Manifest(first_activity=".SplashActivity"), doc, rules, "first_activity") == HELD
    assert scored(Manifest(first_activity=".MainActivity"), doc, rules,
                  "first_activity") < REVIEW_BELOW
    two = manifest(activity(".First", empty=True) + activity(".Second"))
    assert scored(Manifest(first_activity=".First"), two, rules, "first_activity") == HELD
    # the first line of a tag written over lines; never another element's tag
    doc = manifest('        <activity android:name=".Main"\n            android:exported="true">\n'
                   "        </activity>\n").replace(
        "<application>", '<application android:name=".App">')
    assert rule.values(doc) == [".Main"]
    assert scored(Manifest(first_activity=".Main"), doc, rules, "first_activity") == HELD


def test_a_later_elements_value_is_not_pinned_past_an_empty_one_without_it() -> None:
    rules = learned_rules(MANIFESTS, Manifest)
    doc = manifest('        <activity android:enabled="false" />\n' + activity(".MainActivity"))
    assert rules["first_activity"].values(doc) == [".MainActivity"]
    assert scored(Manifest(first_activity=".MainActivity"), doc, rules,
                  "first_activity") < REVIEW_BELOW


def test_a_lone_empty_element_over_lines_is_read_at_its_depth() -> None:
    rules = learned_rules(MANIFESTS, Manifest)
    doc = manifest(activity(".Only", empty=True))
    assert rules["first_activity"].values(doc) == [".Only"]
    assert not rules["first_activity"].off_depth(doc)
    assert scored(Manifest(first_activity=".Only"), doc, rules, "first_activity") == HELD


class App(BaseModel):
    package: str | None = None
    label: str | None = None


def app_manifest(package: str, label: str, attributes: int) -> str:
    """A manifest whose ``<application`` writes ``attributes`` more attributes, one a line."""
    extra = "".join(f'        android:a{i}="v{i}"\n' for i in range(attributes))
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<manifest xmlns:android="http://schemas.android.com/apk/res/android"\n'
            f'    package="{package}">\n    <application\n{extra}'
            f'        android:label="{label}">\n'
            '        <activity android:name=".Main" />\n    </application>\n</manifest>\n')


def test_a_document_of_attribute_lines_is_markup() -> None:
    rules = learned_rules([Example(app_manifest("org.a", "A", 0), App(package="org.a", label="A")),
                           Example(app_manifest("org.b", "B", 1), App(package="org.b", label="B"))],
                          App)
    doc = app_manifest("org.c", "C", 9)  # 7 lines begin with '<', 11 inside a tag
    assert is_markup(doc.splitlines())
    assert element_paths(doc.splitlines())[13] == ("<application>", "<manifest>")
    assert scored(App(package="org.c"), doc, rules, "package") == HELD
    assert scored(App(label="C"), doc, rules, "label") == HELD
    # prose after a logo or a comment is never inside a tag: a Markdown page stays text
    assert not is_markup(['<p align="center">', '  <img src="logo.png"', '    alt="Tool"/>',
                          "</p>", "", "# Tool", "", "A tool that does a thing.", "", "## Install",
                          "", "    pip install tool", "", "## Licence", "", "MIT"])
