"""Recall passes over a document read in one request (agentflow.extraction.recall)."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
import pytest
from pydantic import BaseModel, Field

from agentflow.batch import ExtractResult, extract_many
from agentflow.extraction.recall import recall_passes, room_left, taken_items
from agentflow.grounding import Grounded
from agentflow.grounding.items import item_spans
from agentflow.grounding.output_checks import TAKEN_KEY, call_source, call_taken
from agentflow.messages import Msg
from agentflow.model import ModelProfile, Usage
from agentflow.output.grammar import substring_grammar
from agentflow.output.grammar_values import item_values
from agentflow.testing import FunctionModel, RecordedRequest, Reply

DOC = """\
widget (1.2-1) unstable; urgency=medium

  * First change.
  * Second change,
    on two lines.
  * Third change.
  * Fourth change.

 -- Ann Example <ann@example.org>  Mon, 05 Feb 2024 18:02:11 +0000"""

SEPARATORS = {"key_separator": ": ", "item_separator": ", "}
Item = Annotated[str, Grounded(whole_items=True)]


class Entry(BaseModel):
    package: Annotated[str, Grounded(whole_tokens=True)]
    changes: list[Item] = Field(max_length=8)


def spans() -> list[tuple[int, int]]:
    return item_spans(DOC)


def result(output: Any, spans: dict[str, list[tuple[int, int]]],
           error: Exception | None = None) -> ExtractResult:
    return ExtractResult(0, "d", output, error, Usage(input_tokens=10, output_tokens=5,
                                                      requests=1), 1, 0.1, spans)


def entry_result(indexes: list[int]) -> ExtractResult:
    """A pass that copied the items at ``indexes`` (and the package)."""
    sp = spans()
    found = {f"changes[{k}]": [sp[i]] for k, i in enumerate(indexes)}
    found["package"] = [(0, 6)]
    return result(Entry(package="widget", changes=[DOC[sp[i][0]:sp[i][1]] for i in indexes]),
                  found)


# ------------------------------------------------------------------ the grammar


def test_grammar_does_not_offer_taken_list_items_again() -> None:
    schema = {"type": "object", "properties": {
        "changes": {"type": "array", "maxItems": 8,
                    "items": {"type": "string", "x-grounded": "whole_items"}},
        "first": {"type": "string", "x-grounded": "whole_items"}},
        "required": ["changes", "first"]}
    sp = spans()
    grammar = substring_grammar(schema, DOC, SEPARATORS, frozenset(sp[:2]))
    assert grammar is not None
    chain = [line for line in grammar.splitlines() if line.startswith("n0_")]
    assert chain and not any("First change." in line for line in chain)
    assert any("Third change." in line for line in chain)
    # a scalar whole item is not a list item: every item is still offered to it
    listed = [line for line in grammar.splitlines() if line.startswith("GROUNDED_")]
    assert any("First change." in line for line in listed)
    # every item taken: the list can only be empty
    grammar = substring_grammar(schema, DOC, SEPARATORS, frozenset(sp))
    assert grammar is not None and 'n0: "[" "]"' in grammar.splitlines()


def test_item_values_skip_taken_spans_only() -> None:
    sp = spans()
    assert item_values(DOC, taken={sp[1]}) == [DOC[s:e] for s, e in sp if (s, e) != sp[1]]
    assert item_values(DOC, taken=set()) == [DOC[s:e] for s, e in sp]


def test_call_taken_shifts_spans_to_the_joined_source() -> None:
    first = Msg.user("abc", metadata={TAKEN_KEY: [(0, 1)]})
    second = Msg.user("defg", metadata={TAKEN_KEY: [[1, 3]]})
    inputs = [first, Msg.system("s"), second]  # a non-user input takes no place in the source
    assert call_source(inputs) == "abc\n\ndefg"
    taken = call_taken(inputs)
    assert taken == {(0, 1), (6, 8)}
    assert call_source(inputs)[6:8] == "ef"
    assert call_taken([Msg.user("x")]) == frozenset()
    junk = Msg.user("abc", metadata={TAKEN_KEY: [(0, 1), "ab", (1,), ("0", "1"), (True, 2)]})
    assert call_taken([junk]) == {(0, 1)}
    assert call_taken([Msg.user("abc", metadata={TAKEN_KEY: 5})]) == frozenset()


# ------------------------------------------------------------------ the pass rules


def test_room_left() -> None:
    sp = spans()
    assert room_left(Entry, {"changes": ["x"]}, DOC, frozenset(sp[:1]))
    assert not room_left(Entry, {"changes": ["x"]}, DOC, frozenset(sp))  # all taken
    assert not room_left(Entry, {"changes": ["x"] * 8}, DOC, frozenset())  # at max_length

    class Plain(BaseModel):
        names: list[str]

    class NoList(BaseModel):
        name: str

    assert room_left(Plain, {"names": ["a"]}, DOC, frozenset())  # cannot tell: try
    assert not room_left(NoList, {"name": "a"}, DOC, frozenset())


def test_taken_items_are_the_spans_under_list_fields() -> None:
    found = {"package": [(0, 6)], "changes[0]": [(1, 2)], "entries[1].version": [(5, 9)],
             "changes_note": [(7, 8)]}
    assert taken_items(found, ["changes", "entries"]) == {(1, 2), (5, 9)}


def test_a_later_pass_asks_only_for_fields_whose_later_values_count() -> None:
    from agentflow.extraction.merge import Merge, rules_of
    from agentflow.extraction.recall import later_pass_type

    ask = later_pass_type(Entry, rules_of(Entry))
    assert list(ask.model_fields) == ["changes"] and ask.__name__ == "Entry"
    assert ask.model_json_schema()["properties"] == {
        "changes": Entry.model_json_schema()["properties"]["changes"]}

    class Chained(BaseModel):  # a kept field keeps the field it begins after
        package: Annotated[str, Grounded(whole_tokens=True)]
        version: Annotated[str, Grounded(whole_tokens=True, after="package"), Merge.majority()]
        note: str
        changes: list[Item] = Field(max_length=8)

    chained = later_pass_type(Chained, rules_of(Chained))
    assert list(chained.model_fields) == ["package", "version", "changes"]

    class Lists(BaseModel):
        changes: list[Item] = Field(max_length=8)

    assert later_pass_type(Lists, rules_of(Lists)) is Lists


async def test_later_passes_add_items_in_document_order_and_stop_when_nothing_is_new() -> None:
    seen: list[frozenset[tuple[int, int]]] = []
    replies = {0: [2], 1: [1, 3]}  # pass 2 takes the third item, pass 3 the 2nd and 4th

    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        seen.append(taken)
        return entry_result(replies[len(seen) - 1])

    outcome = await recall_passes(entry_result([0]), DOC, Entry, 5, again)
    sp = spans()
    assert outcome.error is None
    assert outcome.output.changes == [DOC[s:e] for s, e in sp]  # all four, in order
    assert seen == [frozenset(sp[:1]), frozenset({sp[0], sp[2]})]  # then nothing is left
    for i, (s, e) in enumerate(sp):
        assert outcome.spans[f"changes[{i}]"] == [(s, e)]
    assert outcome.spans["package"] == [(0, 6)]
    assert list(outcome.spans) == ["package", *(f"changes[{i}]" for i in range(4))]  # in order
    assert outcome.chunks is not None and (outcome.chunks.total, outcome.chunks.passes) == (3, 3)
    assert outcome.usage.requests == 3 and outcome.attempts == 3


async def test_a_pass_that_adds_nothing_ends_the_passes() -> None:
    calls = 0

    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        nonlocal calls
        calls += 1
        return entry_result([0])  # the same item again (a model without a grammar)

    outcome = await recall_passes(entry_result([0]), DOC, Entry, 4, again)
    assert calls == 1 and outcome.output.changes == [DOC[slice(*spans()[0])]]


async def test_a_failed_later_pass_loses_nothing() -> None:
    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        return result(None, {}, RuntimeError("boom"))

    first = entry_result([1])
    outcome = await recall_passes(first, DOC, Entry, 3, again)
    assert outcome.error is None and outcome.output == first.output
    assert outcome.chunks is not None and outcome.chunks.failed == 1
    assert outcome.spans["changes[0]"] == first.spans["changes[0]"]


async def test_merged_list_keeps_max_length_first_items_in_document_order() -> None:
    class Two(BaseModel):
        package: Annotated[str, Grounded(whole_tokens=True)]
        changes: list[Item] = Field(max_length=2)

    sp = spans()

    def two(indexes: list[int]) -> ExtractResult:
        r = entry_result(indexes)
        return result(Two(package="widget", changes=r.output.changes), r.spans)

    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        return two([0])

    outcome = await recall_passes(two([3]), DOC, Two, 2, again)
    assert outcome.error is None
    assert outcome.output.changes == [DOC[slice(*sp[0])], DOC[slice(*sp[3])]]
    assert outcome.spans["changes[0]"] == [sp[0]] and outcome.spans["changes[1]"] == [sp[3]]


async def test_passes_that_disagree_on_a_must_agree_field_fail_the_record() -> None:
    from agentflow.errors import MergeConflictError
    from agentflow.extraction.merge import Merge

    class Strict(BaseModel):
        package: Annotated[str, Merge.must_agree()]
        changes: list[Item] = Field(max_length=8)

    def strict(package: str, indexes: list[int]) -> ExtractResult:
        r = entry_result(indexes)
        return result(Strict(package=package, changes=r.output.changes), r.spans)

    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        assert list(ask.model_fields) == ["package", "changes"]  # must_agree: asked again
        return strict("gadget", [2])

    outcome = await recall_passes(strict("widget", [0]), DOC, Strict, 2, again)
    assert isinstance(outcome.error, MergeConflictError) and outcome.output is None
    assert outcome.conflicts and outcome.conflicts[0].path == "package"


async def test_failed_first_pass_is_returned_as_is() -> None:
    async def again(taken: frozenset[tuple[int, int]], ask: Any) -> ExtractResult:
        raise AssertionError("no later pass after a failed first one")

    boom = RuntimeError("x")
    outcome = await recall_passes(result(None, {}, boom), DOC, Entry, 3, again)
    assert outcome.error is boom and outcome.chunks is None


# ------------------------------------------------------------------ end to end


def greedy_first_offered(request: RecordedRequest) -> Reply:
    """A stand-in for a grammar-constrained greedy model that copies one item
    and closes the list: it takes the first item its grammar still offers."""
    rf = request.options.response_format
    assert rf is not None and rf.source is not None
    grammar = substring_grammar(rf.schema or {}, rf.source, SEPARATORS, rf.taken)
    assert grammar is not None
    offered = item_values(rf.source, taken=rf.taken)
    fields = {"package": "widget", "changes": offered[:1]}
    return Reply(text=orjson.dumps({k: v for k, v in fields.items()
                                    if k in (rf.schema or {}).get("properties", {})}).decode())


@pytest.mark.parametrize("passes", [1, 3, 9])
async def test_extract_many_passes_on_a_grammar_model(passes: int) -> None:
    profile = ModelProfile(supports_tools=False, native_output="json_schema",
                           schema_dialect="local", substring_grammar=True)
    model = FunctionModel(greedy_first_offered, profile=profile)
    results = [r async for r in extract_many(model, [("d", DOC)], Entry, passes=passes)]
    (r,) = results
    assert r.ok, r.error
    sp = spans()
    want = min(passes, len(sp))
    assert r.output.changes == [DOC[s:e] for s, e in sp[:want]]
    assert len(model.requests) == want  # no pass once every item is taken
    for i in range(want):
        assert r.spans[f"changes[{i}]"] == [sp[i]]
    if passes > 1:
        assert r.chunks is not None and r.chunks.passes == want
        second = model.requests[1].messages[-1]
        assert second.metadata[TAKEN_KEY] == [sp[0]]
        # a later pass asks only for the list: the package is the first pass's
        formats = [r.options.response_format for r in model.requests]
        assert [list((f.schema or {})["properties"]) for f in formats if f is not None] == [
            ["package", "changes"], *[["changes"]] * (want - 1)]
        assert r.output.package == "widget" and r.spans["package"] == [(0, 6)]
    else:
        assert r.chunks is None


async def test_extract_many_passes_without_a_grammar_are_independent_samples() -> None:
    answers = iter([["First change."], ["Third change."], ["Third change."]])

    def answer(request: RecordedRequest) -> Reply:
        assert request.options.response_format is None or (
            request.options.response_format.taken == frozenset())
        return Reply(text=orjson.dumps({"package": "widget", "changes": next(answers)}).decode())

    model = FunctionModel(answer, profile=ModelProfile(supports_tools=False,
                                                        native_output="json_schema"))
    (r,) = [r async for r in extract_many(model, [("d", DOC)], Entry, passes=5)]
    assert r.ok and r.output.changes == ["First change.", "Third change."]
    assert len(model.requests) == 3  # the third added nothing: no fourth


# ------------------------------------------------------------------ the CLI

RECALL_SCHEMA = '''
from typing import Annotated
from pydantic import BaseModel, Field
from agentflow.grounding import Grounded

class Entry(BaseModel):
    changes: list[Annotated[str, Grounded(whole_items=True)]] = Field(max_length=8)

PASSES = {passes!r}
'''


async def test_cli_reads_passes_from_the_schema_module(tmp_path: Any) -> None:
    import anyio

    from agentflow.cli import main
    from tests.fakes.base import FakeReply
    from tests.fakes.openai import OpenAIFake

    doc = tmp_path / "doc.txt"
    doc.write_text(DOC)
    answers = iter([["Third change."], ["First change."], ["First change."]])

    def reply(body: Any) -> FakeReply:
        return FakeReply(text=orjson.dumps({"changes": next(answers)}).decode())

    async with OpenAIFake() as fake:
        fake.default = reply
        for passes, status_wanted in ((0, 2), ("2", 2), (3, 0)):
            schema = tmp_path / f"schema{passes}.py"
            schema.write_text(RECALL_SCHEMA.format(passes=passes))
            out = tmp_path / f"out{passes}.jsonl"
            status = await anyio.to_thread.run_sync(main, [
                "extract", "--schema", f"{schema}:Entry", "--input", str(doc),
                "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
                "--out", str(out)])
            assert status == status_wanted
            if status == 2:
                assert fake.requests == [] and not out.exists()
        assert len(fake.requests) == 3  # the third pass added nothing: no fourth
    (record,) = [orjson.loads(x) for x in (tmp_path / "out3.jsonl").read_bytes().splitlines()]
    assert record["ok"] and record["output"]["changes"] == ["First change.", "Third change."]
    assert record["chunks"]["passes"] == 3 and record["chunks"]["total"] == 3
    first = DOC.index("First change.")
    assert record["spans"]["changes[0]"] == [[first, first + len("First change.")]]
