"""extract_many: one result per input, concurrency bounded, failures isolated."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from agentflow import (
    Derived,
    ModelProfile,
    ProviderConnectionError,
    ReActAgent,
    StructuredOutputError,
)
from agentflow.batch import ExtractInput, ExtractResult, extract_many
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply

GR = "generate_response"


class Record(BaseModel):
    word: str
    length: Annotated[int, Derived()]  # computed, not written: grounding leaves it alone


def make_model(delays: dict[str, float] | None = None) -> tuple[FunctionModel, list[int]]:
    in_flight = [0, 0]  # current, peak

    async def answer(request: RecordedRequest) -> Reply:
        text = next(m.text for m in request.messages if m.role == "user")
        in_flight[0] += 1
        in_flight[1] = max(in_flight[1], in_flight[0])
        try:
            await anyio.sleep((delays or {}).get(text, 0.001))
        finally:
            in_flight[0] -= 1
        if text == "broken":
            raise ProviderConnectionError("stream cut", partial=True)
        if text == "prose":
            return Reply(text="I refuse to use tools.")
        return Reply(tool_calls=[Call(GR, {"word": text, "length": len(text)})])

    return FunctionModel(answer, profile=ModelProfile()), in_flight


async def collect(**kw: object) -> list[ExtractResult]:
    return [r async for r in extract_many(**kw)]  # type: ignore[arg-type]


async def test_every_input_yields_exactly_one_result_in_input_order() -> None:
    model, peak = make_model({"a": 0.05, "bb": 0.0})
    words = ["a", "bb", "broken", "prose", "ccc"] + [f"w{i}" for i in range(30)]
    results = await collect(agent_or_model=model, inputs=words, output=Record, concurrency=4)
    assert [r.index for r in results] == list(range(len(words)))
    assert [r.id for r in results] == [str(i) for i in range(len(words))]
    assert results[0].output == Record(word="a", length=1)
    assert isinstance(results[2].error, ProviderConnectionError) and not results[2].ok
    assert isinstance(results[3].error, StructuredOutputError)
    assert results[3].attempts == 4  # 1 + 3 forced retries
    assert all(r.ok for r in results if r.id not in ("2", "3"))
    assert peak[1] <= 4
    assert all(r.duration > 0 for r in results)
    assert results[0].usage.requests == 1


async def test_completed_order_and_ids() -> None:
    model, _ = make_model({"slow": 0.1})
    inputs = [ExtractInput("s", "slow"), ("f", "fast")]
    results = await collect(
        agent_or_model=model, inputs=inputs, output=Record, order="completed"
    )
    assert [r.id for r in results] == ["f", "s"]


async def test_async_iterable_input_and_agent() -> None:
    model, _ = make_model()

    async def gen():  # type: ignore[no-untyped-def]
        for w in ("x", "yy"):
            yield w

    agent = ReActAgent("a", model)
    results = await collect(agent_or_model=agent, inputs=gen(), output=Record)
    assert [r.output.length for r in results] == [1, 2]
    users = [[m.text for m in r.messages if m.role == "user"] for r in model.requests]
    assert sorted(users) == [["x"], ["yy"]]  # each item ran on its own fresh state


async def test_breaking_out_cancels_the_rest() -> None:
    """Only ``w0`` ever answers: the other calls in flight when the loop breaks
    end only by being cancelled, once the loop finalizes the abandoned iteration."""
    model, in_flight = make_model({f"w{i}": 3600 for i in range(1, 50)})
    got = []
    with anyio.fail_after(60):  # a run that waited for the rest would never end
        async for r in extract_many(model, [f"w{i}" for i in range(50)], Record, concurrency=5,
                                    order="completed"):
            got.append(r)
            break
        assert len(got) == 1
        while in_flight[0]:  # noqa: ASYNC110 - the finalizer's cancels offer no event
            await anyio.sleep(0.01)
    assert in_flight[1] == 5  # the rest were in flight, and now nothing is left running


async def test_bad_arguments() -> None:
    model, _ = make_model()
    with pytest.raises(ValueError, match="concurrency"):
        await collect(agent_or_model=model, inputs=["a"], output=Record, concurrency=0)
    with pytest.raises(TypeError, match="input 1"):
        await collect(agent_or_model=model, inputs=["a", 42], output=Record)


async def test_an_input_with_media_is_sent_whole_with_its_blocks() -> None:
    from agentflow.content import DocumentBlock
    from agentflow.extraction.budget import Chunking
    from tests.pdfs import scanned_pdf

    seen: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply(text='{"word": "scan", "length": 4}')

    model = FunctionModel(answer, profile=ModelProfile(input_modalities=frozenset(
        {"text", "pdf"}), context_window=2048))
    block = DocumentBlock.from_bytes(scanned_pdf(1), "application/pdf", filename="scan.pdf")
    inputs = [ExtractInput("scan", "", (block,)),  # no text: the PDF alone, not "empty"
              ExtractInput("both", "word " * 5000, (block,))]  # long text: not chunked
    results = {r.id: r async for r in extract_many(model, inputs, Record, ground=False,
                                                  chunking=Chunking(max_chars=1000))}
    assert all(r.ok and r.attempts == 1 and r.chunks is None for r in results.values())
    users = [next(m for m in request.messages if m.role == "user") for request in seen]
    assert sorted(len(m.content) for m in users) == [1, 2]  # [PDF] and [PDF, text]
    assert all(m.media == [block] for m in users)


async def test_a_model_given_by_name_is_closed_an_object_stays_open(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``extract_many("vendor:model", ...)`` builds the model, so it closes it
    (no unclosed HTTP session left behind); a model object is the caller's."""
    from agentflow.providers import registry

    closed: list[str] = []

    class Closing(FunctionModel):
        async def aclose(self) -> None:
            closed.append(self.model_name)

    def factory(name: str, **_: object) -> Closing:
        model, _peak = make_model()
        return Closing(model.function, profile=ModelProfile(), name=name)

    monkeypatch.setattr(registry, "VENDORS", dict(registry.VENDORS))
    monkeypatch.setattr(registry, "_FACTORIES", {})
    registry.register_vendor("closing", factory)
    results = await collect(agent_or_model="closing:m1", inputs=["ab"], output=Record)
    assert results[0].ok and closed == ["m1"]
    mine = factory("m2")
    await collect(agent_or_model=mine, inputs=["ab"], output=Record)
    assert closed == ["m1"]  # not closed: the caller owns it


