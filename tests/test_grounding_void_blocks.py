"""Text a document marks as no longer in force (cancelled, superseded, struck
out) is never where a learned locator or a hand rule reads a field: a value
taken from there is never confident (the held-out probes: an order's
cancelled shipment above the current notice, a lab report's erroneous first
entry). Void text only ever lowers confidence: a value beside a void one
under the same label is not pinned either. A void word is only a status
(bracketed, after a dash, a stamp in capitals, a Markdown heading), never
a word of a sentence; and finding void text is linear in the text."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.extraction.confidence import DISAGREES, GROUNDED, HELD, REVIEW_BELOW
from agentflow.extraction.hand_rules import held_fields
from agentflow.grounding import Grounded
from agentflow.grounding.list_heading import sections
from agentflow.grounding.locators import learn_locators
from agentflow.grounding.void_blocks import live_text, void_spans
from agentflow.output.examples import check_examples
from agentflow.testing import FunctionModel


class Ship(BaseModel):
    order_id: str | None = None
    carrier: str | None = None
    shipped: str | None = None


SHIPS = [
    Example("SHIPPING NOTICE\nOrder: A-1001\nCarrier: UPS\nShipped: 2024-03-05\n",
            Ship(order_id="A-1001", carrier="UPS", shipped="2024-03-05")),
    Example("SHIPPING NOTICE\nOrder: C-7730\nCarrier: Royal Mail\nShipped: 2024-04-11\n",
            Ship(order_id="C-7730", carrier="Royal Mail", shipped="2024-04-11")),
]


def _run(answer: dict[str, Any], doc: str) -> Any:
    async def go() -> Any:
        model = FunctionModel(lambda request: json.dumps(answer))
        (result,) = [r async for r in extract_many(model, [doc], Ship, examples=SHIPS)]
        return result

    return asyncio.run(go())


def _void(text: str) -> list[str]:
    return [text[s:e] for s, e in void_spans(text)]


def test_void_headings_notes_and_struck_text_are_found_and_blanked() -> None:
    doc = ("PREVIOUS SHIPMENT (cancelled)\nCarrier: GLS\nTracking: G1\n\n"
           "SHIPPING NOTICE\nCarrier: DPD\n")
    assert _void(doc) == ["PREVIOUS SHIPMENT (cancelled)\nCarrier: GLS\nTracking: G1"]
    live = live_text(doc)
    assert len(live) == len(doc) and live.count("\n") == doc.count("\n")
    assert "GLS" not in live and "Carrier: DPD" in live
    # a Markdown heading's block runs to the next heading of its level
    md = "## Superseded entry\n\nUnit: mg/dL\n\nMore: x\n## Current\nUnit: mmol/L\n"
    assert _void(md) == ["## Superseded entry\n\nUnit: mg/dL\n\nMore: x"]
    # a status in capitals heads its block; so does a note in brackets or after a dash
    for heading in ("CANCELLED SHIPMENT", "PREVIOUS SHIPMENT CANCELLED", "DO NOT USE",
                    "Old order (void)", "Old order [superseded by order 12]",
                    "Previous shipment - cancelled", "**VOID**"):
        doc = f"{heading}\nCarrier: GLS\n\nCarrier: DPD\n"
        assert _void(doc) == [f"{heading}\nCarrier: GLS"], heading
    # a note on a line voids the line; struck-out text is void where it is
    assert _void("Next meeting: 5 May (cancelled)\nChair: Ann\n") == [
        "Next meeting: 5 May (cancelled)"]
    assert _void("- Toaster - withdrawn\n- Kettle\n") == ["- Toaster - withdrawn"]
    assert _void("Carrier: ~~GLS~~ DPD\n") == ["~~GLS~~"]
    assert _void("Carrier: <del>GLS</del> DPD\n") == ["<del>GLS</del>"]
    assert _void("Carrier: G\u0336L\u0336S\u0336 DPD\n") == ["G\u0336L\u0336S\u0336"]


def test_a_void_word_as_a_value_or_in_a_sentence_voids_nothing() -> None:
    for text in ("Status: Cancelled\nCarrier: DPD\n",  # a status, not a note
                 "STATUS: CANCELLED\nCarrier: DPD\n",
                 "Order: A-1\nCancellation policy: 14 days\n",  # no void word
                 "The previous order was cancelled by phone, as agreed.\nCarrier: DPD\n",
                 "Carrier: DPD\nThe old order was cancelled\nTracking: X1\n"):  # mid-block
        assert void_spans(text) == (), text
        assert live_text(text) is text


def test_a_void_word_that_is_no_status_of_its_line_voids_nothing() -> None:
    """A short line after a blank line is no void heading because a void
    word is in it: the word must be the line's status, not a word of what
    it says (a transaction, a warning, a condition, a row of a list)."""
    for line in ("Cash withdrawn", "Do not use near water", "Void if unpaid after 30 days",
                 "Late orders may be cancelled", "Order 1182 cancelled",
                 "VOID IF UNPAID", "DO NOT USE NEAR WATER", "## Late orders may be cancelled",
                 "Refunds (if cancelled)", "Total - void after 30 days"):
        text = f"Receipt 7\n\n{line}\nTotal: 1200\nOrder 1183 shipped\n"
        assert void_spans(text) == (), line
    for line in ("Total: 50 (refund if cancelled)", "Total: 50 - do not use if opened"):
        assert void_spans(f"{line}\nCarrier: DPD\n") == (), line


def test_a_heading_that_names_another_text_void_heads_the_text_in_force() -> None:
    """``(replaces the cancelled notice below)`` says the *other* notice is
    void: the block it heads is in force, so its values are never read as
    void ones, and the stale block's values are never confident."""
    for text in ("SHIPPING NOTICE (replaces the cancelled notice below)\nCarrier: DPD\n",
                 "## Notice replacing a withdrawn one\nx\n"):
        assert void_spans(text) == (), text
    # (a note that ends in a void word, "(earlier notice in error)", "(GLS cancelled)",
    # still voids its own line: over-voiding only ever lowers confidence, below)
    for text in ("## Withdrawn\nx\n", "ORIGINAL ENTRY IN ERROR\nx\n",
                 "OLD NOTICE - cancelled by the sender\nx\n"):
        assert void_spans(text) != (), text
    stale = ("PREVIOUS NOTICE\nOrder: A-2006\nCarrier: GLS\nShipped: 2024-05-01\n\n")
    for doc in ("SHIPPING NOTICE (replaces the cancelled notice below)\nOrder: A-2006\n"
                "Carrier: DPD\nShipped: 2024-05-07\n\n" + stale,
                stale + "CORRECTED NOTICE (earlier notice in error)\nOrder: A-2006\n"
                "Carrier: DPD\nShipped: 2024-05-07\n"):
        wrong = _run({"order_id": "A-2006", "carrier": "GLS", "shipped": "2024-05-01"}, doc)
        assert {"carrier", "shipped"} <= set(wrong.needs_review), doc


