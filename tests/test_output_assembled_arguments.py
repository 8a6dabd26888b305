"""``output.assembled_arguments.restarted_object``: a streamed start of the
arguments followed by the whole object is that object, found in time linear
in the text (each ``{`` once sliced the rest of it: a long cut-off argument
text took time growing with the square of its length; the time is
``benchmarks/bench_linear.py``'s, never a unit test's)."""

from __future__ import annotations

import pytest

from agentflow.output.assembled_arguments import restarted_object


@pytest.mark.parametrize(("text", "expected"), [
    ('{"command": "ls -l"{"command": "ls -l", "description": "List"}',
     [{"command": "ls -l", "description": "List"}]),  # sgl-project/sglang#23071
    ('{{"city": "Orlando", "days": 3}', [{"city": "Orlando", "days": 3}]),  # vllm#51697
    ('  {"a": 1 \n {"a": 1, "b": 2}  \n', [{"a": 1, "b": 2}]),  # spaces around both
    ('{"a": "{"{"a": "{"}', [{"a": "{"}]),  # a brace inside the start's string
    ('x{"a": 1}', None),  # other text before the object
    ('{"a"{"b": 1}', None),  # a start the object does not begin with
    ('{"a": {"b": 1}}', None),  # a plain object: nothing restarted
    ('{"a": 1}{"a": 1} tail', None),  # text after the object
    ("{" * 2000 + "}", None),  # a run of braces: every place qualifies, none decodes
    ("{}" * 2000 + "{", None),
])
def test_a_restarted_object_is_read_whole(text: str, expected: object) -> None:
    assert restarted_object(text) == expected


def test_a_long_cut_off_text_has_no_restart() -> None:
    text = '{"code": "' + "if (x) { y(); }\\n" * 5000 + '"}'  # the object, never restarted
    assert restarted_object(text) is None
    again = '{"code": "if (x) {' + text  # its start, then the whole of it
    assert restarted_object(again) == [{"code": "if (x) { y(); }\n" * 5000}]

