"""Splitting documents into chunks: boundaries, overlap, Unicode, offsets."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentflow.extraction.chunking import Chunk, iter_chunks, iter_item_chunks, safe_cut


def chunks(text: str, size: int, overlap: int = 0, **kw: int) -> list[Chunk]:
    return list(iter_chunks(text, size, overlap, **kw))


def test_a_short_text_is_one_chunk_and_an_empty_one_none() -> None:
    assert chunks("hello world", 100) == [Chunk(0, 0, 11)]
    assert chunks("", 10) == []


def test_blank_lines_win_over_line_ends_and_sentences() -> None:
    text = "First para. Still first.\nline two\n\nSecond para starts here. More."
    first = chunks(text, 45)[0]
    assert text[: first.end] == "First para. Still first.\nline two\n\n"
    assert not first.hard_cut


def test_line_end_then_sentence_end_then_word() -> None:
    lines = "alpha beta gamma\ndelta epsilon zeta eta"
    assert lines[: chunks(lines, 30)[0].end] == "alpha beta gamma\n"
    sentences = "One two three four. Five six seven eight"
    assert sentences[: chunks(sentences, 30)[0].end] == "One two three four. "
    words = "one two three four five six seven"
    first = chunks(words, 16)[0]
    assert words[: first.end] == "one two three "  # never inside "four"


def test_an_early_boundary_is_not_taken_when_a_better_one_is_late() -> None:
    text = "a\n\n" + "word " * 40
    first = chunks(text, 50)[0]
    assert first.end > 25  # the blank line at 3 would make a tiny chunk: a word end instead
    assert text[first.end - 1] == " "


def test_chunks_cover_the_text_in_order_with_offsets() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "Some words here. " * (i % 5 + 1) for i in range(60))
    got = chunks(text, 200)
    assert got[0].start == 0 and got[-1].end == len(text)
    assert all(a.end == b.start for a, b in itertools.pairwise(got))
    assert "".join(c.text(text) for c in got) == text
    assert all(c.end - c.start <= 200 for c in got)
    assert [c.index for c in got] == list(range(len(got)))


def test_overlap_repeats_whole_lines_of_the_previous_chunk() -> None:
    text = "".join(f"line number {i:03d}\n" for i in range(100))  # 16 chars a line
    got = chunks(text, 100, overlap=40)
    for a, b in itertools.pairwise(got):
        assert a.end - 40 <= b.start < a.end  # overlapping, at most 40 chars back
        assert text[b.start - 1] == "\n"  # starting at a line start
    assert got[-1].end == len(text)


def test_overlap_with_no_line_or_word_start_is_dropped_rather_than_mid_word() -> None:
    text = "short words " + "x" * 30 + "y" * 30
    got = chunks(text, 40, overlap=5)
    for c in got[1:]:
        assert c.start == 0 or text[c.start - 1].isspace() or got[c.index - 1].hard_cut


def test_one_line_longer_than_a_chunk_is_hard_cut_at_a_character_boundary() -> None:
    text = "intro line\n" + "é" * 5 + "e\u0301" * 40 + "\nend"  # é and e + combining acute
    got = chunks(text, 20)
    assert any(c.hard_cut for c in got)
    for c in got:
        if c.end < len(text):
            assert unicodedata.combining(text[c.end]) == 0  # no mark torn from its letter
    assert "".join(c.text(text) for c in got) == text


def test_emoji_sequences_and_crlf_are_not_split() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # joined by zero-width joiners
    for cut in range(1, len(family)):
        at = safe_cut(family, cut)
        assert at in (1, len(family)) or (family[at - 1] != "\u200d" and family[at] != "\u200d")
    assert safe_cut("ab\r\ncd", 3) == 2
    text = "\U0001f44d\U0001f3fd" * 20  # thumbs up + skin tone: never parted
    for c in chunks(text, 7):
        assert c.start % 2 == 0 and c.end % 2 == 0


def test_cjk_sentence_ends_are_boundaries() -> None:
    text = "これは文です。" * 10
    got = chunks(text, 20)
    assert all(text[c.end - 1] == "。" for c in got)
    assert not any(c.hard_cut for c in got)


def test_offset_shifts_the_first_boundary() -> None:
    text = " ".join(f"w{i:03d}" for i in range(200))
    plain, shifted = chunks(text, 100), chunks(text, 100, offset=50)
    assert shifted[0].end <= 50 and shifted[0].end != plain[0].end
    assert shifted[-1].end == len(text)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        chunks("x", 0)
    with pytest.raises(ValueError, match="overlap"):
        chunks("x", 10, overlap=10)


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", ".", "é", "\u0301", "\u200d", "字"]),
            max_size=400),
    st.integers(min_value=2, max_value=60),
    st.integers(min_value=0, max_value=30),
)
def test_properties(text: str, size: int, overlap: int) -> None:
    overlap = min(overlap, size - 1)
    got = chunks(text, size, overlap)
    if not text:
        assert got == []
        return
    assert got[0].start == 0 and got[-1].end == len(text)
    for a, b in itertools.pairwise(got):
        assert a.start < b.start <= a.end  # progress, no gap
        assert a.end - b.start <= overlap
    for c in got:
        assert c.start < c.end
        if c.end - c.start > size:  # only a hard cut kept together with its joining marks
            assert c.hard_cut
        if not c.hard_cut and c.end < len(text):
            before, after = text[c.end - 1], text[c.end]
            assert before.isspace() or before in ".。" or not (after.isalnum() and
                                                              before.isalnum())


def test_a_new_top_level_block_beats_a_blank_line_inside_an_indented_block() -> None:
    entry = ("pkg (1.{i}) unstable; urgency=low\n\n  * change one\n\n  * change two\n\n"
             " -- Me  now\n\n")
    text = "".join(entry.format(i=i) for i in range(20))
    for c in chunks(text, 200)[:-1]:
        assert text[c.end:].startswith("pkg (")  # chunks end between entries, not inside


CHANGELOG = ("pkg (2.0) unstable; urgency=low\n\n  * two\n\n -- A <a@b>  Mon\n\n"
             "pkg (1.0) unstable; urgency=low\n\n  * one\n  * more\n\n -- A <a@b>  Sun\n")


def test_item_chunks_are_whole_blocks_and_count_them() -> None:
    one = list(iter_item_chunks(CHANGELOG, 1000, max_units=1))
    assert [c.text(CHANGELOG).split(" (")[1][:3] for c in one] == ["2.0", "1.0"]
    assert [c.units for c in one] == [1, 1] and one[0].end == one[1].start
    assert one[-1].end == len(CHANGELOG)
    both = list(iter_item_chunks(CHANGELOG, 1000))
    assert [(c.start, c.end, c.units) for c in both] == [(0, len(CHANGELOG), 2)]
    by_size = list(iter_item_chunks(CHANGELOG, 80))  # each block alone fits 80, two do not
    assert [c.units for c in by_size] == [1, 1]


def test_item_chunks_by_line_and_blank_units_do_not_count() -> None:
    text = "alpha 1\nbeta 2\n\n\ngamma 3\n"
    chunks = list(iter_item_chunks(text, 1000, "line", max_units=2))
    assert [c.text(text) for c in chunks] == ["alpha 1\nbeta 2\n\n\n", "gamma 3\n"]
    assert [c.units for c in chunks] == [2, 1]


def test_a_unit_longer_than_a_chunk_is_split_into_pieces_of_one_unit() -> None:
    text = "head\n\n" + "word " * 40 + "\n\ntail\n"
    chunks = list(iter_item_chunks(text, 50, overlap=10))
    assert chunks[0].text(text) == "head\n\n"
    middle = chunks[1:-1]
    assert len(middle) >= 4 and all(c.units == 1 and c.end - c.start <= 50 for c in middle)
    assert any(b.start < a.end for a, b in itertools.pairwise(middle))  # pieces overlap
    assert chunks[-1].text(text) == "tail\n"
    covered = {i for c in chunks for i in range(c.start, c.end)}
    assert covered == set(range(len(text)))


def test_item_chunks_bad_arguments() -> None:
    for kwargs, word in (({"max_chars": 0}, "max_chars"), ({"overlap": 10}, "overlap"),
                         ({"max_units": 0}, "max_units"), ({"unit": "page"}, "unit")):
        args: dict = {"max_chars": 10, **kwargs}
        with pytest.raises(ValueError, match=word):
            list(iter_item_chunks("text", **args))
    assert list(iter_item_chunks("", 10)) == []
