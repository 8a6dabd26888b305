"""``check_grounding`` on outputs of thousands of values: each distinct
value under the same rules is located once and each place is found from
where the value before it was, so a list's repeated item takes the next of
its occurrences every time, as the occurrence rule says (then, past the
document's last one, its first), under every rule that narrows its places."""

from __future__ import annotations

from agentflow.grounding import Grounded, GroundedValue, check_grounding

ITEMS = 3_000


def _values(items: list[str], marker: Grounded) -> list[GroundedValue]:
    return [GroundedValue(f"items[{i}]", item, marker) for i, item in enumerate(items)]


def test_a_repeated_item_takes_each_next_occurrence() -> None:
    text = "Title: t\n" + "- same thing\n" * ITEMS
    starts = [9 + 13 * i + 2 for i in range(ITEMS)]
    for marker in (Grounded(), Grounded(whole_tokens=True, clean=True),
                   Grounded(whole_items=True), Grounded(line=r"^- ")):
        check = check_grounding(_values(["same thing"] * (ITEMS + 1), marker), text)
        assert [check.spans[f"items[{i}]"][0][0] for i in range(ITEMS + 1)] == [
            *starts, starts[0]], marker  # one more than the document writes: its first


def test_items_listed_out_of_order_each_take_a_free_occurrence() -> None:
    text = "".join(f"- a{i % 3}\n" for i in range(30))  # a0 a1 a2 a0 a1 a2 ...
    items = ["a2", "a0", "a0", "a1", "a2", "a2"]
    check = check_grounding(_values(items, Grounded(whole_tokens=True)), text)
    assert [check.spans[f"items[{i}]"][0][0] for i in range(len(items))] == [
        12, 17, 32, 37, 42, 57]  # each after the one before it, past those taken


def test_distinct_values_of_a_long_document_are_each_found() -> None:
    text = "".join(f"- lime{i:05d} nut {i % 97}\n" for i in range(ITEMS))
    items = [f"lime{i:05d} nut {i % 97}" for i in reversed(range(ITEMS))]
    check = check_grounding(_values(items, Grounded(whole_tokens=True, clean=True)), text)
    assert check.ok
    assert all(text[slice(*check.spans[f"items[{i}]"][0])] == item
               for i, item in enumerate(items))