async def test_a_json_schema_output_recursive_through_its_root_is_extracted() -> None:
    # the prompt's token estimate asked pydantic for the type's schema, and pydantic
    # cannot walk a JSON Schema's own "#" recursion: KeyError, a traceback of the CLI
    from agentflow.output.json_schema import json_schema_output

    tree = json_schema_output({
        "type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"},
                       "kids": {"type": "array", "items": {"$ref": "#"}}}})
    model = FunctionModel(lambda request: Reply(tool_calls=[Call(
        "generate_response", {"name": "Ada", "kids": [{"name": "Bo", "kids": []}]})]))
    [result] = [r async for r in extract_many(model, ["Ada, and her kid Bo"], tree)]
    assert result.ok, result.error
    assert result.output.model_dump() == {"name": "Ada", "kids": [{"name": "Bo", "kids": []}]}


@pytest.mark.parametrize("inputs", ["one document", b"one document"])
async def test_one_text_as_inputs_is_refused_not_read_a_character_a_document(
        inputs: object) -> None:
    calls: list[RecordedRequest] = []
    model = FunctionModel(lambda request: calls.append(request) or Reply(text="{}"))
    with pytest.raises(TypeError, match="inputs must be an iterable of documents"):
        async for _ in extract_many(model, inputs, Record):  # type: ignore[arg-type]
            pass
    assert calls == []


