"""A learned locator reads inside the INI-style group its examples write the
field under (newcomer16b probe, fault 1): where every worked example's value
sits under ``[Desktop Entry]``, a document whose ``[Desktop Entry]`` lacks
``Exec=`` gives the rule nothing, never the ``Exec=`` of a later ``[Desktop
Action search]`` (pinned at 0.99 before); values in different groups, or in
none, learn no group."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import (
    HELD,
    REVIEW_BELOW,
    UNLOCATED_NULL,
    field_confidence,
)
from agentflow.grounding.groups import group_key, group_of, in_group
from agentflow.grounding.locator_absence import absence_confirmed, absence_shown
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locator_rule import VALUES_KEY
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Entry(BaseModel):
    comment: str | None = Field(None, description="Comment=")
    exec_command: str | None = Field(None, description="Exec=")
    icon: str | None = Field(None, description="Icon=")


CALC = ("[Desktop Entry]\nType=Application\nName=Calculator\n"
        "Comment=Perform arithmetic calculations\nExec=gnome-calculator\n"
        "Icon=accessories-calculator\nTerminal=false\n")
EDIT = ("[Desktop Entry]\nVersion=1.0\nName=Text Editor\nComment=Edit text files\n"
        "Exec=gedit %U\nTerminal=false\nType=Application\nIcon=accessories-text-editor\n"
        "Actions=new-window;\n\n[Desktop Action new-window]\nName=New Window\n"
        "Exec=gedit --new-window\n")
EXAMPLES = [
    Example(CALC, Entry(comment="Perform arithmetic calculations", exec_command="gnome-calculator",
                        icon="accessories-calculator")),
    Example(EDIT, Entry(comment="Edit text files", exec_command="gedit %U",
                        icon="accessories-text-editor")),
]
# the main group lacks Exec= / Comment=; a later action group writes them
NO_EXEC = ("[Desktop Entry]\nType=Application\nName=Maps\nComment=Find places\nIcon=maps\n\n"
           "[Desktop Action search]\nName=Search\nExec=maps --search\n")
NO_COMMENT = ("[Desktop Entry]\nType=Application\nName=Paint\nExec=paint %U\nIcon=paint\n\n"
              "[Desktop Action new]\nName=New Image\nComment=Start a blank image\n"
              "Exec=paint --new\n")


def _rules(examples: list[Example] = EXAMPLES) -> dict[str, object]:
    return dict(learn_locators(check_examples(examples, Entry), Entry))


def test_group_lines() -> None:
    assert group_key("[Desktop  Entry]\r") == "[desktop entry]"
    assert group_key("[[bin]]") == "[[bin]]"
    assert group_key('[remote "origin"] # a comment') == '[remote "origin"]'
    for line in ("  [ Jane Doe ]", "[]", "[ ]", "[a]]", "[[a]", "[x](https://x.org)",
                 "[1]: https://x.org", "[a] b", "Name[de]=Karten"):
        assert group_key(line) == "", line
    assert group_of(NO_EXEC, NO_EXEC.index("maps --search")) == "[desktop action search]"
    assert group_of(NO_EXEC, NO_EXEC.index("Find places")) == "[desktop entry]"
    assert group_of("Name=x\n[A]\n", 0) == ""
    inside = in_group(NO_EXEC, "[desktop entry]")
    assert len(inside) == len(NO_EXEC) and "maps --search" not in inside and "Find places" in inside
    assert in_group("Exec=x\nIcon=y\n", "[desktop entry]") == "Exec=x\nIcon=y\n"  # no groups: whole


def test_a_key_of_another_group_is_not_the_value() -> None:
    rules = _rules()
    assert {rules[f].group for f in ("comment", "exec_command", "icon")} == {"[desktop entry]"}
    assert rules["exec_command"].values(NO_EXEC) == []  # was ["maps --search"]
    assert rules["comment"].values(NO_COMMENT) == []  # was ["Start a blank image"]
    assert rules["exec_command"].values(NO_COMMENT) == ["paint %U"]  # not "paint --new" too
    assert rules["comment"].values(NO_EXEC) == ["Find places"]
    assert rules["exec_command"].values("Exec=flat %U\nIcon=flat\n") == ["flat %U"]  # no groups
    assert "inside group '[desktop entry]'" in rules["exec_command"].describe()


def test_another_groups_value_is_not_pinned() -> None:
    rules = _rules()
    wrong = Entry(comment="Find places", exec_command="maps --search", icon="maps")
    confidence, _ = field_confidence(wrong, NO_EXEC, {}, rules)
    assert confidence["exec_command"] < REVIEW_BELOW
    assert confidence["comment"] == HELD and confidence["icon"] == HELD
    # a null is not sure either: the document writes Exec= (in another group)
    confidence, _ = field_confidence(Entry(comment="Find places", icon="maps"), NO_EXEC, {}, rules)
    assert confidence["exec_command"] == UNLOCATED_NULL
    rule = rules["exec_command"]
    assert not absence_shown(rule, NO_EXEC) and not absence_confirmed(rule, NO_EXEC)
    # the grammar offers the field's ordinary grounding, not the other group's value
    schema = {"type": "object", "properties": {"exec_command": {"anyOf": [
        {"type": "string", "x-grounded": True}, {"type": "null"}]}}}
    assert apply_locators(schema, {"exec_command": rule}, NO_EXEC) == schema
    offered = apply_locators(schema, {"exec_command": rule}, NO_COMMENT)
    assert offered["properties"]["exec_command"][VALUES_KEY] == ["paint %U"]


def test_an_example_that_leaves_the_main_group_without_the_key() -> None:
    weather = ("[Desktop Entry]\nType=Application\nName=Weather\nIcon=weather\n\n"
               "[Desktop Action refresh]\nName=Refresh\nComment=Reload the forecast\n"
               "Exec=weather --refresh\n")
    rules = _rules([*EXAMPLES, Example(weather, Entry(icon="weather"))])
    assert rules["exec_command"].group == "[desktop entry]"  # kept (dropped before)
    assert rules["comment"].values(NO_COMMENT) == []


def test_values_in_different_groups_or_none_learn_no_group() -> None:
    other = EDIT.replace("[Desktop Entry]", "[Application]")
    rules = _rules([EXAMPLES[0], Example(other, EXAMPLES[1].output)])
    assert rules and {r.group for r in rules.values()} == {""}
    flat = [Example(e.text.split("\n", 1)[1].split("\n\n")[0], e.output) for e in EXAMPLES]
    rules = _rules(flat)
    assert rules and {r.group for r in rules.values()} == {""}
    assert rules["exec_command"].values(NO_EXEC) == ["maps --search"]  # as before: nothing changes


def test_a_label_alone_in_another_group_is_not_this_rule_s_value_below_it() -> None:
    rule = _rules()["comment"]
    doc = ("[Desktop Entry]\nType=Application\nName=Maps\nComment=Find places\n\n"
           "[Desktop Action search]\nName=Search\nComment=\n  an indented line\n")
    assert rule.group == "[desktop entry]" and rule.continued  # type: ignore[attr-defined]
    # the bare Comment= of the action group says nothing of where this rule's value begins
    assert not rule.begins_below(doc)  # type: ignore[attr-defined]
    assert rule.begins_below(doc.replace("[Desktop Action search]", "[Desktop Entry]"))  # type: ignore[attr-defined]