def test_a_value_only_in_a_cancelled_block_is_never_held() -> None:
    """The notice names its carrier in prose; only the cancelled block writes
    ``Carrier:``: the value copied from there is merely grounded."""
    doc = ("CANCELLED SHIPMENT\nCarrier: GLS\n\nSHIPPING NOTICE\nOrder: A-2009\n"
           "Sent with DPD.\nShipped: 2024-05-09\n")
    for carrier in ("GLS", "DPD"):
        result = _run({"order_id": "A-2009", "carrier": carrier, "shipped": "2024-05-09"}, doc)
        assert result.ok and result.confidence["carrier"] == GROUNDED, carrier
        assert "carrier" in result.needs_review
    result = _run({"order_id": "A-2009", "carrier": None, "shipped": "2024-05-09"}, doc)
    assert result.confidence["carrier"] < REVIEW_BELOW  # its label is written: no sure null


def test_a_void_block_never_makes_the_value_beside_it_confident() -> None:
    """Read whole, each document writes two carriers under the label: the
    rule cannot say which is meant. Blanking one must not let it pin the
    other (a heading read as void by mistake would then pin the wrong
    value): the current value is scored as if there were no rule (merely
    grounded), the void one still disagrees."""
    rules = learn_locators(check_examples(SHIPS, Ship), Ship)
    for doc in ("PREVIOUS SHIPMENT (cancelled)\nCarrier: GLS\n\n"
                "SHIPPING NOTICE\nOrder: A-2006\nCarrier: DPD\nShipped: 2024-05-07\n",
                "SHIPPING NOTICE\nOrder: A-2006\nCarrier: GLS [superseded]\nCarrier: DPD\n"
                "Shipped: 2024-05-07\n",
                "SHIPPING NOTICE\nOrder: A-2006\nCarrier: ~~GLS~~ DPD\nShipped: 2024-05-07\n"):
        assert rules["carrier"].values(doc) == ["DPD"], doc
        right = _run({"order_id": "A-2006", "carrier": "DPD", "shipped": "2024-05-07"}, doc)
        assert right.confidence["carrier"] == GROUNDED, doc
        assert right.needs_review == ("carrier",) and right.confidence["order_id"] == HELD, doc
        wrong = _run({"order_id": "A-2006", "carrier": "GLS", "shipped": "2024-05-07"}, doc)
        # (never ok and confident: ``~~GLS~~`` is no whole token, so grounding refuses it)
        assert not wrong.ok or wrong.confidence["carrier"] == DISAGREES, doc
        assert wrong.ok or "~~" in doc