@pytest.mark.parametrize("order", ["input", "completed"])
async def test_inputs_sharing_an_id_are_refused_before_any_request(order: str) -> None:
    from agentflow import DuplicateInputIdError

    model, _ = make_model()
    for inputs, (rid, first, second) in [
        ([("a", "x"), ("b", "y"), ("a", "z")], ("a", 0, 2)),
        ((ExtractInput("k", "x"), ("k", "y")), ("k", 0, 1)),  # a tuple, mixed forms
        ([ExtractInput("1", "x"), ("2", "y"), ("2", "z"), ("1", "w")], ("2", 1, 2)),  # first repeat
    ]:
        with pytest.raises(DuplicateInputIdError) as caught:
            await collect(agent_or_model=model, inputs=inputs, output=Record, order=order)
        error = caught.value
        assert (error.id, error.first, error.second) == (rid, first, second)
        assert f"inputs {first} and {second} share the id {rid!r}" in str(error)
        assert isinstance(error, ValueError)
    assert model.requests == []  # refused before any request

    # an id generated from a position (a plain str input) equal to one given: refused, said so
    with pytest.raises(DuplicateInputIdError, match=r"inputs 0 \(generated from its position"):
        await collect(agent_or_model=model, inputs=["x", ("0", "y")], output=Record, order=order)
    assert model.requests == []


async def test_plain_str_inputs_never_repeat_their_generated_ids() -> None:
    model, _ = make_model()
    results = await collect(agent_or_model=model, inputs=["same"] * 5, output=Record,
                            order="completed")
    assert sorted(r.id for r in results) == ["0", "1", "2", "3", "4"] and all(r.ok for r in results)


async def test_a_lazy_iterable_is_checked_as_it_is_read_and_the_repeat_never_sent() -> None:
    from agentflow import DuplicateInputIdError

    model, _ = make_model()
    read: list[int] = []

    async def inputs():  # type: ignore[no-untyped-def]
        for n, rid in enumerate(["a", "b", "c", "b", "d"]):
            read.append(n)
            yield (rid, f"text{n}")

    got: list[ExtractResult] = []
    with pytest.raises(DuplicateInputIdError, match=r"inputs 1 and 3 share the id 'b'"):
        async for result in extract_many(model, inputs(), Record, concurrency=2):
            got.append(result)
    assert read == [0, 1, 2, 3]  # nothing read past the repeat
    assert [r.id for r in got] == ["a", "b", "c"]  # the inputs already started finished
    sent = [next(m.text for m in r.messages if m.role == "user") for r in model.requests]
    assert sorted(sent) == ["text0", "text1", "text2"]  # the repeat was never sent


async def test_a_run_with_no_inputs_counts_no_tokens_so_starts_no_model() -> None:
    """The prompt overhead is counted at the first input: a resumed run with
    nothing left to do never starts an embedded model to count it."""
    model, _ = make_model()
    counted: list[str] = []

    async def count_tokens(text: str) -> int:
        counted.append(text)
        return len(text.split())

    model.count_tokens = count_tokens  # type: ignore[attr-defined]
    assert await collect(agent_or_model=model, inputs=[], output=Record) == []
    assert counted == [] and model.requests == []
    results = await collect(agent_or_model=model, inputs=["a", "bb"], output=Record)
    assert [r.output for r in results] == [Record(word="a", length=1), Record(word="bb", length=2)]
    assert len(counted) == 1  # once per run, at its first input


async def test_the_input_generator_is_closed_in_its_task_when_the_run_stops_early() -> None:
    """Breaking out closes the caller's async generator before ``aclose``
    returns (its ``finally`` runs in the task that iterated it, not later in
    the garbage collector), also while it is suspended in a task group."""
    model, _ = make_model()
    closed: list[str] = []

    async def words() -> Any:
        try:
            async with anyio.create_task_group():
                for i in range(1000):
                    yield f"w{i}"
        finally:
            closed.append("closed")

    stream = extract_many(model, words(), Record, concurrency=2)
    async for _ in stream:
        break
    await stream.aclose()
    assert closed == ["closed"]
