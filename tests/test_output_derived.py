"""Types the pipeline derives from the user's output type (a chunk's partial
model, a recall pass's) take the user's few-shot examples in every form the
docs allow: an instance of the user's model (as the README shows), a dict by
alias; checked against the user's model, shown as the derived type
(agentflow.output.derived)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import anyio
import orjson
import pytest
from pydantic import BaseModel, Field

from agentflow import Chunking, Example, InvalidExampleError
from agentflow.batch import extract_many
from agentflow.cli import main
from agentflow.extraction.chunk_schema import partial_model
from agentflow.extraction.merge import rules_of
from agentflow.extraction.recall import later_pass_type
from agentflow.grounding import Grounded
from agentflow.model import ModelProfile
from agentflow.output.derived import origin_of
from agentflow.output.examples import check_examples, example_messages
from agentflow.testing import FunctionModel, RecordedRequest, Reply
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

NATIVE = ModelProfile(supports_tools=False, native_output="json_schema")


class Doc(BaseModel):
    """An owner and the items listed."""

    owner: Annotated[str, Grounded()] = Field(alias="Owner")
    items: list[Annotated[str, Grounded()]] = Field(default_factory=list)


EX_TEXT = "Owner: Zed\nItem: zzitem\nItem: yyitem\n"
AS_MODEL = Example(EX_TEXT, Doc(Owner="Zed", items=["zzitem", "yyitem"]))
AS_DICT = Example(EX_TEXT, {"Owner": "Zed", "items": ["zzitem", "yyitem"]})
SHOWN = '{"Owner": "Zed", "items": ["zzitem", "yyitem"]}'
LONG = "Owner: Bob\n" + "".join(f"Item: it{k}\nfiller {'w' * 40}\n" for k in range(40))


def copy_fields(request: RecordedRequest) -> Reply:
    """A model that copies the owner and the items of the document it is sent."""
    text = request.messages[-1].text
    owners = re.findall(r"Owner: (\w+)", text)
    data: dict[str, Any] = {"items": re.findall(r"Item: (\w+)", text)}
    if owners:
        data["Owner"] = owners[0]
    return Reply(text=json.dumps(data))


@pytest.mark.parametrize("example", [AS_MODEL, AS_DICT], ids=["instance", "dict"])
async def test_a_chunked_document_takes_the_users_examples(example: Example) -> None:
    model = FunctionModel(copy_fields, profile=NATIVE)
    results = [r async for r in extract_many(
        model, [("short", "Owner: Ann\nItem: apple\n"), ("long", LONG)], Doc,
        examples=[example], chunking=Chunking(max_chars=600))]
    assert [r.ok for r in results] == [True, True], [r.error for r in results]
    short, long = results
    assert short.output == Doc(Owner="Ann", items=["apple"]) and short.chunks is None
    assert long.chunks is not None and long.chunks.total > 1
    assert long.output.owner == "Bob" and long.output.items == [f"it{k}" for k in range(40)]
    assert len(model.requests) == 1 + long.chunks.total
    for request in model.requests:  # every request (each chunk's) shows the example first
        assert [(m.role, m.text) for m in request.messages[:2]] == [
            ("user", EX_TEXT), ("assistant", SHOWN)]


async def test_a_later_recall_pass_shows_the_examples_as_the_fields_it_asks_for() -> None:
    class Entry(BaseModel):
        package: Annotated[str, Grounded(whole_tokens=True)]
        changes: list[Annotated[str, Grounded()]] = Field(max_length=8)

    answers = iter([["First change."], ["Third change."], ["Third change."]])

    def answer(request: RecordedRequest) -> Reply:
        return Reply(text=orjson.dumps({"package": "widget", "changes": next(answers)}).decode())

    text = "widget (1.2)\n  * First change.\n  * Third change.\n"
    shown = Example("acme (1.0)\n  * Fix it.\n", Entry(package="acme", changes=["Fix it."]))
    model = FunctionModel(answer, profile=NATIVE)
    (r,) = [r async for r in extract_many(model, [("d", text)], Entry, passes=3,
                                          examples=[shown])]
    assert r.ok, r.error
    assert r.output == Entry(package="widget", changes=["First change.", "Third change."])
    assert [m.text for m in model.requests[0].messages[:2]] == [
        shown.text, '{"package": "acme", "changes": ["Fix it."]}']
    for later in model.requests[1:]:  # a later pass asks for the list only: so is the example
        assert [m.text for m in later.messages[:2]] == [shown.text, '{"changes": ["Fix it."]}']


def test_a_derived_type_checks_examples_against_the_users_model() -> None:
    chunk = partial_model(Doc, "items", 1)  # a map-over-items chunk of one item
    assert origin_of(chunk) is Doc and origin_of(Doc) is None
    checked = check_examples([AS_MODEL, AS_DICT], chunk)
    assert all(type(c.value) is chunk for c in checked)  # shown whole, past the chunk's bound
    assert [m.text for m in example_messages(checked, chunk)] == [EX_TEXT, SHOWN] * 2
    with pytest.raises(InvalidExampleError, match=r"examples\[0\].*Owner.*Field required"):
        check_examples([Example(EX_TEXT, {"items": ["zzitem"]})], chunk)  # the user's rules
    with pytest.raises(InvalidExampleError, match=r"examples\[0\].*itmes"):  # a typo still
        check_examples([Example(EX_TEXT, {"Owner": "Zed", "itmes": ["zzitem"]})], chunk)
    with pytest.raises(InvalidExampleError, match=r"owner='Nobody' is not in the example's text"):
        check_examples([Example(EX_TEXT, Doc(Owner="Nobody"))], chunk)

    class Other(BaseModel):
        owner: str

    with pytest.raises(InvalidExampleError, match="the output is a Other; expected a Doc"):
        check_examples([Example(EX_TEXT, Other(owner="Zed"))], chunk)
    later = later_pass_type(Doc, rules_of(Doc))
    assert origin_of(later) is Doc
    assert [m.text for m in example_messages(check_examples([AS_MODEL], later), later)] == [
        EX_TEXT, '{"items": ["zzitem", "yyitem"]}']


SCHEMA = '''
from pydantic import BaseModel
from agentflow import Example

class Owned(BaseModel):
    owner: str | None = None

EXAMPLES = [Example("Owner: Zed\\n", Owned(owner="Zed"))]
'''


async def test_cli_a_schema_modules_examples_reach_every_chunk(tmp_path: Path) -> None:
    (tmp_path / "schema.py").write_text(SCHEMA)
    docs = tmp_path / "in"
    docs.mkdir()
    (docs / "short.txt").write_text("Owner: Ann\n")
    (docs / "long.txt").write_text("Owner: Bob\n" + "filler words here\n" * 300)
    bodies: list[Any] = []

    def reply(body: Any) -> FakeReply:
        bodies.append(body)
        owners = re.findall(r"Owner: (\w+)", body["messages"][-1]["content"])
        return FakeReply(text=json.dumps({"owner": owners[0] if owners else None}))

    out = tmp_path / "o.jsonl"
    async with OpenAIFake() as fake:
        fake.default = reply
        status = await anyio.to_thread.run_sync(main, [
            "extract", "--schema", f"{tmp_path / 'schema.py'}:Owned", "--input", str(docs),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
            "--out", str(out), "--chunk-chars", "2000"])
    assert status == 0
    records = {Path(r["id"]).name: r for r in map(json.loads, out.read_text().splitlines())}
    assert records["short.txt"]["ok"] and records["short.txt"]["output"] == {"owner": "Ann"}
    assert records["long.txt"]["ok"], records["long.txt"].get("error")
    assert records["long.txt"]["output"] == {"owner": "Bob"}
    assert len(bodies) > 2  # the long document was read in chunks
    for body in bodies:
        assert [(m["role"], m["content"]) for m in body["messages"]][-3:-1] == [
            ("user", "Owner: Zed\n"), ("assistant", '{"owner": "Zed"}')]
