"""The embedded grammar's clean edges (``CLEAN_EDGES``) offer only values
whose edges verification accepts (``agentflow.grounding.edges.edge_problem``):
the grammar and the check agree on a value's edges, read as JSON string
units, so an escaped newline after a separator is no way around the check."""

from __future__ import annotations

import json
import re

from agentflow.grounding.edges import edge_problem
from agentflow.output.grammar import substring_grammar
from agentflow.output.grammar_marks import _CLEAN_EDGES
from agentflow.providers._local_grammar import JSON_SEPARATORS

CLEAN = re.compile(_CLEAN_EDGES.split(": /", 1)[1][:-1])
"""The terminal's regex, read by Python (the same classes and escapes)."""

SOURCES = [  # the kinds of document that made the grammar offer a refused value
    "@article{rocamonde_2023_vision,\n  journal={arXiv preprint arXiv:},\n  year={2023}\n}\n",
    "services:\n  grafana:\n    restart: unless-stopped\n    environment:\n      - A=1\n",
    "Factuurnummer: \n993548900\nOrdernummer: \n12572103\n(kopie) [zie] {x}\n",
    "Name:\tBoo\r\nKey = value;\n\"quoted\", \\path\\ \u00a0nbsp\u00a0 end.\n",
]


def body(text: str) -> str:
    """``text`` as a JSON string's body (what the grammar's terminals read)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def offered(source: str) -> list[str]:
    """Every substring of ``source`` whose body the clean terminal matches."""
    return [source[a:b] for a in range(len(source)) for b in range(a + 1, len(source) + 1)
            if CLEAN.fullmatch(body(source[a:b]))]


def test_every_value_the_clean_terminal_offers_has_edges_the_check_accepts() -> None:
    for source in SOURCES:
        values = offered(source)
        assert values
        for value in values:
            why = edge_problem(value, source, (source.index(value), 0))
            assert why is None or "label" in why, (value, why)  # labels: checked by place


def test_a_separator_then_an_escaped_newline_is_not_offered() -> None:
    for value in ("arXiv preprint arXiv:},\n", "environment:\n", "12572103Ordernummer: \n",
                  "x,\t", "\n: x", "(", "{"):
        assert not CLEAN.fullmatch(body(value)), value
    for value in ("arXiv preprint arXiv", "environment", "x", "\"quoted\"", "\\path\\",
                  "a\nb", "(kopie) [zie] {x}"[1:-1]):
        assert CLEAN.fullmatch(body(value)), value


def test_the_grammar_spells_the_unit_wise_terminal() -> None:
    schema = {"type": "object", "properties": {"name": {"anyOf": [
        {"type": "string", "x-grounded": True, "x-grounded-clean": True},
        {"type": "null"}]}}, "required": ["name"], "additionalProperties": False}
    grammar = substring_grammar(schema, SOURCES[1], JSON_SEPARATORS)
    assert grammar is not None and _CLEAN_EDGES in grammar.splitlines()


def test_whole_lines_with_clean_edges_are_offered_clean_ones() -> None:
    """A ``Grounded(whole_lines=True, clean=True)`` field: its lines are held to
    clean edges too (``environment:`` is a whole line verification refuses)."""
    schema = {"type": "object", "properties": {"a": {
        "type": "string", "x-grounded": "whole_lines", "x-grounded-clean": True}},
        "required": ["a"], "additionalProperties": False}
    grammar = substring_grammar(schema, SOURCES[1], JSON_SEPARATORS)
    assert grammar is not None and "(SOURCE_LINES & CLEAN_EDGES)" in grammar
    assert _CLEAN_EDGES in grammar.splitlines()
