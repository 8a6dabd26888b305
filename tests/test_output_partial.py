"""Partial output while it streams: grows, never regresses, unwraps."""

from __future__ import annotations

from agentflow.output.partial import PartialOutput, json_start


def test_grows_and_never_regresses() -> None:
    p = PartialOutput(wrapped=False)
    assert p.from_text('{"na') is None  # nothing yet
    assert p.from_text('{"name": "An') == {"name": "An"}
    assert p.from_text('{"name": "An') is None  # unchanged: no event
    assert p.from_text('{"name": "Ann", "email": "a') == {"name": "Ann", "email": "a"}
    assert p.update({"email": "a"}) is None  # a field already seen disappeared
    assert p.from_text("not json") is None


def test_unwraps_wrapped_outputs() -> None:
    p = PartialOutput(wrapped=True)
    assert p.from_text('{"other": 1') is None
    assert p.from_text('{"result": [1, 2') == [1, 2]


def test_json_start_skips_prose() -> None:
    assert json_start('Sure: {"a": 1}') == '{"a": 1}'
    assert json_start("[1]") == "[1]"
    assert json_start("no json") is None
