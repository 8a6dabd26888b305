"""Probes of recall passes (``passes=N``): odd outputs and inputs that lost
data, dropped what the record should say, or crashed without a clear error."""

from __future__ import annotations

import re
from typing import Annotated, Any

import orjson
import pytest
from pydantic import BaseModel, Field

from agentflow.batch import extract_many
from agentflow.extraction.merge import Merge
from agentflow.grounding import Grounded
from agentflow.model import ModelProfile
from agentflow.testing import FunctionModel, RecordedRequest, Reply
from tests.test_extraction_recall import DOC

PLAIN = ModelProfile(supports_tools=False, native_output="json_schema")


def answers(*outputs: dict[str, Any]) -> FunctionModel:
    """A model that answers the passes with ``outputs`` in turn."""
    replies = iter(outputs)
    return FunctionModel(lambda request: Reply(text=orjson.dumps(next(replies)).decode()),
                         profile=PLAIN)


class Ungrounded(BaseModel):
    changes: list[str]


class Note(BaseModel):
    text: str


class Keyed(BaseModel):
    notes: Annotated[list[Note], Merge.by_key("text")]


async def test_items_of_a_later_pass_without_spans_are_kept() -> None:
    # no grounded field: no spans; the second and third passes each add an item
    model = answers({"changes": ["First change."]}, {"changes": ["Third change."]},
                    {"changes": ["Fourth change."]}, {"changes": ["Fourth change."]})
    (r,) = [r async for r in extract_many(model, [("d", DOC)], Ungrounded, passes=4,
                                          ground=False)]
    assert r.ok, r.error
    assert r.output.changes == ["First change.", "Third change.", "Fourth change."]
    assert len(model.requests) == 4  # the fourth added nothing: the passes end


async def test_items_merged_by_key_without_spans_are_kept() -> None:
    model = answers({"notes": [{"text": "a"}]}, {"notes": [{"text": "b"}]},
                    {"notes": [{"text": "b"}]})
    (r,) = [r async for r in extract_many(model, [("d", DOC)], Keyed, passes=3,
                                          ground=False)]
    assert r.ok, r.error
    assert [n.text for n in r.output.notes] == ["a", "b"]


class Voted(BaseModel):
    package: Annotated[str, Merge.majority()]
    changes: list[Annotated[str, Grounded(whole_items=True)]]


async def test_conflicts_between_passes_reach_the_result() -> None:
    model = answers({"package": "widget", "changes": ["First change."]},
                    {"package": "gadget", "changes": ["Third change."]},
                    {"package": "gadget", "changes": ["Third change."]})
    (r,) = [r async for r in extract_many(model, [("d", DOC)], Voted, passes=3,
                                          ground=False)]
    assert r.ok, r.error
    # every pass that answered votes, the third too although it added no item
    assert r.output.package == "gadget"
    assert [c.path for c in r.conflicts] == ["package"]
    assert r.conflicts[0].chosen == "gadget"


async def test_a_disagreement_from_a_pass_that_added_nothing_is_reported() -> None:
    model = answers({"package": "widget", "changes": ["First change."]},
                    {"package": "gadget", "changes": ["First change."]})
    (r,) = [r async for r in extract_many(model, [("d", DOC)], Voted, passes=3,
                                          ground=False)]
    assert r.ok, r.error
    assert r.output.package == "widget" and r.output.changes == ["First change."]
    assert [c.path for c in r.conflicts] == ["package"]
    assert len(model.requests) == 2  # the second pass added no item: the passes end


class Agreed(BaseModel):
    package: Annotated[str, Merge.must_agree()]
    changes: list[Annotated[str, Grounded(whole_items=True)]]


async def test_a_must_agree_conflict_fails_the_record_and_ends_the_passes() -> None:
    from agentflow.errors import MergeConflictError

    model = answers({"package": "widget", "changes": ["First change."]},
                    {"package": "gadget", "changes": ["Third change."]},
                    {"package": "widget", "changes": ["Fourth change."]})
    (r,) = [r async for r in extract_many(model, [("d", DOC)], Agreed, passes=3,
                                          ground=False)]
    assert not r.ok and isinstance(r.error, MergeConflictError)
    assert "'package'" in str(r.error) and "'widget'" in str(r.error)
    assert len(model.requests) == 2  # a third pass could not undo the disagreement


