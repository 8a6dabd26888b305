"""agentflow.output.grammar: the substring grammar's text, and exact escaping
(any run of chunks decodes, as JSON, to exactly the source span it copies).
The grammar is run by the real llama.cpp in tests/test_providers_local.py."""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from agentflow.grounding import Grounded
from agentflow.output import grammar, grammar_marks, grammar_values
from agentflow.output.grammar import chunks, has_grounded, substring_grammar
from agentflow.output.schema import OutputSpec

SEP = {"key_separator": ": ", "item_separator": ", "}
G = Grounded()


class Line(BaseModel):
    text: Annotated[str, G]
    qty: int


class Doc(BaseModel):
    title: Annotated[str, G]
    level: Literal["low", "high"]
    tags: Annotated[list[str], G]
    lines: list[Line]
    phone: Annotated[str | None, G] = None
    count: int = 0


def local(tp: object) -> dict[str, object]:
    return dict(OutputSpec.of(tp).schema_for("local").schema)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60), st.data())
def test_every_run_of_chunks_decodes_to_exactly_its_source_span(source: str,
                                                                data: st.DataObject) -> None:
    parts = chunks(source)
    raw = [c for c in grammar_marks._CHUNK.findall(source)]
    assert "".join(raw) == source  # the chunks cover the source
    i = data.draw(st.integers(0, len(parts)))
    j = data.draw(st.integers(i, len(parts)))
    assert json.loads('"' + "".join(parts[i:j]) + '"') == "".join(raw[i:j])


def test_escapes_of_quotes_backslashes_tabs_controls_and_unicode() -> None:
    source = 'Zoë "Z"\tC:\\x\x01 東京'
    parts = chunks(source)
    assert parts == ["Zoë", " ", '\\"', "Z", '\\"', "\\t", "C", ":", "\\\\", "x", "\\u0001",
                     " ", "東京"]


def test_grammar_spells_grounded_parts_and_inlines_the_rest() -> None:
    text = substring_grammar(local(Doc), "Order 7 \"rush\"", SEP)
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == "%llguidance {}" and lines[1].startswith("start: ")
    assert 'GROUNDED: "\\"" (SOURCE & TRIMMED) "\\""' in lines  # never empty or padded
    assert "TRIMMED: /[^ ]|[^ ].*[^ ]/" in lines
    source_line = next(x for x in lines if x.startswith("SOURCE: %regex "))
    assert json.loads(source_line.removeprefix("SOURCE: %regex ")) == {
        "substring_chunks": ["Order", " ", "7", " ", '\\"', "rush", '\\"']}
    assert '"\\"low\\"" | "\\"high\\""' in text  # the Literal as its values
    assert '%json {"type": "integer"' in text  # the rest keeps its schema
    assert '"[" (' in text and "{0,11}" in text  # list bounds of the local dialect
    assert ': "null"' in text  # optional grounded string: null allowed
    assert '"\\"title\\"" ": "' in text  # keys in order, with the separators
    # the nested model is a named rule, spelled out because it holds a grounded string
    rules = dict(x.split(": ", 1) for x in lines[1:])
    assert '"\\"text\\""' in rules[rules["d0"]]


def test_no_grammar_without_grounding_or_for_a_too_large_source() -> None:
    class Plain(BaseModel):
        a: str

    assert substring_grammar(local(Plain), "text", SEP) is None
    assert substring_grammar(local(Doc), "x" * (grammar.MAX_SOURCE_CHARS + 1), SEP) is None
    assert has_grounded(local(Doc)) and not has_grounded(local(Plain))


def test_recursive_models_become_recursive_rules() -> None:
    class Node(BaseModel):
        name: Annotated[str, G]
        children: list[Node] = []

    text = substring_grammar(local(Node), "a b", SEP)
    assert text is not None
    d0 = next(x for x in text.splitlines() if x.startswith("d0: "))
    assert d0.startswith("d0: n")
    assert "d0" in text.split("d0: ", 1)[1]  # the rule refers to itself through its list


def test_a_pattern_on_a_grounded_string_is_intersected_with_the_substring() -> None:
    from pydantic import Field

    class Signed(BaseModel):
        who: Annotated[str, G] = Field(pattern=r"^[^<>]+ <[^<>/]+>$")
        code: Annotated[str, G] = Field(pattern=r"\d+")

    long = "Ann <a@b.c> 42 " + "x " * grammar_values.SPAN_CHECK_CHARS
    text = substring_grammar(local(Signed), long, SEP)
    assert text is not None
    assert 'GROUNDED_0: "\\"" (SOURCE & TRIMMED & /(?:[^<>]+ <[^<>\\/]+>)/) "\\""' in text
    assert 'GROUNDED_1: "\\"" (SOURCE & TRIMMED & /(?:.*\\d+.*)/) "\\""' in text


