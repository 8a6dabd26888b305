"""A worked example's value written in several places (newcomer17 probe):
twice by a format's habit (``.gitmodules`` names each submodule after its
path: ``[submodule "cub"]`` over ``path = cub``), both places make a rule
that holds on every example, and a document whose header and path differ
pins neither; first inside another value (``PRETTY_NAME="Debian GNU/Linux
11"`` before ``NAME="Debian GNU/Linux"``), the rule is learned from the
value's own line."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.locator_places import closest, places_at, seen_at
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locator_twins import MAX_PLACES, anchors
from agentflow.grounding.locators import apply_locators, learn_locators
from agentflow.grounding.marker import mark_all_strings
from agentflow.output.examples import check_examples
from agentflow.output.schema import OutputSpec


class Submodules(BaseModel):
    paths: list[str] = Field(default_factory=list)
    urls: list[str] = Field(default_factory=list)


MODULES = [
    Example('[submodule "vendor/fmt"]\n\tpath = vendor/fmt\n\turl = https://x.org/fmt.git\n'
            '[submodule "docs/theme"]\n\tpath = docs/theme\n\turl = https://x.org/theme\n',
            Submodules(paths=["vendor/fmt", "docs/theme"],
                       urls=["https://x.org/fmt.git", "https://x.org/theme"])),
    Example('[submodule "lib/zlib"]\n\tpath = lib/zlib\n\turl = https://x.org/zlib.git\n'
            '\tbranch = develop\n[submodule "tools/lint"]\n\tpath = tools/lint\n'
            '\turl = git@x.org:lint.git\n',
            Submodules(paths=["lib/zlib", "tools/lint"],
                       urls=["https://x.org/zlib.git", "git@x.org:lint.git"])),
]
RENAMED = ('[submodule "cub"]\n\tpath = external/cub\n\turl = https://x.org/cub.git\n'
           '[submodule "bliss"]\n\tpath = bliss\n\turl = https://x.org/bliss.git\n')
BARE = "\tpath = ext/cub\n\turl = https://x.org/cub.git\n"  # no header: the other place
SAME = ('[submodule "ext/cub"]\n\tpath = ext/cub\n\turl = https://x.org/cub.git\n'
        '[submodule "bliss"]\n\tpath = bliss\n\turl = https://x.org/bliss.git\n')


def _rules() -> dict[str, object]:
    return dict(learn_locators(check_examples(MODULES, Submodules), Submodules))


def test_a_value_written_twice_has_a_place_for_each() -> None:
    text = MODULES[0].text
    places = places_at("vendor/fmt", text)
    assert [p.before for p in places] == ['[submodule "', "\tpath = "]
    assert seen_at("vendor/fmt", text) == places[0]  # the first, as before
    assert seen_at("docs/theme", text, places[1]).before == "\tpath = "  # the same label
    assert closest(places_at("docs/theme", text), places[0]).before == '[submodule "'


def test_both_places_hold_and_neither_is_sure_where_they_differ() -> None:
    rules = learn_locators(check_examples(MODULES, Submodules), Submodules)
    paths = rules["paths"]
    assert paths.left == "path = " and paths.anchored  # the key's place is the rule
    assert [t.left for t in paths.twins] == ['[submodule "']
    assert paths.values(RENAMED) == ["external/cub", "bliss"]
    assert not paths.twins_agree(RENAMED) and paths.twins_agree(SAME)
    assert paths.twins_agree(BARE)  # a twin that reads nothing says nothing
    assert not paths.twins_agree('[submodule "cub"]\n')  # a twin's value where the rule has none
    for wrong in (["cub", "bliss"], ["external/cub", "bliss"]):  # either reading: unpinned
        confidence, _ = field_confidence(
            Submodules(paths=wrong, urls=["https://x.org/cub.git", "https://x.org/bliss.git"]),
            RENAMED, {}, rules)
        assert confidence["paths"] < REVIEW_BELOW
        assert confidence["urls"] == HELD  # written once in each example: one rule, sure
    confidence, _ = field_confidence(
        Submodules(paths=["ext/cub", "bliss"],
                   urls=["https://x.org/cub.git", "https://x.org/bliss.git"]), SAME, {}, rules)
    assert confidence["paths"] == HELD  # both places read the same: still sure


def test_the_grammar_offers_twins_values_only_where_they_agree() -> None:
    rules = learn_locators(check_examples(MODULES, Submodules), Submodules)
    schema = mark_all_strings(OutputSpec.of(Submodules).schema_for("local").schema, None)
    renamed = apply_locators(schema, rules, RENAMED)
    assert renamed["properties"]["paths"] == schema["properties"]["paths"]
    assert "x-grounded-values" in json.dumps(renamed["properties"]["urls"])
    same = apply_locators(schema, rules, SAME)
    assert "ext/cub" in json.dumps(same["properties"]["paths"])


def test_the_run_names_both_places() -> None:
    checked = check_examples(MODULES, Submodules)
    lines = learned_lines(learn_locators(checked, Submodules), checked, Submodules)
    assert "after 'path = '" in lines[0] and "also paths:" in lines[0]
    assert "[submodule" in lines[0] and "also" not in lines[1]


class OsRelease(BaseModel):
    name: str | None = None
    version_id: str | None = None
    version_codename: str | None = None


RELEASES = [
    Example('PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"\nNAME="Debian GNU/Linux"\n'
            'VERSION_ID="11"\nVERSION="11 (bullseye)"\nVERSION_CODENAME=bullseye\nID=debian\n',
            OsRelease(name="Debian GNU/Linux", version_id="11", version_codename="bullseye")),
    Example('NAME="Ubuntu"\nVERSION="20.04.6 LTS (Focal Fossa)"\nID=ubuntu\n'
            'PRETTY_NAME="Ubuntu 20.04.6 LTS"\nVERSION_ID="20.04"\nVERSION_CODENAME=focal\n'
            'UBUNTU_CODENAME=focal\n',
            OsRelease(name="Ubuntu", version_id="20.04", version_codename="focal")),
]
BOOKWORM = ('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\n'
            'VERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n')


def test_a_value_first_written_inside_another_is_learned_at_its_own_line() -> None:
    rules = learn_locators(check_examples(RELEASES, OsRelease), OsRelease)
    assert (rules["name"].left, rules["name"].right) == ('NAME="', '"')
    assert (rules["version_id"].left, rules["version_id"].right) == ('VERSION_ID="', '"')
    assert rules["version_codename"].left == "VERSION_CODENAME="
    assert not any(rule.twins for rule in rules.values())
    assert rules["name"].values(BOOKWORM) == ["Debian GNU/Linux"]
    confidence, _ = field_confidence(
        OsRelease(name="Debian GNU/Linux", version_id="12", version_codename="bookworm"),
        BOOKWORM, {}, rules)
    assert confidence == {"name": HELD, "version_id": HELD, "version_codename": HELD}


class Flags(BaseModel):
    flag: str | None = None


def test_a_common_word_is_not_learned_from_each_place() -> None:
    prose = "\n".join(f"line {i}: yes, the answer is yes or no" for i in range(40))
    examples = [Example(f"Flag: yes\n{prose}\n", Flags(flag="yes")),
                Example(f"Flag: no\n{prose}\n", Flags(flag="no"))]
    checked = check_examples(examples, Flags)
    assert len(places_at("yes", examples[0].text)) > MAX_PLACES
    assert anchors("flag", checked) == []  # a common word: its first place alone
    rule = learn_locators(checked, Flags)["flag"]
    assert (rule.left, rule.twins) == ("Flag: ", ())
