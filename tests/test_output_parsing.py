"""Tolerant parsing of free text into a validated output."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from agentflow.output.parsing import NoJSONFound, json_candidates, parse_output, strip_thinking
from agentflow.output.schema import OutputSpec


class LabelOutput(BaseModel):
    label: str
    reason: str


SPEC = OutputSpec.of(LabelOutput)


@pytest.mark.parametrize(
    "text",
    [
        '{"label": "billing", "reason": "dup charge"}',
        '```json\n{\n    "label": "billing",\n    "reason": "dup charge"\n}\n```',  # C05
        '```JSON\n{"label": "billing", "reason": "dup charge"}\n```',
        '```\n{"label": "billing", "reason": "dup charge"}\n```',
        'Sure! Here it is:\n{"label": "billing", "reason": "dup charge"}\nHope this helps.',
        '{"label": "billing", "reason": "dup charge",}',  # trailing comma
        "{'label': 'billing', 'reason': 'dup charge'}",  # single quotes
        '{label: "billing", reason: "dup charge"}',  # unquoted keys
        '<think>the user wants {"label": "x"}</think>{"label": "billing", "reason": "dup charge"}',
    ],
)
def test_tolerant_parse(text: str) -> None:
    assert parse_output(text, SPEC) == LabelOutput(label="billing", reason="dup charge")


def test_backticks_inside_strings_survive() -> None:
    text = '```json\n{"label": "code", "reason": "use `x` not ```y```"}\n```'
    out = parse_output(text, SPEC)
    assert out.label == "code" and "`x`" in out.reason


def test_python_literals_repaired_without_eval() -> None:
    class Flags(BaseModel):
        on: bool
        value: int | None

    out = parse_output("{'on': True, 'value': None}", OutputSpec.of(Flags))
    assert out == Flags(on=True, value=None)


def test_picks_the_json_value_that_validates() -> None:
    text = 'Example: {"a": 1}. Answer: {"label": "l", "reason": "r"}'
    assert parse_output(text, SPEC).label == "l"


def test_bare_value_for_wrapped_type() -> None:
    assert parse_output("[1, 2, 3]", OutputSpec.of(list[int])) == [1, 2, 3]
    assert parse_output('{"result": [1]}', OutputSpec.of(list[int])) == [1]
    assert parse_output("42", OutputSpec.of(int)) == 42


def test_prose_only_is_no_json_found() -> None:
    with pytest.raises(NoJSONFound):
        parse_output("Top movies: 1. Movie A  2. Movie B", SPEC)


def test_json_that_does_not_validate_reports_validation_error() -> None:
    with pytest.raises(ValidationError) as info:
        parse_output('{"label": "x"}', SPEC)
    assert info.value.errors()[0]["loc"] == ("reason",)


def test_unclosed_think_runs_to_end_and_candidates_dedupe() -> None:
    assert strip_thinking("<think>still thinking") == ""
    cands = list(json_candidates('```json\n{"a":1}\n```'))
    assert cands.count('{"a":1}') == 1


@pytest.mark.parametrize("text", [
    '{"label": "a", "reason": "cut off in the mid',
    '{"label": "a", "reason": ["x", "y"',
    "{'label': 'a', 'reason': 'b",
])
def test_cut_off_json_is_never_completed_by_repair(text: str) -> None:
    with pytest.raises((ValidationError, NoJSONFound)):
        parse_output(text, SPEC)


def test_closed_syntax_errors_are_still_repaired() -> None:
    assert parse_output("{'label': \"it's\", 'reason': 'b',}", SPEC).label == "it's"
