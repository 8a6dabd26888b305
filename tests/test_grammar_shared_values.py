"""Two fields whose locators offer the same values share one terminal, and a
third field's terminal is its own (newcomer24 probe, ``.csproj`` kind). A
project whose ``<AssemblyName>`` and ``<RootNamespace>`` hold one value had
both fields offered it; the second field's terminal was named anew with the
name the next terminal then took, so ``root_namespace`` was offered
``<OutputType>``'s ``Exe`` and the embedded model wrote it (4 of 10 files)."""

from __future__ import annotations

import re

from agentflow.output.grammar import substring_grammar
from agentflow.providers._local_grammar import JSON_SEPARATORS

SOURCE = ("<Project>\n  <OutputType>Exe</OutputType>\n  <RootNamespace>Acme.Geo</RootNamespace>\n"
          "  <AssemblyName>Acme.Geo</AssemblyName>\n</Project>\n")


def _offered(grammar: str, field: str) -> str:
    """The literal the terminal of ``field``'s value lists (one value)."""
    rules = dict(line.split(": ", 1) for line in grammar.splitlines() if ": " in line)
    node = re.search(rf'"\\"{field}\\"" ": " (n\d+)', grammar)
    assert node is not None
    terminal = rules[node.group(1)]
    found = re.search(r'\("([^"]*)"\)', rules[terminal])
    assert found is not None
    return found.group(1)


def test_fields_offering_the_same_values_share_one_terminal() -> None:
    def located(value: str, clean: bool) -> dict[str, object]:
        return {"type": "string", "x-grounded": "whole_tokens", "x-grounded-clean": clean,
                "x-grounded-values": [value]}

    for clean in (True, False):
        schema = {"type": "object", "properties": {
            "assembly_name": located("Acme.Geo", clean),
            "root_namespace": located("Acme.Geo", clean), "output_type": located("Exe", clean)},
            "required": ["assembly_name", "root_namespace", "output_type"],
            "additionalProperties": False}
        grammar = substring_grammar(schema, SOURCE, JSON_SEPARATORS)
        assert grammar is not None
        assert _offered(grammar, "assembly_name") == "Acme.Geo"
        assert _offered(grammar, "root_namespace") == "Acme.Geo"
        assert _offered(grammar, "output_type") == "Exe"