class Flagged(BaseModel):
    carrier: Annotated[str | None, Grounded(line=r"^Carrier:", whole_tokens=True)] = Field(
        None, pattern=r"^[A-Z]{3}$")
    parts: list[Annotated[str, Grounded(whole_items=True)]] = []


def test_hand_rules_never_hold_a_void_value_nor_one_beside_it() -> None:
    def at(doc: str, text: str) -> list[tuple[int, int]]:
        return [(doc.index(text), doc.index(text) + len(text))]

    doc = "OLD ORDER (void)\nCarrier: GLS\n- Bolt\n\nORDER\nCarrier: DPD\n- Nut\n"
    # a value or an item taken from the void block never holds
    assert held_fields(Flagged, Flagged(carrier="GLS", parts=["Bolt", "Nut"]), doc,
                       {"carrier": at(doc, "GLS"), "parts[0]": at(doc, "Bolt"),
                        "parts[1]": at(doc, "Nut")}) == frozenset()
    # the live text leaves one carrier and one item, the whole text two: voiding
    # one cannot make the other the only one
    assert held_fields(Flagged, Flagged(carrier="DPD", parts=["Nut"]), doc,
                       {"carrier": at(doc, "DPD"), "parts[0]": at(doc, "Nut")}) == frozenset()
    # nor the only value a void block holds
    alone = "OLD ORDER (void)\nCarrier: GLS\n- Bolt\n\nORDER\nRef: 12\n"
    assert held_fields(Flagged, Flagged(carrier="GLS", parts=["Bolt"]), alone,
                       {"carrier": at(alone, "GLS"), "parts[0]": at(alone, "Bolt")}) == frozenset()
    # where the void block writes no other value, the rules hold as ever
    other = "OLD ORDER (void)\nRef: 11\n\nORDER\nCarrier: DPD\n- Nut\n"
    assert held_fields(Flagged, Flagged(carrier="DPD", parts=["Nut"]), other,
                       {"carrier": at(other, "DPD"), "parts[0]": at(other, "Nut")}) == {
        "carrier", "parts"}


def test_hostile_shapes_are_read_whole() -> None:
    """The shapes that once took time growing with the square of the text
    (unclosed ``<s>``, a line of ``~~``, many void headings, many ``Notes``
    lines): what they void and list. Their time is a benchmark's
    (``benchmarks/bench_linear.py``: the work on a text 8 times longer
    against the short one done 8 times), never a unit test's."""
    assert void_spans.__wrapped__("<s> x\n" * 50) == ()  # never closed: nothing struck
    tags = "<del " * 50 + " <del>gone</del>"  # unclosed tags, then a closed pair
    assert [tags[a:b] for a, b in void_spans.__wrapped__(tags)] == ["<del>gone</del>"]
    items = sections("Notes\n" * 50 + "Notes:\n" + "- x\n" * 50, "notes")
    assert items == ["- x\n" * 49 + "- x"]  # the list under the key, not the 50 headings
    blanked = live_text("CANCELLED\nTotal: 1\n\n" * 50)
    assert "Total: 1" not in blanked and len(blanked) == len("CANCELLED\nTotal: 1\n\n" * 50)


def test_struck_text_runs_to_its_own_closer_only() -> None:
    assert _void("Carrier: ~~a~b~~ DPD\n") == ["~~a~b~~"]
    assert _void("about ~~ 5 then ~~GLS~~\n") == ["~~GLS~~"]  # an opener left open
    assert _void("<s class='x'>GLS</S>\n") == ["<s class='x'>GLS</S>"]


def test_struck_text_pairs_as_gfm_pairs_it() -> None:
    """A ``~~`` that closes closes the nearest opener before it (GFM's
    strikethrough, CommonMark's delimiter runs): openers left open strike
    nothing, however many come first."""
    assert _void("Carrier: ~~a ~~b ~~GLS~~ DPD\n") == ["~~GLS~~"]
    line = "~~a " * 50 + "~~gone~~"
    assert [line[a:b] for a, b in void_spans.__wrapped__(line)] == ["~~gone~~"]
    assert _void("x ~~a ~~b~~ c~~ y\n") == ["~~a ~~b~~ c~~"]  # nested: the outer pair too
    assert _void("was ~~(GLS)~~, now DPD\n") == ["~~(GLS)~~"]  # punctuation inside
    assert _void("a ~~ b ~~ c\n") == []  # against whitespace: neither opens nor closes
    assert _void("~~~GLS~~~ and ~~~~x~~~~\n") == []  # runs of three or more: no strike
    assert _void("~~a\nb~~ ~~c~~\n") == ["~~c~~"]  # one line: an opener ends with it