def test_a_pattern_on_a_grounded_string_in_a_short_source_lists_its_values() -> None:
    """Up to ``SPAN_CHECK_CHARS`` the values a pattern allows are listed
    (llguidance's lexer cannot intersect some patterns with a document):
    exactly the trimmed spans between chunk boundaries that the pattern
    searches, JSON-escaped, each once."""
    from pydantic import Field

    class Signed(BaseModel):
        who: Annotated[str, W] = Field(pattern=r"^[^<>]+ <[^<>/]+>$")
        code: Annotated[str, G] = Field(pattern=r"^\d+$")
        quoted: Annotated[str, W] = Field(pattern=r'^".*"$')

    source = 'Ann Lee <a@b.c> 42 and 42, "q\\t"\n'
    text = substring_grammar(local(Signed), source, SEP)
    assert text is not None
    rules = dict(x.split(": ", 1) for x in text.splitlines()[1:])
    assert rules["GROUNDED_0"] == '"\\"" ("Ann Lee <a@b.c>" | "Lee <a@b.c>") "\\""'
    assert rules["GROUNDED_1"] == '"\\"" ("42") "\\""'
    listed = re.findall(r'"((?:[^"\\]|\\.)*)"', rules["GROUNDED_2"])[1:-1]
    assert [json.loads(json.loads(f'"{v}"').join('""')) for v in listed] == ['"q\\t"']
    assert "SOURCE" not in rules and "SOURCE_TOKENS" not in rules  # nothing else needs them


def test_list_bounds_are_spelled_without_an_empty_repeat() -> None:
    from pydantic import Field

    class Bounded(BaseModel):
        one: Annotated[list[str], G] = Field(max_length=1)
        exactly_one: Annotated[list[str], G] = Field(min_length=1, max_length=1)
        three: Annotated[list[str], G] = Field(max_length=3)

    text = substring_grammar(local(Bounded), "a b c", SEP)
    assert text is not None
    assert "{0,0}" not in text  # llguidance refuses an empty range: one item is the item alone
    lines = text.splitlines()
    assert 'n1: "[" (n0)? "]"' in lines and 'n3: "[" n2 "]"' in lines
    assert 'n5: "[" (n4 (", " n4){0,2})? "]"' in lines


W = Grounded(whole_tokens=True)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60), st.data())
def test_every_run_of_whole_token_chunks_decodes_to_exactly_its_source_span(
        source: str, data: st.DataObject) -> None:
    from agentflow.grounding.tokens import cuts_token, piece_spans

    parts, spans = chunks(source, whole_tokens=True), list(piece_spans(source))
    assert len(parts) == len(spans)
    i = data.draw(st.integers(0, len(parts)))
    j = data.draw(st.integers(i, len(parts)))
    start = spans[i][0] if i < len(spans) else len(source)
    end = spans[j - 1][1] if j > i else start
    assert json.loads('"' + "".join(parts[i:j]) + '"') == source[start:end]
    assert not cuts_token(source, start, end)  # a run of chunks never cuts a token


def test_whole_token_chunks_escape_and_keep_tokens_whole() -> None:
    source = 'pkg (2:1.5.2-1) unstable; -- Zoë "Z" <z@x.org>\tC:\\x\x01 東京.'
    assert chunks(source, whole_tokens=True) == [
        "pkg", " ", "(", "2:1.5.2-1", ")", " ", "unstable", ";", " ", "--", " ", "Zoë", " ",
        '\\"', "Z", '\\"', " ", "<", "z@x.org", ">", "\\t", "C:\\\\x", "\\u0001", " ", "東京", "."]


