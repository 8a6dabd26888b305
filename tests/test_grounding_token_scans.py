"""The markup and JSON tokenizers (``agentflow.grounding.token_scans``) find
what their regexes find, on any text, and read a hostile document (openers
without closers) in one pass: a tag's ``>``, a comment's ``-->`` or a
string's closing quote is looked up, never scanned for from each opener."""

from __future__ import annotations

import random

import pytest

from agentflow.grounding import brackets, markup
from agentflow.grounding.depths import line_depths
from agentflow.grounding.open_containers import MAX_DEPTH
from agentflow.grounding.token_scans import Marks, Walks

MARKUP_PIECES = ["<", ">", "/", "!", "?", "-", "--", "-->", "<!--", "<![CDATA[", "]]>", "?>",
                 "<x", "</x", "<y", '"', "'", "=", "a", " ", "\n", "/>"]
JSON_PIECES = ['"', "\\", "\\\\", '\\"', "{", "}", "[", "]", ":", " ", "\n", "a", ","]


def _spans(matches: object) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in matches]  # type: ignore[attr-defined]


def _texts(pieces: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 40))) for _ in range(3000)]


@pytest.mark.parametrize("seed", [1, 2])
def test_markup_tokens_are_the_regex_tokens(seed: int) -> None:
    for text in _texts(MARKUP_PIECES, seed):
        assert _spans(markup._tokens(text)) == _spans(markup._TOKEN.finditer(text)), text


@pytest.mark.parametrize("seed", [1, 2])
def test_json_tokens_are_the_regex_tokens(seed: int) -> None:
    for text in _texts(JSON_PIECES, seed):
        assert _spans(brackets._tokens(text)) == _spans(brackets._TOKEN.finditer(text)), text


def test_a_tag_attribute_after_a_long_run_of_spaces_is_read() -> None:
    line = "<x" + " " * 5000 + 'a="1"/>'
    assert markup.tag_attributes(line, "x", 'a="') == [len(line) - 4]
    assert markup.tag_attributes("<x" + " " * 5000 + "/>", "x", 'a="') == []


def test_hostile_markup_is_read_as_a_parser_would() -> None:
    # openers with no closer after them are text: the elements before them are still found
    lines = ["<r>", "<a>1</a>", "</r>", *(["<x a", "<!-- b", "<![CDATA[ c", "<? d", "<!e"] * 200)]
    assert markup.is_markup(lines)
    assert markup.element_spans(lines) == [("r", 0, 3), ("r/a", 1, 2)]
    assert markup.element_paths(lines)[1:4] == [("<r>",), (), ()]


def test_hostile_json_strings_are_text() -> None:
    lines = ["{", ' "a": [', ' "\\' * 3000, " ]", "}"]
    assert brackets.item_spans(lines) == []
    assert brackets.bracket_paths(lines)[2] == ("a", "")


def test_a_walk_is_made_once_per_place() -> None:
    text = "a>b>c"
    stepped: list[int] = []

    def step(place: int) -> tuple[bool, int]:
        stepped.append(place)
        return False, place + 1

    walks = Walks(Marks(text, ">"), step)
    assert [walks.end(0), walks.end(2), walks.end(0)] == [-1, -1, -1]
    assert stepped == [1, 3]  # each ``>`` stepped over once, whatever the number of walks
    assert Marks("--->", r"(?=-->)").after(0) == 1


def test_a_document_nesting_deeper_than_max_depth_is_read_by_its_indentation() -> None:
    def feed(depth: int) -> list[str]:
        return ["<r>", *["<a>"] * (depth - 2), "<t>x</t>", *["</a>"] * (depth - 2), "</r>"]

    def json(depth: int) -> list[str]:
        return ["{", ' "k": 1,', *['"a": {'] * (depth - 1), "}", *["}"] * (depth - 1)]

    assert markup.is_markup(feed(MAX_DEPTH)) and brackets.is_bracketed(json(MAX_DEPTH))
    assert line_depths(feed(MAX_DEPTH))[MAX_DEPTH - 1] == MAX_DEPTH - 1  # the <t> line
    deep = feed(MAX_DEPTH + 1)
    assert not markup.is_markup(deep) and not brackets.is_bracketed(json(MAX_DEPTH + 1))
    assert line_depths(deep)[MAX_DEPTH] == 0  # the <t> line: no indentation, no depth
