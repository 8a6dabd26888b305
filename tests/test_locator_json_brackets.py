"""A JSON document read by its braces and brackets, not its indentation
(newcomer21 probe, finding 7). A GitHub release response quoted flush left
(as a project's docs print it) put every key at indentation depth 0: the
release's ``"name"`` and its assets' competed, the author's ``"html_url"``
and the release's, and every field was flagged (0.65-0.8). Its
``"assets": [...]`` items were no records (a release of two assets flagged
its first asset's name), the uploader's login written once an asset
disagreed with the author's, and ``"name": null`` / ``"assets": []`` left a
null unsure (0.7), though the document says it as plainly as a label with
nothing after it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import ABSENT, HELD, REVIEW_BELOW
from agentflow.grounding.brackets import bracket_paths, is_bracketed, item_spans
from agentflow.grounding.depths import line_depths
from agentflow.grounding.key_paths import parent_keys
from agentflow.grounding.locator_absence import absence_shown
from tests.locator_support import learned_rules, scored


class Package(BaseModel):
    name: str | None = Field(None, description="the package's own name")
    owner: str | None = Field(None, description="the owner's login")
    first_file: str | None = Field(None, description="the name of the first file")


def _doc(name: str, owner: str, files: list[str], indent: str = "  ", owner_first: bool = False,
         uploader: str = "") -> str:
    i1, i2, i3 = indent, indent * 2, indent * 3
    up = f',\n{i3}"uploader": {{\n{i3}{indent}"login": "{uploader or owner}"\n{i3}}}'
    items = ",\n".join(f'{i2}{{\n{i3}"name": "{f}",\n{i3}"size": 10{up}\n{i2}}}' for f in files)
    owner_part = (f'{i1}"owner": {{\n{i2}"login": "{owner}",\n'
                  f'{i2}"name": "{owner.title()}"\n{i1}}},\n')
    head = f'{i1}"name": "{name}",\n'
    body = owner_part + head if owner_first else head + owner_part
    return "{\n" + body + f'{i1}"files": [\n{items}\n{i1}]\n}}\n'


EXAMPLES = [
    Example(_doc("rocket", "wile-e", ["rocket.tar.gz", "rocket.zip"]),
            Package(name="rocket", owner="wile-e", first_file="rocket.tar.gz")),
    Example(_doc("lamp", "lumen-bot", ["lamp.zip"], owner_first=True),
            Package(name="lamp", owner="lumen-bot", first_file="lamp.zip")),
]
FLUSH = _doc("kite", "octo", ["kite-a.whl", "kite-b.whl"], indent="", owner_first=True)
EMPTY = ('{\n  "name": null,\n  "owner": {\n    "login": "octo"\n  },\n'
         '  "upload_url": "https://x.example/files{?name,label}",\n  "files": []\n}\n')


def test_json_nesting_read_from_brackets() -> None:
    lines = FLUSH.splitlines()
    assert is_bracketed(lines)
    row = lines.index('"name": "kite-a.whl",')
    assert line_depths(lines)[row] == 3 and parent_keys(lines, row) == ("-", "files")
    assert bracket_paths(['{', '"a": "x[1]",', '"b": {', '"c": 1', '},', '"d": 2', '}'])[3:6] == [
        ("b", ""), ("",), ("",)]
    spans = [s for s in item_spans(lines) if s[0] == "files"]
    assert len(spans) == 2
    assert not is_bracketed(["[Unit]", '"Description": x'])


def test_unindented_json_pins_the_documents_own_values() -> None:
    rules = learned_rules(EXAMPLES, Package)
    assert rules["first_file"].parents == ("-", "files")
    assert rules["first_file"].record == "array files"
    assert rules["name"].values(FLUSH) == ["kite"]
    assert scored(Package(name="kite"), FLUSH, rules, "name") == HELD
    assert scored(Package(owner="octo"), FLUSH, rules, "owner") == HELD
    assert scored(Package(first_file="kite-a.whl"), FLUSH, rules, "first_file") == HELD
    assert scored(Package(first_file="kite-b.whl"), FLUSH, rules, "first_file") < REVIEW_BELOW
    assert scored(Package(name="kite-a.whl"), FLUSH, rules, "name") < REVIEW_BELOW


def test_a_twin_that_finds_the_same_value_twice_agrees() -> None:
    rules = learned_rules(EXAMPLES, Package)
    assert rules["owner"].twins  # the uploader's login, written in the examples too
    doc = _doc("kite", "octo", ["kite-a.whl", "kite-b.whl"])
    assert scored(Package(owner="octo"), doc, rules, "owner") == HELD
    other = _doc("kite", "octo", ["kite-a.whl"], uploader="bot")
    assert scored(Package(owner="octo"), other, rules, "owner") < REVIEW_BELOW


def test_json_null_and_empty_array_are_sure_nulls() -> None:
    rules = learned_rules(EXAMPLES, Package)
    for name in ("name", "first_file"):
        assert rules[name].values(EMPTY) == []
        assert absence_shown(rules[name], EMPTY)
        assert scored(Package(), EMPTY, rules, name) == ABSENT
    # the key written with a value elsewhere: a value the rule missed may be there
    elsewhere = EMPTY.replace('"files": []', '"files": [],\n  "meta": {\n    "name": "kite"\n  }')
    assert scored(Package(), elsewhere, rules, "name") < REVIEW_BELOW
