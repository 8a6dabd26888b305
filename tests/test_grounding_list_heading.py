"""A list rule without a label reads only the lists under the heading the
examples write it under, so another bulleted list of a document (a
``Methods:`` list where the notes are absent, a meeting's ``Decisions:``
above its action items) is never taken for the field's list with
confidence; and a single value read to its line's end that holds a second
clause the examples never show is no value the rule pins (the held-out
probes: ``probe_list.py`` L1-L2b, meeting minutes)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import DISAGREES, HELD, REVIEW_BELOW
from agentflow.grounding.list_heading import heading_key, names, sections
from agentflow.grounding.locators import apply_locators, learn_locators
from agentflow.grounding.marker import mark_all_strings
from agentflow.grounding.value_clauses import clause_break
from agentflow.output.examples import check_examples
from agentflow.output.schema import OutputSpec
from tests.locator_support import run_one


class Lab(BaseModel):
    test: str | None = None
    notes: list[str] = Field(default_factory=list, max_length=3)


LABS = [Example("LAB REPORT\nTest: Hemoglobin\nNotes:\n- Fasting sample\n",
                Lab(test="Hemoglobin", notes=["Fasting sample"])),
        Example("LAB REPORT\nTest: Glucose\nNotes:\n- Non-fasting\n- Repeat advised\n",
                Lab(test="Glucose", notes=["Non-fasting", "Repeat advised"]))]
BOTH = "LAB REPORT\nTest: Calcium\nMethods:\n- Immunoassay\nNotes:\n- Routine\n"
OTHER = "LAB REPORT\nTest: Calcium\nMethods:\n- Immunoassay\n- Photometry\n"


def test_heading_keys_sections_and_names() -> None:
    lines = ("Notes:", "NOTES", "## Notes", "**Action items:**", "- Notes", "Notes: Routine",
             "The notes of the lab follow:")
    assert [heading_key(x) for x in lines] == [
        "notes", "notes", "notes", "action items", "", "", ""]
    text = "Notes:\n\n- a\n  more of a\n- b\n\n- c\nNext: x\n- d\n"
    assert sections(text, "notes") == ["- a\n  more of a\n- b\n\n- c"]
    assert sections("Notes:\nnone\n- z\n", "notes") == []  # no item right under it
    # a heading names the list with the same words (case, punctuation, a plural s aside)
    assert names("action-items", "action items") and names("note", "notes")
    assert not names("methods", "notes") and not names("decisions", "action items")
    # a word more or less is another list, however many words they share
    for found, key in (("closed issues", "open issues"), ("previous action items", "action items"),
                       ("actions", "action items"), ("key features", "features"),
                       ("lab notes", "notes")):
        assert not names(found, key) and not names(key, found), (found, key)


def test_a_bulleted_list_rule_learns_its_heading_and_reads_only_under_it() -> None:
    rule = learn_locators(check_examples(LABS, Lab), Lab)["notes"]
    assert rule.heading == "notes" and rule.labelled
    assert "under a heading 'notes'" in rule.describe()
    assert rule.values(BOTH) == ["Routine"] and rule.values(OTHER) == []
    assert rule.values("Test: x\n## NOTES\n- Routine\n") == ["Routine"]  # a heading naming it
    assert rule.values("Test: x\nLAB NOTES\n- Routine\n") == []  # another heading
    # the grammar offers only an empty list where the other list stands alone
    schema = mark_all_strings(OutputSpec.of(Lab).schema_for("local").schema)
    offered = apply_locators(schema, {"notes": rule}, OTHER)["properties"]["notes"]
    assert offered.get("x-grounded-values") == []


def test_another_list_is_never_confident_for_the_field() -> None:
    cases = [(BOTH, ["Immunoassay"], DISAGREES), (BOTH, ["Routine"], HELD),
             (OTHER, ["Immunoassay", "Photometry"], DISAGREES)]
    for doc, notes, score in cases:
        result = run_one({"test": "Calcium", "notes": notes}, doc, Lab, LABS)
        assert result.ok and result.confidence["notes"] == score, (doc, notes)
    empty = run_one({"test": "Calcium", "notes": []}, OTHER, Lab, LABS)
    assert empty.confidence["notes"] < REVIEW_BELOW  # nothing shows the notes empty


def test_a_heading_sharing_a_word_is_another_list_beside_the_key_itself() -> None:
    """``Internal notes`` is another list than ``Notes``, beside a ``Notes:``
    heading (or a ``Notes: none`` line) too: its items in the field are never
    confident."""
    rule = learn_locators(check_examples(LABS, Lab), Lab)["notes"]
    both = "LAB REPORT\nTest: Calcium\nInternal notes:\n- Check payment\nNotes:\n- Routine\n"
    none = "LAB REPORT\nTest: Calcium\nNotes: none\nDriver notes:\n- Ring twice\n"
    assert rule.values(both) == ["Routine"] and rule.values(none) == []
    # (a heading only sharing a word never names the list: list_heading.names is word for word)
    assert rule.values("Test: x\nInternal notes:\n- Check payment\n") == []
    for doc, notes in ((both, ["Check payment", "Routine"]), (both, ["Check payment"]),
                       (none, ["Ring twice"])):
        result = run_one({"test": "Calcium", "notes": notes}, doc, Lab, LABS)
        assert result.ok and result.confidence["notes"] < REVIEW_BELOW, (doc, notes)
    assert run_one({"test": "Calcium", "notes": ["Routine"]}, both, Lab, LABS).confidence[
        "notes"] == HELD


def test_examples_without_a_common_heading_keep_the_rule_as_it_was() -> None:
    shown = [Example("Test: A\nNotes:\n- x\n", Lab(test="A", notes=["x"])),
             Example("Test: B\nRemarks:\n- y\n- z\n", Lab(test="B", notes=["y", "z"]))]
    rule = learn_locators(check_examples(shown, Lab), Lab)["notes"]
    assert rule.heading == "" and not rule.labelled and rule.values(OTHER) == [
        "Immunoassay", "Photometry"]


class Minutes(BaseModel):
    date: str | None = None
    actions: list[str] = Field(default_factory=list, max_length=5)


MINUTES = [Example("Date: 4 March\nAction items:\n- Book room\n",
                   Minutes(date="4 March", actions=["Book room"])),
           Example("Date: 9 March\nAction items:\n- Call Ann\n- Send notes\n",
                   Minutes(date="9 March", actions=["Call Ann", "Send notes"]))]


def test_a_list_under_a_heading_sharing_a_word_is_another_list() -> None:
    """``Previous action items`` is not the ``Action items`` list: the rule
    reads only the list under the examples' own heading, so the right list
    holds and one merged with the other list disagrees."""
    rule = learn_locators(check_examples(MINUTES, Minutes), Minutes)["actions"]
    assert rule.heading == "action items"
    doc = ("Date: 16 March\nPrevious action items:\n- Book room\n\n"
           "Action items:\n- Order chairs\n")
    assert sections(doc, "action items") == ["- Order chairs"]
    right = run_one({"date": "16 March", "actions": ["Order chairs"]}, doc, Minutes, MINUTES)
    assert right.ok and right.confidence["actions"] == HELD
    merged = run_one({"date": "16 March", "actions": ["Book room", "Order chairs"]}, doc, Minutes,
                  MINUTES)
    assert merged.ok and merged.confidence["actions"] == DISAGREES


class Meeting(BaseModel):
    date: str | None = None
    chair: str | None = None


MEETINGS = [Example("Date: 4 March 2024\nChair: Ruth Okafor\n",
                    Meeting(date="4 March 2024", chair="Ruth Okafor")),
            Example("Date: 12 Feb 2024\nChair: Dev Mehta\n",
                    Meeting(date="12 Feb 2024", chair="Dev Mehta"))]


def test_a_value_with_a_clause_the_examples_never_show_is_not_pinned() -> None:
    assert clause_break("20 May 2024 (rescheduled)") and clause_break("Dana Wells. Also: x")
    assert clause_break("Ann Lee; Bo Chan") and not clause_break("Dr. Lee Park")
    assert not clause_break("GNU C Library: shared libraries")  # often the whole value
    rules = learn_locators(check_examples(MEETINGS, Meeting), Meeting)
    doc = "Date: 20 May 2024 (rescheduled from 13 May)\nChair: Dana Wells. Also present: Ben\n"
    # still offered (the value may be whole), never pinned
    assert rules["date"].values(doc) == ["20 May 2024 (rescheduled from 13 May)"]
    assert not rules["date"].pins("20 May 2024 (rescheduled from 13 May)")
    assert not rules["chair"].pins("Dana Wells. Also present: Ben")
    assert rules["chair"].pins("Dana Wells")
    whole = run_one({"date": "20 May 2024 (rescheduled from 13 May)",
                  "chair": "Dana Wells. Also present: Ben"}, doc, Meeting, MEETINGS)
    assert whole.ok and set(whole.needs_review) == {"date", "chair"}
    part = run_one({"date": "20 May 2024", "chair": "Dana Wells"}, doc, Meeting, MEETINGS)
    assert part.ok and set(part.needs_review) == {"date", "chair"}
    # examples that show such a clause keep it the kind of value the rule reads
    noted = [Example("Date: 4 March 2024 (moved)\n", Meeting(date="4 March 2024 (moved)")),
             *MEETINGS]
    assert learn_locators(check_examples(noted, Meeting), Meeting)["date"].pins(
        "20 May 2024 (rescheduled from 13 May)")


class Entry(BaseModel):
    name: str | None = None
    comment: str | None = None


ENTRIES = [Example("[Desktop Entry]\nName=Foo Viewer\nComment=View images\n",
                   Entry(name="Foo Viewer", comment="View images")),
           Example("[Desktop Entry]\nName=Bar Terminal\nComment=Use the shell\n",
                   Entry(name="Bar Terminal", comment="Use the shell"))]


def test_a_clause_after_a_key_glued_to_its_equals_sign_is_the_values_own() -> None:
    """``Name=Python (v3.11)``, ``Comment=Code Editing. Redefined.`` (newcomer21
    probe, finding 7): a ``key=value`` line's value is its whole rest by the
    format's syntax, pinned; ``Date: 20 May 2024 (rescheduled ...)`` is not."""
    rules = learn_locators(check_examples(ENTRIES, Entry), Entry)
    doc = "[Desktop Entry]\nName=Python (v3.11)\nComment=Code Editing. Redefined.\n"
    assert rules["name"].values(doc) == ["Python (v3.11)"]
    assert rules["name"].pins("Python (v3.11)")
    assert rules["comment"].pins("Code Editing. Redefined.")
    right = run_one({"name": "Python (v3.11)", "comment": "Code Editing. Redefined."}, doc, Entry,
                 ENTRIES)
    assert right.ok and not right.needs_review and right.confidence["name"] == HELD
    spaced = [Example(e.text.replace("=", " = "), e.output) for e in ENTRIES]
    assert not learn_locators(check_examples(spaced, Entry), Entry)["name"].pins(
        "Python (v3.11)")  # ``Name = ``: a label a sentence may follow, not a glued key


def test_lists_under_headings_inside_another_list_are_one_list() -> None:
    """A heading written inside the list of another (``  Notes:`` under an
    item) starts no second copy of the lines both take: no item twice."""
    text = "Notes:\n- a\n  Notes:\n- b\n"
    assert sections(text, "notes") == ["- a\n  Notes:\n- b"]
    text = "Notes:\n  - a\n    Notes:\n- b\n"  # the inner list goes on past the outer one
    assert sections(text, "notes") == ["  - a\n    Notes:", "- b"]


def test_headings_each_inside_the_list_before_are_read_once() -> None:
    """Headings each written inside the list under the one before (each list
    running to the end) make one list, each line once (each heading copied
    its list to the end: minutes and gigabytes on 200 kB). Their time is
    ``benchmarks/bench_linear.py``'s."""
    text = "Items:\n" + "- a\n  Items:\n" * 200
    (only,) = sections(text, "items")
    assert only.count("- a") == 200
    assert sections("Items:\n" * 300, "items") == []
