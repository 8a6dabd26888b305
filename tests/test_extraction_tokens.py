"""agentflow.grounding.tokens: the one definition of a token that a
``Grounded(whole_tokens=True)`` value may not cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentflow.grounding.tokens import (
    DELIMITERS,
    INVISIBLE,
    SENTENCE_END,
    cuts_token,
    piece_spans,
    pieces,
    token_at,
)

HEADER = "libxrandr (2:1.5.2-1) unstable; urgency=medium"
TRAILER = " -- Jelmer Vernooĳ <jelmer@debian.org>  Tue, 02 Jan 2024 10:20:30 +0100"


def test_the_issue_s_words_are_one_token_each() -> None:
    assert pieces(HEADER) == ["libxrandr", " ", "(", "2:1.5.2-1", ")", " ", "unstable", ";",
                              " ", "urgency=medium"]
    assert pieces(TRAILER)[:8] == [" ", "--", " ", "Jelmer", " ", "Vernooĳ", " ", "<"]
    assert "jelmer@debian.org" in pieces(TRAILER) and "Tue" in pieces(TRAILER)
    assert pieces("  * d/salsa-ci.yml: Bump 2.6.1-4~deb12u2.") == [
        " ", " ", "*", " ", "d/salsa-ci.yml", ":", " ", "Bump", " ", "2.6.1-4~deb12u2", "."]


def test_sentence_ends_split_off_only_at_a_token_s_end() -> None:
    assert pieces("Paris. 4.6.2. e.g. a?! wait... .bashrc ...x.") == [
        "Paris", ".", " ", "4.6.2", ".", " ", "e.g", ".", " ", "a", "?!", " ", "wait", "...",
        " ", ".bashrc", " ", "...x", "."]
    assert pieces("...") == ["..."] and pieces("") == []


def test_delimiters_are_pieces_of_their_own() -> None:
    text = "a(b)[c]{d}<e>\"f\"'g'`h`,i;j"
    assert pieces(text) == ["a", "(", "b", ")", "[", "c", "]", "{", "d", "}", "<", "e", ">",
                            '"', "f", '"', "'", "g", "'", "`", "h", "`", ",", "i", ";", "j"]
    assert set(DELIMITERS) == set("()[]{}<>\"'`,;" + INVISIBLE)
    assert set(SENTENCE_END) == set(".:!?")


def test_control_characters_and_zero_width_spaces_end_a_token() -> None:
    """A NUL, an escape or DEL (a PDF's or a log's text), a zero-width space or a
    BOM between words parts them as a space does: the value next to one is a
    whole token (a name beside a NUL was refused as cutting ``Ann\\x00``).
    A soft hyphen and U+FFFD stay inside the word they are in."""
    for mark in ("\x00", "\x01", "\x1b", "\x7f", "\x9b", "\u200b", "\ufeff"):
        text = f"x{mark}Ann{mark}Lee."
        assert pieces(text) == ["x", mark, "Ann", mark, "Lee", "."], repr(mark)
        assert not cuts_token(text, 2, 5)
    for inner in ("\xad", "\ufffd"):
        assert pieces(f"Ann{inner}ette") == [f"Ann{inner}ette"]
    assert all(not c.isspace() for c in INVISIBLE)


def test_cuts_token_at_the_document_s_start_end_and_inside() -> None:
    start = HEADER.index("2:1.5.2-1")
    assert not cuts_token(HEADER, start, start + len("2:1.5.2-1"))
    assert cuts_token(HEADER, start + 2, start + len("2:1.5.2-1"))  # 1.5.2-1: epoch cut off
    assert cuts_token(HEADER, start, start + 1)  # 2
    assert not cuts_token(HEADER, 0, len("libxrandr"))  # at the start of the document
    assert cuts_token(HEADER, 0, 3)
    assert not cuts_token(HEADER, len(HEADER) - len("urgency=medium"), len(HEADER))  # at its end
    assert cuts_token(HEADER, len(HEADER) - len("medium"), len(HEADER))
    u = HEADER.index("unstable")
    assert not cuts_token(HEADER, u, u + 8) and not cuts_token(HEADER, u, u + 9)  # ; or not
    mail = TRAILER.index("debian.org")
    assert cuts_token(TRAILER, mail, mail + 6)  # debian out of jelmer@debian.org
    assert token_at(TRAILER, mail, mail + 6) == "jelmer@debian.org"
    assert token_at(HEADER, start + 2, start + 9) == "2:1.5.2-1"


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_pieces_cover_the_text_and_agree_with_cuts_token(text: str) -> None:
    spans = list(piece_spans(text))
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(a < b for a, b in spans)
    bounds = {0, len(text)} | {a for a, _ in spans} | {b for _, b in spans}
    for i in range(len(text) + 1):
        for j in range(i + 1, len(text) + 1):
            assert cuts_token(text, i, j) == (i not in bounds or j not in bounds)


async def test_a_value_beside_a_control_character_is_extracted() -> None:
    """Through ``extract_many``: a document whose words a NUL or a zero-width
    space parts gives its value, grounded and located (it failed as a cut token)."""
    from pydantic import BaseModel

    from agentflow import extract_many
    from agentflow.testing import Call, FunctionModel, Reply

    class Person(BaseModel):
        name: str

    model = FunctionModel(lambda request: Reply(tool_calls=[Call("generate_response",
                                                                 {"name": "Ann Lee"})]))
    texts = [("nul", "Name:\x00Ann Lee\x00\x00"), ("zwsp", "Name:\u200bAnn Lee\u200b")]
    results = [r async for r in extract_many(model, texts, Person)]
    assert [(r.id, r.ok, r.spans) for r in results] == [
        ("nul", True, {"name": [(6, 13)]}), ("zwsp", True, {"name": [(6, 13)]})]