def test_one_source_terminal_per_granularity_in_use() -> None:
    from pydantic import Field

    class Mixed(BaseModel):
        word: Annotated[str, G]
        token: Annotated[str, W]
        dated: Annotated[str, W] = Field(pattern=r"\d+")
        loose: Annotated[str, G] = Field(pattern=r"\d+")

    source = "v 2:1.5 on 2024"
    text = substring_grammar(local(Mixed), source, SEP)
    assert text is not None
    lines = text.splitlines()
    rules = dict(x.split(": ", 1) for x in lines[1:])
    assert rules["GROUNDED"] == '"\\"" (SOURCE & TRIMMED) "\\""'
    assert rules["GROUNDED_TOKENS"] == '"\\"" (SOURCE_TOKENS & TRIMMED) "\\""'
    assert rules["GROUNDED_0"] == ('"\\"" ("v 2:1.5" | "v 2:1.5 on" | "v 2:1.5 on 2024" | '
                                   '"2:1.5" | "2:1.5 on" | "2:1.5 on 2024" | "on 2024" | "2024") '
                                   '"\\""')  # listed, whole tokens: never "1.5" alone
    assert '| "1.5" |' in rules["GROUNDED_1"] and '| "2" |' in rules["GROUNDED_1"]  # sub-token
    assert json.loads(rules["SOURCE"].removeprefix("%regex ")) == {
        "substring_chunks": ["v", " ", "2", ":", "1", ".", "5", " ", "on", " ", "2024"]}
    assert json.loads(rules["SOURCE_TOKENS"].removeprefix("%regex ")) == {
        "substring_chunks": ["v", " ", "2:1.5", " ", "on", " ", "2024"]}

    class OnlyTokens(BaseModel):
        token: Annotated[str, W]

    only = substring_grammar(local(OnlyTokens), source, SEP)
    assert only is not None and "SOURCE_TOKENS: %regex" in only
    assert "\nSOURCE: " not in only and "\nGROUNDED: " not in only  # the document once


class Version(BaseModel):
    version: Annotated[str, Grounded(whole_tokens=True)] = Field(pattern=r"^[0-9][0-9.]*-[0-9]+$")
    note: Annotated[str, Grounded()]


class Versions(BaseModel):
    versions: list[Version]
    first: Version | None = None


def test_a_pattern_nothing_in_the_source_matches_leaves_its_branch_out() -> None:
    """No value can be finished for a grounded field whose pattern matches
    nothing in the document, so the grammar never lets the model start one:
    a list of such items is ``[]``, an optional one ``null``; and with no
    possible output at all there is no substring grammar (verification decides)."""
    with_one = substring_grammar(local(Versions), "Release 1.2-3 notes", SEP)
    assert with_one is not None and "GROUNDED_0" in with_one
    footer = "# Older entries have been removed from this changelog."
    none = substring_grammar(local(Versions), footer, SEP)
    assert none is not None
    rules = dict(line.split(": ", 1) for line in none.splitlines()[1:] if ": " in line)
    root = rules[rules["start"]]
    versions, first = re.findall(r"\bn\d+\b", root)
    assert rules[versions] == '"[" "]"' and rules.get(rules[first], rules[first]) == '"null"'
    assert "GROUNDED_" not in none  # only [] and null are left
    with pytest.raises(grammar.NoGroundedValueError) as raised:
        substring_grammar(local(Version), footer, SEP)
    assert raised.value.fields == ["version"] and "version" in str(raised.value)
    assert substring_grammar(local(Version), "see 4.5-1 here", SEP) is not None


class Signed(BaseModel):
    versions: list[Version]
    who: Annotated[str, Grounded(whole_tokens=True)] = Field(pattern=r"^[^<>]+ <[^<>]+>$")
    when: Annotated[str, Grounded(whole_tokens=True)] = Field(pattern=r"^[0-9]{4}-[0-9]{2}$")


def test_an_impossible_output_names_every_field_at_fault_and_only_those() -> None:
    """The error names each required field no text can fill; a list left
    empty for want of a version is a possible value, so it is not named."""
    with pytest.raises(grammar.NoGroundedValueError) as raised:
        substring_grammar(local(Signed), "A note, unsigned and undated.", SEP)
    assert raised.value.fields == ["who", "when"]


def test_a_pattern_matching_only_inside_a_token_counts_as_matching_nothing() -> None:
    """For whole-token fields only spans between token boundaries count:
    ``5.36`` inside ``perl5.36`` is no version a whole-token value can take."""
    inside = "Rebuild against perl5.36 for the transition."
    grammar = substring_grammar(local(Versions), inside, SEP)
    assert grammar is not None and "GROUNDED_" not in grammar
    assert substring_grammar(local(Versions), inside + " Now 5.36-1.", SEP) is not None
    assert "GROUNDED_" in (substring_grammar(local(Versions), inside + " Now 5.36-1.", SEP)
                           or "")
