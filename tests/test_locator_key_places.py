"""A worked example's value right after its line's key is placed there,
though ``=`` joins a token (``Name=Calculator``), not at a later whole-token
occurrence (``Categories=GNOME;GTK;Utility;Calculator;``): the rule is
learned after the key (newcomer16b probe: no ``name`` rule for .desktop
entries)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, field_confidence
from agentflow.grounding.locator_places import seen_at
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class DesktopEntry(BaseModel):
    name: str | None = Field(None, description="Name=")
    icon: str | None = Field(None, description="Icon=")


EXAMPLES = [
    Example("[Desktop Entry]\nName=Calculator\nIcon=accessories-calculator\n"
            "Categories=GNOME;GTK;Utility;Calculator;\n",
            DesktopEntry(name="Calculator", icon="accessories-calculator")),
    Example("[Desktop Entry]\nVersion=1.0\nName=Text Editor\nName[de]=Texteditor\n"
            "Icon=accessories-text-editor\nCategories=Utility;TextEditor;\n",
            DesktopEntry(name="Text Editor", icon="accessories-text-editor")),
]


def test_a_value_after_its_key_is_placed_there() -> None:
    text = EXAMPLES[0].text
    place = seen_at("Calculator", text)
    assert place is not None and place.before == "Name="
    assert seen_at("Calc", text) is not None  # no whole token: any occurrence, as before
    place = seen_at("Calc", "Name=Calculator\nX=Calc\n")  # a key, up to a token's end
    assert place is not None and place.before == "X="
    place = seen_at("2.1", "Version=12.1\nRelease: 2.1\n")
    assert place is not None and place.before == "Release: "


def test_the_rule_after_an_ini_key_is_learned() -> None:
    rules = learn_locators(check_examples(EXAMPLES, DesktopEntry), DesktopEntry)
    assert rules["name"].left == "Name=" and rules["name"].anchored
    doc = "[Desktop Entry]\nName=Vim\nName[ca]=Vim editor\nIcon=gvim\nCategories=Utility;Vim;\n"
    confidence, _ = field_confidence(DesktopEntry(name="Vim", icon="gvim"), doc, {}, rules)
    assert confidence["name"] == HELD
