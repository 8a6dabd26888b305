"""agentflow.grounding.degenerate: repetition loops and repeated items."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow.grounding.degenerate import check_degenerate


class Entry(BaseModel):
    version: str
    changes: list[str]


def test_repetition_loops_not_in_the_source_are_degenerate() -> None:
    out = Entry(version="debian-10.10.10.10.10.10.10", changes=["d/d/d/d/d/d/d/d/d/d"])
    problems = check_degenerate(out, "debian-10.1 changelog")
    assert [p for p, _ in problems] == ["version", "changes[0]"]
    assert "repetition loop" in problems[0][1]


def test_runs_copied_from_the_source_and_whitespace_are_not_loops() -> None:
    source = "Title\n------------------------\n  * fix 10.10.10.10.10.10 parsing"
    out = Entry(version="------------------------", changes=["fix 10.10.10.10.10.10 parsing",
                                                           "a          b"])
    assert check_degenerate(out, source) == []
    assert check_degenerate(Entry(version="1.0", changes=["ab", "abab"]), "") == []


def test_an_item_repeated_more_often_than_the_source_holds_it() -> None:
    out = Entry(version="1", changes=["Fix typo."] * 6)
    problems = check_degenerate(out, "* Fix typo.\n* Fix typo.")
    assert problems == [("changes", "the item 'Fix typo.' is repeated 6 times")]
    assert check_degenerate(out, "Fix typo. " * 6) == []
    # fewer copies are no runaway: agentflow.extraction.list_repeats flags the field
    assert check_degenerate(Entry(version="1", changes=["Fix typo."] * 5), "Fix typo.") == []
    assert check_degenerate(Entry(version="1", changes=["a", "a"]), "a") == []


def test_nested_dicts_and_scalars() -> None:
    assert check_degenerate({"a": {"b": "xyxyxyxyxyxyxyxy"}}, "") == [
        ("a.b", "repetition loop 'xyxyxyxyxyxyxyxy', not in the document")]
    assert check_degenerate("ok", "") == [] and check_degenerate(42, "") == []
