"""A value read from a template variable's definition is not pinned where the
document renders it changed as a key's whole value (newcomer22 probe,
finding 6): ``{% set name = "Flask-Cors" %}`` with ``name: {{ name|lower
}}`` means ``flask-cors``; examples whose names are lower case already
cannot show the filter."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.template_uses import defined_variable, rendered_otherwise
from tests.locator_support import learned_rules, scored


class Recipe(BaseModel):
    name: str | None = None
    version: str | None = None


def _recipe(name: str, version: str, *, use: str = "{{ name|lower }}") -> str:
    return (f'{{% set name = "{name}" %}}\n{{% set version = "{version}" %}}\n\npackage:\n'
            f"  name: {use}\n  version: {{{{ version }}}}\n\nsource:\n"
            "  url: https://x.example/{{ name }}-{{ version|replace('.', '_') }}.tar.gz\n")


EXAMPLES = [Example(_recipe("fastbar", "1.4.0"), Recipe(name="fastbar", version="1.4.0")),
            Example(_recipe("quuxlib", "0.9.2"), Recipe(name="quuxlib", version="0.9.2"))]


def test_the_variable_a_definition_names() -> None:
    assert defined_variable('{% set name = "') == "name"
    assert defined_variable("{%- set version=") == "version"
    assert defined_variable('{% assign title = "') == "title"
    assert defined_variable('{{- $name := "') == "name"
    assert defined_variable("name: ") is None and defined_variable("set name = ") is None


def test_a_rendering_that_changes_the_value() -> None:
    left = '{% set name = "'
    for use in ("{{ name|lower }}", "{{ name | lower }}", '"{{ name.lower() }}"',
                "{{- name|replace('-', '_') -}}", "{{ name|slugify }}", "{{ name[0] }}"):
        assert rendered_otherwise(left, "Flask-Cors", f"package:\n  name: {use}\n"), use
    for use in ("{{ name|lower }}", "{{ name }}", "{{ name|lower|trim }}"):
        assert not rendered_otherwise(left, "flask-cors", f"package:\n  name: {use}\n"), use
    # a use inside a longer value renders a part of something else
    assert not rendered_otherwise(left, "Flask-Cors", "url: https://x/{{ name|lower }}.tar.gz\n")
    assert not rendered_otherwise("name: ", "Flask-Cors", "pkg: {{ name|lower }}\n")
    assert rendered_otherwise('{{ $name := "', "Web", "app: {{ $name | upper }}\n")


def test_a_name_rendered_lower_case_is_not_pinned_as_written() -> None:
    rules = learned_rules(EXAMPLES, Recipe)
    doc = _recipe("Flask-Cors", "4.0.1")
    assert rules["name"].values(doc) == ["Flask-Cors"]
    assert scored(Recipe(name="Flask-Cors"), doc, rules, "name") < REVIEW_BELOW
    assert scored(Recipe(version="4.0.1"), doc, rules, "version") == HELD  # URL use: a part
    for doc in (_recipe("pyyaml", "6.0"), _recipe("PyYAML", "6.0", use="{{ name }}"),
                EXAMPLES[0].text):
        name = rules["name"].values(doc)[0]
        assert scored(Recipe(name=name), doc, rules, "name") == HELD, doc