@pytest.mark.parametrize("passes", [True, "2", 2.5, None])
async def test_passes_that_are_not_an_int_are_a_type_error(passes: Any) -> None:
    """A wrong type of ``passes`` is a ``TypeError`` like every other argument's
    (``agentflow._arguments``); it was a ``ValueError``."""
    model = answers({"changes": ["First change."]})
    with pytest.raises(TypeError, match="passes must be an int >= 1"):
        [r async for r in extract_many(model, [("d", DOC)], Ungrounded, passes=passes)]
    assert model.requests == []


LONG = "\n\n".join(f"  * Change number {i} here." for i in range(60))
Line = Annotated[str, Grounded()]


class Capped(BaseModel):
    changes: list[Line] = Field(max_length=10)


class Uncapped(BaseModel):
    changes: list[Line]


def first_two(request: RecordedRequest) -> Reply:
    """A model that copies the first two changes of its chunk."""
    found = re.findall(r"Change number \d+ here\.", request.messages[-1].text)
    return Reply(text=orjson.dumps({"changes": found[:2]}).decode())


SMALL = ModelProfile(supports_tools=False, native_output="json_schema", context_window=600)


async def test_chunked_passes_put_items_back_in_document_order() -> None:
    model = FunctionModel(first_two, profile=SMALL)
    (r,) = [r async for r in extract_many(model, [("d", LONG)], Uncapped, passes=2)]
    assert r.ok, r.error
    assert r.chunks is not None and r.chunks.passes == 2
    starts = [r.spans[f"changes[{i}]"][0][0] for i in range(len(r.output.changes))]
    assert starts == sorted(starts)
    for i, value in enumerate(r.output.changes):
        (s, e), = r.spans[f"changes[{i}]"]
        assert LONG[s:e] == value


async def test_chunked_passes_over_max_length_keep_the_first_items() -> None:
    model = FunctionModel(first_two, profile=SMALL)
    (one,) = [r async for r in extract_many(model, [("d", LONG)], Capped, passes=1)]
    assert one.ok, one.error
    (r,) = [r async for r in extract_many(model, [("d", LONG)], Capped, passes=2)]
    assert r.ok, r.error  # a second pass must not fail a record the first one made
    assert len(r.output.changes) == 10
    starts = [r.spans[f"changes[{i}]"][0][0] for i in range(10)]
    assert starts == sorted(starts) and len(r.spans) == 10
    for i, value in enumerate(r.output.changes):
        (s, e), = r.spans[f"changes[{i}]"]
        assert LONG[s:e] == value


class Inner(BaseModel):
    text: Annotated[str, Grounded(whole_items=True)] = Field(alias="Text")


class Aliased(BaseModel):
    changes: list[Inner] = Field(alias="Changes")


async def test_passes_over_an_output_with_aliases() -> None:
    # the passes' outputs are merged by field name (model_dump): the merge
    # must still validate, else the record of a good first pass fails
    model = answers({"Changes": [{"Text": "First change."}]},
                    {"Changes": [{"Text": "Third change."}]},
                    {"Changes": [{"Text": "Third change."}]})
    (r,) = [r async for r in extract_many(model, [("d", DOC)], Aliased, passes=3)]
    assert r.ok, r.error
    assert [c.text for c in r.output.changes] == ["First change.", "Third change."]


REPEATS = """\
widget (1.2-1) unstable; urgency=medium

  [ Ann ]
  * Fix typo.
  * Other thing.

  [ Bob ]
  * Fix typo.

 -- Ann Example <ann@example.org>  Mon, 05 Feb 2024 18:02:11 +0000"""


async def test_a_later_pass_grounds_a_repeated_item_at_an_untaken_occurrence() -> None:
    from tests.test_extraction_recall import Entry, greedy_first_offered

    profile = ModelProfile(supports_tools=False, native_output="json_schema",
                           schema_dialect="local", substring_grammar=True)
    model = FunctionModel(greedy_first_offered, profile=profile)
    (r,) = [r async for r in extract_many(model, [("d", REPEATS)], Entry, passes=5)]
    assert r.ok, r.error
    # the third pass's grammar offered only Bob's "Fix typo.": it is that one
    assert r.output.changes == ["Fix typo.", "Other thing.", "Fix typo."]
    first, second = REPEATS.index("Fix typo."), REPEATS.rindex("Fix typo.")
    assert r.spans["changes[0]"] == [(first, first + 9)]
    assert r.spans["changes[2]"] == [(second, second + 9)]
    assert len(model.requests) == 3  # every item taken: no fourth pass
