"""An element the parent element every example writes it under does not
hold is a sure null, as a nested YAML or JSON key written nowhere is
(newcomer23 probe, finding 5): 5 of 6 real poms write no ``<packaging>``, 4
no ``<name>``, and their nulls were 0.7, the grammar offering any text (the
model wrote ``xmlns:xsi="..."``, a plugin's goal, the artifactId). Sure only
where the document writes such a parent and none holds the element: one
written in a comment is none, one under another parent (a ``<developer>``'s
``<name>``) another thing's; not where a child the examples never write
there holds text like the field's values, nor without such a parent."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import ABSENT, DISAGREES, REVIEW_BELOW
from agentflow.grounding.locator_absence import absence_shown, element_absent
from agentflow.grounding.markup import element_children
from tests.locator_support import learned_rules, offered_node, scored


class Pom(BaseModel):
    artifact_id: str | None = None
    packaging: str | None = None
    name: str | None = None


def _pom(artifact: str, rest: str) -> str:
    return ("<project>\n  <modelVersion>4.0.0</modelVersion>\n"
            f"  <artifactId>{artifact}</artifactId>\n{rest}  <dependencies>\n    <dependency>\n"
            "      <artifactId>junit</artifactId>\n"
            "    </dependency>\n  </dependencies>\n</project>\n")


POMS = [
    Example(_pom("csv-merge", "  <packaging>jar</packaging>\n  <name>CSV Merge</name>\n"),
            Pom(artifact_id="csv-merge", packaging="jar", name="CSV Merge")),
    Example(_pom("orders", "  <packaging>war</packaging>\n  <name>Orders Service</name>\n"
                 "  <build>\n    <finalName>orders</finalName>\n  </build>\n"),
            Pom(artifact_id="orders", packaging="war", name="Orders Service")),
]
BARE = _pom("linetoken", "  <properties>\n    <java.version>17</java.version>\n  </properties>\n"
            "  <developers>\n    <developer>\n      <name>Ada Byron</name>\n    </developer>\n"
            "  </developers>\n")


def test_an_element_its_parent_does_not_hold_is_a_sure_null() -> None:
    rules = learned_rules(POMS, Pom)
    for field in ("packaging", "name"):
        rule = rules[field]
        assert element_absent(rule, BARE) and absence_shown(rule, BARE)
        assert scored(Pom(), BARE, rules, field) == ABSENT
        assert offered_node(rule, BARE) == {"anyOf": [{"type": "null"}]}  # only null offered
    assert scored(Pom(name="Ada Byron"), BARE, rules, "name") == DISAGREES  # a developer's
    commented = BARE.replace("  <properties>", "  <!--\n  <packaging>pom</packaging>\n  -->\n"
                             "  <properties>")
    assert scored(Pom(), commented, rules, "packaging") == ABSENT  # a comment holds none


def test_a_null_stays_unsure_where_the_element_may_be() -> None:
    rules = learned_rules(POMS, Pom)
    inline = BARE.replace("<modelVersion>4.0.0</modelVersion>",
                          "<modelVersion>4.0.0</modelVersion><packaging>pom</packaging>")
    assert not element_absent(rules["packaging"], inline)  # written on another's line
    assert scored(Pom(), inline, rules, "packaging") < REVIEW_BELOW
    described = BARE.replace("  <properties>", "  <description>Line Token</description>\n"
                             "  <properties>")
    assert scored(Pom(), described, rules, "name") < REVIEW_BELOW  # may name the project
    nested = "<root>\n" + BARE.replace("\n", "\n  ") + "</root>\n"
    assert scored(Pom(), nested, rules, "packaging") < REVIEW_BELOW  # no parent where
    # the examples write it: not their layout
    cut = BARE[:BARE.index("  <developers>")]  # a chunk cut inside <project>
    assert not element_absent(rules["packaging"], cut)
    prefixed = BARE.replace("  <properties>", "  <pom:packaging>jar</pom:packaging>\n"
                            "  <properties>")
    assert not element_absent(rules["packaging"], prefixed)


def test_element_children() -> None:
    text = ("<a>\n  <b>1</b><c/>\n  <!-- <d>x</d> -->\n  <e><![CDATA[<f>]]></e>\n"
            "  <g><b>2</b></g>\n  loose\n</a>\n")
    held = element_children(text, ("<a>",), 1)
    assert [n for n, _ in held[0]] == ["b", "c", "e", "g", ""]
    assert dict(held[0][:4]) == {"b": "1", "c": "", "e": "<f>", "g": ""}
    assert held[0][4][1].split() == ["loose"]
    assert element_children(text, ("<g>",), 2) == [[("b", "2"), ("", "")]]
    assert element_children(text, ("<g>",), 3) == []
    assert element_children(text[:-5], ("<a>",), 1) is None  # never closed
