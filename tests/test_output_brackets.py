"""Closing brackets set right (agentflow/output/brackets.py): lost ones added
after a whole value when the reply ended normally, doubled ones dropped after
one whole object; anything else is not this fault."""

from __future__ import annotations

import pytest

from agentflow.output.brackets import rebalanced, trailing_closers


@pytest.mark.parametrize(("text", "add", "expected"), [
    ('{"id": 42', True, '{"id": 42}'),                                  # vLLM Hermes, streamed
    ('{"a": {"b": [1, true]}', True, '{"a": {"b": [1, true]}}'),        # after a whole object
    ('{"a": {"b": [1, true', True, None),                 # cut inside a value: not repaired
    ('{"name": "Ana", "items": ["a", "b"', True, None),   # issue 32: a router's tool_calls
    ('{"a": null', True, '{"a": null}'),
    ('{"a": "x"', True, '{"a": "x"}'),
    ('{"a": "}]"', True, '{"a": "}]"}'),                               # brackets in a string
    ('{"a": "say \\"hi\\""', True, '{"a": "say \\"hi\\""}'),
    ("{", True, None),                                    # no whole value yet
    ('{"a": 1}}', True, '{"a": 1}'),                                    # Qwen's extra brace
    ('{"a": 1}} ]\n', False, '{"a": 1}'),
    ('  {"a": [1]}]', False, '{"a": [1]}'),
    ('{"id": 42', False, None),                          # a cut reply: 42 may have been 420
    ('{"a": "x', True, None),                            # inside a string
    ('{"a": 1,', True, None),                            # after a comma
    ('{"a":', True, None),                               # after a colon
    ('{"a": [1}', True, None),                           # mismatched
    ('{"a": 1}} and prose', True, None),                 # not only closers after it
    ('{"a": 1}{"b": 2}', True, None),                    # glued objects: another fault
    ('[1, 2', True, None),                               # not an object
    ("", True, None),
])
def test_rebalanced(text: str, add: bool, expected: str | None) -> None:
    assert rebalanced(text, add=add) == expected


def test_trailing_closers() -> None:
    assert trailing_closers(" } ]\n") and trailing_closers("}")
    assert not trailing_closers("  ") and not trailing_closers("} x")
