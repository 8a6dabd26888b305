"""agentflow.grounding.lines: the one definition of a line's content that a
``Grounded(whole_lines=True)`` value may not cut, and the check that uses it."""

from __future__ import annotations

import json
from typing import Annotated

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from agentflow.grounding import (
    GROUNDED_KEY,
    Grounded,
    check_grounding,
    grounded_values,
    locate,
)
from agentflow.grounding.lines import cuts_line, line_at, line_pieces, line_spans, row_finder
from agentflow.output.grammar import chunks, substring_grammar
from agentflow.output.schema import OutputSpec

ENTRY = ("quux (1.0-1) unstable; urgency=medium\n\n"
         "  [ Jane Q. Hacker ]\n"
         "  * Fix the build with GCC 14.   \n"
         "    Thanks to Zoë \"Z\" Example.\n"
         "  - d/control: Bump Standards-Version.\r\n"
         "  12) Numbered item.\n"
         "  -- not a marker\n"
         "**bold** text\n\n"
         " -- Jane Q. Hacker <jqh@example.net>  Mon, 05 Feb 2024 18:02:11 +0000")
L = Grounded(whole_lines=True)


def contents(text: str) -> list[str]:
    return [text[s:e] for s, e in line_spans(text)]


def test_a_line_s_content_drops_indentation_markers_and_trailing_whitespace() -> None:
    assert contents(ENTRY) == [
        "quux (1.0-1) unstable; urgency=medium", "[ Jane Q. Hacker ]",
        "Fix the build with GCC 14.", 'Thanks to Zoë "Z" Example.',
        "d/control: Bump Standards-Version.", "Numbered item.", "-- not a marker",
        "**bold** text", "-- Jane Q. Hacker <jqh@example.net>  Mon, 05 Feb 2024 18:02:11 +0000"]
    assert contents("") == [] and contents("\n\n  \n") == [] and contents("  *  \nx") == ["x"]
    assert contents("• one\n· two\n1. three\n*no space") == ["one", "two", "three", "*no space"]


@given(st.text(alphabet=st.sampled_from("ab *-1.)\t\n\r"), max_size=40))
def test_pieces_cover_the_text_and_contents_have_no_whitespace_at_their_edges(
        text: str) -> None:
    parts = line_pieces(text)
    assert "".join(p for p, _ in parts) == text
    assert all(p for p, _ in parts)
    for piece, is_content in parts:
        if is_content:
            assert not piece[0].isspace() and not piece[-1].isspace() and "\n" not in piece
    assert [p for p, c in parts if c] == contents(text)


def test_cuts_line_and_the_line_it_names() -> None:
    start = ENTRY.index("Fix the build")
    end = ENTRY.index("Example.") + len("Example.")
    assert not cuts_line(ENTRY, start, start + len("Fix the build with GCC 14."))
    assert not cuts_line(ENTRY, start, end)  # two whole lines, the indentation between
    assert cuts_line(ENTRY, start, start + len("Fix the build"))
    assert line_at(ENTRY, start, start + len("Fix the build")) == "Fix the build with GCC 14."
    assert cuts_line(ENTRY, start - 2, start + len("Fix the build with GCC 14."))  # "* " in it
    inner = ENTRY.index("Standards-Version")
    assert line_at(ENTRY, inner, inner + 5) == "d/control: Bump Standards-Version."


class Entry(BaseModel):
    changes: list[Annotated[str, L]]
    trailer: Annotated[str, L]


def test_whole_line_values_are_found_and_cut_ones_refused_naming_the_line() -> None:
    good = Entry(changes=["Fix the build with GCC 14.\n    Thanks to Zoë \"Z\" Example.",
                          "Numbered item."],
                 trailer="-- Jane Q. Hacker <jqh@example.net>  Mon, 05 Feb 2024 18:02:11 +0000")
    check = check_grounding(grounded_values(good, Entry), ENTRY)
    assert check.ok
    assert ENTRY[slice(*check.spans["changes[1]"][0])] == "Numbered item."
    # whitespace runs normalised as for any grounded value: still whole lines
    assert locate("Fix the build with GCC 14. Thanks to Zoë \"Z\" Example.", ENTRY,
                  whole_lines=True) is not None
    cut = Entry(changes=["Fix the build", "* Fix the build with GCC 14."],
                trailer="Jane Q. Hacker <jqh@example.net>")
    check = check_grounding(grounded_values(cut, Entry), ENTRY)
    assert [p for p, _ in check.unfound] == ["changes[0]", "changes[1]", "trailer"]
    assert check.cut_lines[0] == ("changes[0]", "Fix the build", "Fix the build with GCC 14.")
    assert "'Fix the build' is only part of the line 'Fix the build with GCC 14.'" in (
        check.message())
    assert check.cut_lines[2][2].startswith("-- Jane Q. Hacker")  # the line, not a token


def test_the_mark_reaches_the_local_dialect_and_a_json_schema_output() -> None:
    schema = dict(OutputSpec.of(Entry).schema_for("local").schema)
    assert schema["properties"]["changes"]["items"][GROUNDED_KEY] == "whole_lines"
    assert L.schema_mark == "whole_lines"


@given(st.text(alphabet=st.sampled_from('ab "\\\t\n*-é'), max_size=40), st.data())
def test_every_run_of_line_chunks_decodes_to_exactly_its_span(text: str,
                                                              data: st.DataObject) -> None:
    parts = chunks(text, whole_lines=True)
    raw = [p for p, _ in line_pieces(text)]
    assert len(parts) == len(raw)
    i = data.draw(st.integers(0, len(parts)))
    j = data.draw(st.integers(i, len(parts)))
    assert json.loads('"' + "".join(parts[i:j]) + '"') == "".join(raw[i:j])


def test_the_grammar_holds_whole_line_strings_to_line_contents() -> None:
    class Items(BaseModel):
        items: list[Annotated[str, L, Field(pattern=r"^[^\[]")]]
        note: Annotated[str, L]

    text = substring_grammar(dict(OutputSpec.of(Items).schema_for("local").schema), ENTRY,
                             {"key_separator": ": ", "item_separator": ", "})
    assert text is not None
    rules = dict(x.split(": ", 1) for x in text.splitlines()[1:])
    assert rules["GROUNDED_LINES"] == '"\\"" (SOURCE_LINES & LINE_EDGES) "\\""'
    assert rules["GROUNDED_0"] == '"\\"" (SOURCE_LINES & LINE_EDGES & /(?:[^\\[].*)/) "\\""'
    split = json.loads(rules["SOURCE_LINES"].removeprefix("%regex "))["substring_chunks"]
    assert split[:3] == ["quux (1.0-1) unstable; urgency=medium", "\\n\\n  ", "[ Jane Q. Hacker ]"]
    assert "Fix the build with GCC 14." in split and "   \\n    " in split


@given(st.text(alphabet="ab\n\r ", max_size=40))
def test_row_finder_gives_each_offset_s_line_as_counting_from_the_start(text: str) -> None:
    row_of = row_finder(text)
    assert [row_of(at) for at in range(len(text) + 1)] == [
        text.count("\n", 0, at) for at in range(len(text) + 1)]
