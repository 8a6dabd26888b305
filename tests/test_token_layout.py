"""A reply that is exactly ``orjson``'s layout of its object has its fields'
places read off that layout (``token_confidence._laid_out``): the same
places ``value_spans`` reads in its text, in bytes; any other reply is left
to ``value_spans``."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentflow.model import TokenLogprob
from agentflow.output.token_confidence import (
    _laid_out,
    field_probabilities,
    key_sizes,
    value_spans,
)

OBJECTS: list[dict[str, Any]] = [
    {"name": "Person0", "email": None, "phone": None, "company": None, "title": None},
    {"a": "", "b": 0, "c": -1.5, "d": True, "e": False, "f": 12345678901234},
    {"name": "Zoë Ångström", "city": "東京", "note": "tab\there \"quoted\" \\ back"},
    {"k\"ey": "v", "ключ": "значение", "emoji": "🎉 party"},
    {"x": 1e-7, "y": 1.0e16, "z": 0.1},
    {},
]


def _in_bytes(text: str, spans: dict[str, list[tuple[int, int]]]) -> dict[str, list[tuple[
        int, int]]]:
    return {k: [(len(text[:s].encode()), len(text[:e].encode())) for s, e in v]
            for k, v in spans.items()}


@pytest.mark.parametrize("obj", OBJECTS)
def test_the_layout_gives_value_spans_places(obj: dict[str, Any]) -> None:
    data = orjson.dumps(obj)
    text = data.decode()
    assert _laid_out(data, {}) == _in_bytes(text, value_spans(text))
    # the schema's key sizes, known beforehand (half of them here), change nothing
    assert _laid_out(data, key_sizes(list(obj)[::2])) == _laid_out(data, {})


@pytest.mark.parametrize("data", [
    b'{"a": "x"}',                      # not orjson's layout (a space)
    b'{"a":"caf\\u00e9"}',              # an escape orjson does not write
    b'{"a":"x","a":"y"}',               # a repeated key
    b'{"a":[1,2],"b":"x"}',             # leaves inside a value
    b'{"a":{"b":"c"}}',
    b'{"a":"x"} trailing',
    b'{"a":"x"',                        # cut short
    b'[1,2]',
    b'prose {"a":"x"}',
    b'{"a":"\xff"}',                    # not UTF-8
])
def test_any_other_reply_is_left_to_value_spans(data: bytes) -> None:
    assert _laid_out(data, {}) is None


@pytest.mark.parametrize("obj", OBJECTS)
@pytest.mark.parametrize("cut", [1, 2, 3, 5])
def test_field_probabilities_are_those_of_the_tokens_over_each_value(
        obj: dict[str, Any], cut: int) -> None:
    data = orjson.dumps(obj)
    pieces = [data[i:i + cut] for i in range(0, len(data), cut)]
    tokens = [TokenLogprob(p.decode(errors="replace"), -0.01 * (i % 7) - 0.001, p)
              for i, p in enumerate(pieces)]
    ends = [sum(len(p) for p in pieces[:i + 1]) for i in range(len(pieces))]
    got = field_probabilities(tokens)
    assert set(got) == set(obj) and field_probabilities(tokens, key_sizes(obj)) == got
    text = data.decode()
    for key, leaves in _in_bytes(text, value_spans(text)).items():
        lo, hi = leaves[0]
        over = [t.logprob for t, end, start in zip(tokens, ends, [0, *ends], strict=False)
                if end > lo and (start < hi or start <= lo)]
        assert got[key] == pytest.approx(2.718281828459045 ** min([0.0, *over]))


def test_key_sizes_are_the_schema_field_names_only() -> None:
    # a dict output's keys come from documents: none is kept (a process-wide
    # cache of keys read off replies held up to 1,024 document strings)
    from pydantic import BaseModel, Field

    from agentflow.output.schema import OutputSpec

    class Person(BaseModel):
        name: str
        city: str = Field(alias='Zoë "C"')

    assert OutputSpec.of(Person).key_sizes == {"name": 6, 'Zoë "C"': len(orjson.dumps('Zoë "C"'))}
    assert OutputSpec.of(dict[str, int]).key_sizes.keys() <= {"result"}  # its wrapper only


def test_a_reply_nested_thousands_deep_is_read_to_its_leaves() -> None:
    depth = 5_000  # (a call per level once: past Python's recursion limit)
    text = '{"a": ' + '[1, ' * depth + "]" * depth + ', "b": "x"}'
    spans = value_spans(text)
    assert len(spans["a"]) == depth and {text[s:e] for s, e in spans["a"]} == {"1"}
    assert [text[s:e] for s, e in spans["b"]] == ["x"]


def test_many_items_of_a_reply_in_other_scripts_map_to_their_own_tokens() -> None:
    items = [f"café {i} ñ" for i in range(3_000)]
    weak = 1_234  # one token of one item the model was unsure of
    pieces = ['{"title": "t", "items": [']
    logprobs = [-0.1]
    for i, item in enumerate(items):
        pieces += [("" if i == 0 else ", ") + '"', item, '"']
        logprobs += [-0.1, -4.0 if i == weak else -0.01, -0.1]
    pieces.append("]}")
    logprobs.append(-0.1)
    tokens = [TokenLogprob(p, lp) for p, lp in zip(pieces, logprobs, strict=True)]
    probs = field_probabilities(tokens)
    assert probs["items"] == pytest.approx(2.718281828 ** -4.0)
    assert probs["title"] == pytest.approx(2.718281828 ** -0.1)  # its token wrote '"t", ...'
