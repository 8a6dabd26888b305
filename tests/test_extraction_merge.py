"""Merging chunk outputs by the rules declared on the schema."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from agentflow.extraction.merge import ChunkOutput, Merge, merge_outputs, rules_of


class Entry(BaseModel):
    version: str
    text: str | None = None
    changes: list[str] = []


class Doc(BaseModel):
    title: str | None = None
    source: Annotated[str | None, Merge.must_agree()] = None
    kind: Annotated[str | None, Merge.majority()] = None
    entries: Annotated[list[Entry], Merge.by_key("version")] = []
    notes: list[str] = []


RULES = rules_of(Doc)


def out(start: int, end: int, index: int = 0, pass_no: int = 0,
        spans: dict[str, list[tuple[int, int]]] | None = None, **data: Any) -> ChunkOutput:
    return ChunkOutput(start, end, data, spans or {}, {}, index, pass_no)


def test_rules_from_annotations_and_defaults() -> None:
    assert rules_of(Doc) == {"title": Merge.first(), "source": Merge.must_agree(),
                     "kind": Merge.majority(), "entries": Merge.by_key("version"),
                     "notes": Merge.by_span()}
    assert "Merge" not in str(Doc.model_json_schema())


def test_a_rule_that_does_not_fit_the_field_is_named() -> None:
    class Bad(BaseModel):
        items: Annotated[list[str], Merge.majority()]

    with pytest.raises(ValueError, match=r"Bad\.items.*majority.*list"):
        rules_of(Bad)

    class Worse(BaseModel):
        name: Annotated[str, Merge.by_key("x")]

    with pytest.raises(ValueError, match=r"Worse\.name"):
        rules_of(Worse)
    with pytest.raises(ValueError, match="at least one"):
        Merge.by_key()


def test_first_non_null_in_document_order_and_a_disagreement_is_reported() -> None:
    merged = merge_outputs([out(100, 200, 1, title="later"), out(0, 120, 0, title=None),
                            out(200, 300, 2, title="last")], RULES)
    assert merged.data["title"] == "later"
    (conflict,) = merged.conflicts  # the rule settles it; the record still says it happened
    assert (conflict.path, conflict.rule, conflict.chosen) == ("title", "first", "later")
    assert conflict.values == (("later", 100, 200), ("last", 200, 300))


def test_first_reports_nothing_when_the_chunks_agree() -> None:
    merged = merge_outputs([out(0, 120, 0, title="A  title"), out(100, 200, 1, title="A title"),
                            out(200, 300, 2, title=None)], RULES)
    assert merged.data["title"] == "A  title" and merged.conflicts == ()


def test_majority_picks_the_most_frequent_and_reports_the_rest() -> None:
    merged = merge_outputs([out(0, 10, 0, kind="a"), out(10, 20, 1, kind="b"),
                            out(20, 30, 2, kind=" b "), out(30, 40, 3)], RULES)
    assert merged.data["kind"] == "b"
    (conflict,) = merged.conflicts
    assert conflict.path == "kind" and conflict.rule == "majority" and conflict.chosen == "b"
    assert [v[0] for v in conflict.values] == ["a", "b", " b "]
    assert conflict.values[0][1:] == (0, 10)


def test_majority_tie_goes_to_the_earliest() -> None:
    merged = merge_outputs([out(10, 20, 1, kind="y"), out(0, 10, 0, kind="x")], RULES)
    assert merged.data["kind"] == "x"


def test_must_agree_agreement_and_disagreement() -> None:
    agreed = merge_outputs([out(0, 10, 0, source="pkg"), out(10, 20, 1, source="pkg"),
                            out(20, 30, 2)], RULES)
    assert agreed.data["source"] == "pkg" and agreed.conflicts == ()
    split = merge_outputs([out(0, 10, 0, source="pkg"), out(10, 20, 1, source="other")],
                          RULES)
    (conflict,) = split.conflicts
    assert conflict.rule == "must_agree" and conflict.chosen is None
    assert {v[0] for v in conflict.values} == {"pkg", "other"}


def test_list_by_key_dedups_overlap_keeps_the_most_complete_at_the_first_place() -> None:
    a = out(0, 100, 0, entries=[{"version": "1.0", "changes": ["x"]},
                                {"version": "0.9", "changes": ["cut"]}])
    b = out(80, 200, 1, entries=[{"version": " 0.9", "changes": ["cut", "whole"]},
                                 {"version": "0.8", "changes": []}])
    merged = merge_outputs([b, a], RULES)
    assert [e["version"].strip() for e in merged.data["entries"]] == ["1.0", "0.9", "0.8"]
    assert merged.data["entries"][1]["changes"] == ["cut", "whole"]


def test_list_by_key_keeps_items_without_a_key() -> None:
    merged = merge_outputs([out(0, 10, 0, entries=[{"version": None}]),
                            out(5, 20, 1, entries=[{"version": None}])],
                           {"entries": Merge.by_key("version")})
    assert len(merged.data["entries"]) == 2


def test_list_by_span_same_span_is_one_item_repeats_at_other_spans_stay() -> None:
    a = out(0, 100, 0, notes=["fixed", "fixed"],
            spans={"notes[0]": [(10, 15)], "notes[1]": [(90, 95)]})
    b = out(80, 200, 1, notes=["fixed", "fixed"],
            spans={"notes[0]": [(90, 95)], "notes[1]": [(150, 155)]})
    merged = merge_outputs([a, b], RULES)
    assert merged.data["notes"] == ["fixed", "fixed", "fixed"]  # 10, 90 (twice seen), 150
    assert merged.spans == {"notes[0]": [(10, 15)], "notes[1]": [(90, 95)],
                            "notes[2]": [(150, 155)]}


def test_list_by_span_never_merges_items_of_one_chunk() -> None:
    a = out(0, 100, 0, notes=["x", "x"], spans={"notes[0]": [(1, 2)], "notes[1]": [(1, 2)]})
    assert merge_outputs([a], RULES).data["notes"] == ["x", "x"]


def test_list_without_spans_equal_items_merge_only_where_chunks_overlap() -> None:
    a, b = out(0, 100, 0, notes=["dup"]), out(90, 200, 1, notes=["dup"])
    c = out(300, 400, 3, notes=["dup"])  # far away: a legitimate repeat
    assert merge_outputs([a, b, c], RULES).data["notes"] == ["dup", "dup"]
    assert merge_outputs([out(0, 100, 0, notes=["dup"]), out(100, 200, 1, notes=["dup"])],
                         RULES).data["notes"] == ["dup", "dup"]  # adjacent, no overlap


def test_anchors_stand_in_for_spans() -> None:
    a = ChunkOutput(0, 100, {"notes": ["same text"]}, {}, {"notes[0]": [(10, 19)]}, 0)
    b = ChunkOutput(50, 150, {"notes": ["same text"]}, {}, {"notes[0]": [(120, 129)]}, 1)
    assert merge_outputs([a, b], RULES).data["notes"] == ["same text", "same text"]


def test_spans_are_reindexed_to_the_merged_list() -> None:
    a = out(0, 100, 0, entries=[{"version": "2"}], title="T",
            spans={"entries[0].version": [(5, 6)], "title": [(0, 1)]})
    b = out(100, 200, 1, entries=[{"version": "1", "text": "x"}],
            spans={"entries[0].version": [(150, 151)], "entries[0].text": [(160, 161)]})
    merged = merge_outputs([a, b], RULES)
    assert merged.spans == {"title": [(0, 1)], "entries[0].version": [(5, 6)],
                            "entries[1].version": [(150, 151)], "entries[1].text": [(160, 161)]}


def test_later_passes_only_add() -> None:
    first = out(0, 100, 0, 0, entries=[{"version": "1", "changes": ["a"]}], title="one",
                notes=["n"], spans={"notes[0]": [(3, 4)]})
    second = out(50, 150, 0, 1, entries=[{"version": "1", "changes": ["a", "b", "c"]},
                                         {"version": "0.5"}], title="two",
                 notes=["n", "m"], spans={"notes[0]": [(3, 4)], "notes[1]": [(120, 121)]})
    merged = merge_outputs([second, first], RULES)
    assert merged.data["title"] == "one"
    assert merged.data["entries"] == [{"version": "1", "changes": ["a"]}, {"version": "0.5"}]
    assert merged.data["notes"] == ["n", "m"]


def test_fields_no_chunk_gave() -> None:
    merged = merge_outputs([out(0, 10, 0)], RULES)
    assert merged.data == {"title": None, "source": None, "kind": None, "entries": [],
                           "notes": []}


def test_a_field_held_after_another_keeps_the_order_across_chunks() -> None:
    from agentflow.grounding import Grounded

    class Signed(BaseModel):
        signer: Annotated[str | None, Grounded(whole_tokens=True)] = None
        date: Annotated[str | None, Grounded(whole_tokens=True, after="signer")] = None
        place: Annotated[str | None, Grounded(whole_tokens=True, after="date")] = None

    assert rules_of(Signed)["date"] == Merge("first", after="signer")
    # chunk 1 saw a date but no signer (so no bound held it); chunk 2 saw the signature
    text = "drafted 2024-01-02 in Oslo ... signed: Ada 2024-03-04 Paris"
    first = ChunkOutput(0, 30, {"signer": None, "date": "2024-01-02", "place": "Oslo"},
                        {"date": [(8, 18)], "place": [(22, 26)]})
    second = ChunkOutput(27, len(text), {"signer": "Ada", "date": "2024-03-04", "place": "Paris"},
                         {"signer": [(39, 42)], "date": [(43, 53)], "place": [(54, 59)]})
    merged = merge_outputs([first, second], rules_of(Signed))
    assert merged.data == {"signer": "Ada", "date": "2024-03-04", "place": "Paris"}
    assert merged.spans == {"signer": [(39, 42)], "date": [(43, 53)], "place": [(54, 59)]}
    for path, [(start, end)] in merged.spans.items():
        assert text[start:end] == merged.data[path]
    # without a signer anywhere the first values stand (a null sets no bound)
    alone = merge_outputs([first], rules_of(Signed))
    assert alone.data == {"signer": None, "date": "2024-01-02", "place": "Oslo"}
