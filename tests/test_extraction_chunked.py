"""Long documents end to end: chunked extraction through extract_many, on the
OpenAI fake server (the real adapter, HTTP, native json_schema output) and on
FunctionModel for the record-level rules."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import orjson
import pytest
from aiohttp import web
from pydantic import BaseModel, Field

from agentflow import ModelProfile
from agentflow.batch import ExtractResult, extract_many
from agentflow.errors import (
    ChunkFailedError,
    EmptyDocumentError,
    MergeConflictError,
    MergeError,
    UsageError,
)
from agentflow.extraction.budget import Chunking, estimate_tokens
from agentflow.extraction.chunked import ChunkProgress, partial_model
from agentflow.extraction.merge import Merge
from agentflow.grounding import Grounded
from agentflow.providers.local import LocalModel, bundled_available
from agentflow.providers.openai import OpenAIChatModel
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

GR = "generate_response"
ENTRY = re.compile(r"^## (\S+) \((\w+)\)\n((?:- .*\n)*)", re.MULTILINE)


class Entry(BaseModel):
    version: str
    kind: str
    changes: list[str]


class History(BaseModel):
    """A release history."""

    project: Annotated[str, Merge.must_agree()]
    entries: Annotated[list[Entry], Merge.by_key("version")]


def history(n: int, project: str = "demo") -> str:
    parts = [f"Project: {project}\n\n"]
    for i in range(n, 0, -1):
        parts.append(f"## {i}.0 ({'major' if i % 5 == 0 else 'minor'})\n"
                     f"- change one of {i}\n- change two of {i}\n\n")
    return "".join(parts)


def parse(text: str) -> dict[str, Any]:
    """The 'model': what a perfect extractor returns for this text."""
    project = re.search(r"^Project: (\w+)$", text, re.MULTILINE)
    entries = [{"version": m.group(1), "kind": m.group(2),
                "changes": [c[2:] for c in m.group(3).splitlines()]}
               for m in ENTRY.finditer(text)]
    return {"project": project.group(1) if project else None, "entries": entries}


def small_window(window: int = 700) -> ModelProfile:
    """A profile with a ``window``-token context (700: a few hundred tokens of text
    once the schema and the 100-token reply are reserved)."""
    return ModelProfile(context_window=window, max_output_tokens=100)


class CountingFake(OpenAIFake):
    """The OpenAI fake, counting requests in flight at once."""

    def __init__(self) -> None:
        super().__init__(api_key="k")
        self.in_flight = self.peak = 0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            return await super()._handle(request)
        finally:
            self.in_flight -= 1


def user_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


async def run(model: Any, docs: list[Any], output: Any = History, **kw: Any) -> list[
        ExtractResult]:
    return [r async for r in extract_many(model, docs, output, **kw)]


async def test_a_long_document_is_chunked_extracted_concurrently_and_merged() -> None:
    text = history(60)
    async with CountingFake() as fake:
        fake.default = lambda body: FakeReply(text=orjson.dumps(parse(user_text(body))).decode(),
                                              latency=0.02)
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                profile=ModelProfile(native_output="json_schema",
                                                     schema_dialect="openai_strict")
                                .with_(**vars_of(small_window())))
        progress: list[ChunkProgress] = []
        (result,) = await run(model, [("h", text)], concurrency=4, on_progress=progress.append)
        await model.aclose()
    assert result.ok, result.error
    assert [e.version for e in result.output.entries] == [f"{i}.0" for i in range(60, 0, -1)]
    assert all(e.changes == [f"change one of {e.version[:-2]}", f"change two of {e.version[:-2]}"]
               for e in result.output.entries)
    assert result.output.project == "demo"
    assert result.chunks is not None and result.chunks.total >= 2 and result.chunks.failed == 0
    assert len(fake.requests) == result.chunks.total == result.attempts
    assert 1 < fake.peak <= 4  # chunks in flight together, inside the batch's bound
    assert progress[-1] == ChunkProgress("h", result.chunks.total, result.chunks.total)
    assert result.truncated is None
    sent = [user_text(b) for b in fake.bodies]
    assert all(len(s) < 1500 for s in sent)
    assert all(s in text for s in sent)  # each chunk is a verbatim slice
    schema = fake.bodies[0]["response_format"]["json_schema"]["schema"]
    assert "null" in str(schema["properties"]["project"])  # the partial form: may be null


def vars_of(profile: ModelProfile) -> dict[str, Any]:
    return {"context_window": profile.context_window,
            "max_output_tokens": profile.max_output_tokens}


def function_model(window: int = 700, fail_on: str | None = None,
                   answer: Any = None) -> tuple[FunctionModel, list[str]]:
    seen: list[str] = []

    async def reply(request: RecordedRequest) -> Reply:
        text = next(m.text for m in request.messages if m.role == "user")
        seen.append(text)
        if fail_on is not None and fail_on in text:
            return Reply(text="no")  # never calls the output tool: this chunk fails
        return Reply(tool_calls=[Call(GR, answer(text) if answer else parse(text))])

    return FunctionModel(reply, profile=small_window(window)), seen


async def test_a_document_that_fits_is_one_ordinary_call() -> None:
    model, seen = function_model(window=100_000)
    (result,) = await run(model, [history(5)])
    assert result.ok and result.chunks is None and len(seen) == 1
    assert len(result.output.entries) == 5


async def test_a_failed_chunk_fails_the_record_unless_partial_results_are_allowed() -> None:
    text = history(40)
    model, _ = function_model(fail_on="## 20.0 ")
    (failed,) = await run(model, [text])
    assert isinstance(failed.error, ChunkFailedError) and failed.output is None
    assert failed.chunks is not None and failed.chunks.failed >= 1
    assert text[failed.error.start:failed.error.end].count("## 20.0 ") == 1
    model, _ = function_model(fail_on="## 20.0 ")
    (partial,) = await run(model, [text], allow_partial=True)
    assert partial.ok and partial.chunks is not None and partial.chunks.missing
    versions = {e.version for e in partial.output.entries}
    assert "20.0" not in versions and {"40.0", "1.0"} <= versions
    for start, end in partial.chunks.missing:
        assert "## 20.0 " in text[start:end] or text[start:end] in text


async def test_a_required_scalar_every_chunk_left_null_is_a_typed_error() -> None:
    model, _ = function_model()
    text = history(40).replace("Project: demo\n", "")
    (result,) = await run(model, [text])
    assert isinstance(result.error, MergeError) and result.error.field == "project"
    assert "project" in str(result.error)


async def test_must_agree_disagreement_fails_and_is_reported() -> None:
    text = history(20, "alpha") + history(20, "omega").replace("## ", "## x")
    model, _ = function_model()
    (result,) = await run(model, [text])
    assert isinstance(result.error, MergeConflictError) and result.error.field == "project"
    assert {"alpha", "omega"} <= {v for c in result.conflicts for v, _, _ in c.values}
    assert "alpha" in str(result.error) and "omega" in str(result.error)


async def test_empty_document_is_a_typed_error_without_a_model_call() -> None:
    model, seen = function_model()
    results = await run(model, ["", "  \n\t "])
    assert all(isinstance(r.error, EmptyDocumentError) for r in results)
    assert seen == [] and all(r.attempts == 0 for r in results)


async def test_a_user_cap_cuts_at_a_boundary_and_says_so() -> None:
    model, seen = function_model(window=100_000)
    text = history(30)
    (result,) = await run(model, [text], max_chars=300)
    assert result.ok and result.truncated is not None
    assert result.truncated.total_chars == len(text) and result.truncated.kept_chars <= 300
    assert seen == [text[: result.truncated.kept_chars]]
    assert seen[0].endswith("\n")


async def test_chunking_none_sends_the_whole_document() -> None:
    model, seen = function_model()
    (result,) = await run(model, [history(40)], chunking=None)
    assert result.ok and result.chunks is None and len(seen) == 1


async def test_explicit_chunk_size_and_extra_passes() -> None:
    text = history(30)
    model, seen = function_model(window=100_000)
    (one,) = await run(model, [text], chunking=Chunking(max_chars=400, overlap=0))
    assert one.chunks is not None and one.chunks.passes == 1
    model2, seen2 = function_model(window=100_000)
    (two,) = await run(model2, [text], chunking=Chunking(max_chars=400, overlap=0), passes=2)
    assert two.chunks is not None and two.chunks.passes == 2
    assert two.chunks.total > one.chunks.total
    assert set(seen2) > set(seen)  # the second pass cut the document elsewhere
    assert [e.version for e in two.output.entries] == [f"{i}.0" for i in range(30, 0, -1)]


async def test_a_non_model_output_type_that_needs_chunks_is_a_typed_error() -> None:
    model, _ = function_model()
    (result,) = await run(model, [history(40)], output=list[str])
    assert isinstance(result.error, MergeError) and "pydantic model" in str(result.error)


async def test_bad_arguments() -> None:
    model, _ = function_model()
    with pytest.raises(ValueError, match="passes"):
        await run(model, ["x"], passes=0)
    with pytest.raises(ValueError, match="max_chars"):
        await run(model, ["x"], max_chars=0)
    with pytest.raises(ValueError, match="overlap"):
        Chunking(overlap=-1)


def test_partial_model_makes_every_field_optional() -> None:
    part = partial_model(History)
    assert part().model_dump() == {"project": None, "entries": []}
    assert part.model_fields["entries"].annotation == list[Entry]


HAVE_LOCAL = bundled_available()


class Animal(BaseModel):
    animal: Annotated[Literal["cat", "dog", "owl", "fox"], Merge.majority()]


@pytest.mark.skipif(not HAVE_LOCAL, reason="the 'local' extra is not installed")
async def test_a_multi_chunk_document_on_the_embedded_model() -> None:
    model = LocalModel(max_tokens=256)
    try:
        assert model.profile.context_window == 4096
        tokens = await model.count_tokens("The quick brown fox jumps over the lazy dog.")
        assert 5 <= tokens <= estimate_tokens("The quick brown fox jumps over the lazy dog.")
        text = "\n\n".join(f"Paragraph {i}: the {w} sat on the mat." for i, w in
                           enumerate(["cat", "dog", "owl", "fox"]))
        (result,) = await run(model, [text], output=Animal, chunking=Chunking(max_chars=80),
                              instructions="Name the animal in the text.")
    finally:
        await model.aclose()
    assert result.chunks is not None and result.chunks.total >= 2
    assert result.ok, result.error  # the grammar keeps every chunk's output valid
    assert result.attempts >= result.chunks.total and result.usage.input_tokens > 0
    assert result.output.animal in ("cat", "dog", "owl", "fox")
    assert all(c.path == "animal" and c.rule == "majority" for c in result.conflicts)


class GroundedEntry(BaseModel):
    version: Annotated[str, Grounded()]
    kind: str
    changes: list[str]


class GroundedHistory(BaseModel):
    project: Annotated[str, Merge.must_agree(), Grounded()]
    entries: Annotated[list[GroundedEntry], Merge.by_key("version")]


async def test_grounded_spans_of_chunks_are_shifted_to_document_offsets() -> None:
    text = history(40)
    model, _ = function_model()
    (result,) = await run(model, [text], output=GroundedHistory)
    assert result.ok and result.chunks is not None and result.chunks.total >= 3
    versions = [e.version for e in result.output.entries]
    assert versions == [f"{i}.0" for i in range(40, 0, -1)]
    for i, version in enumerate(versions):
        ((start, end),) = result.spans[f"entries[{i}].version"]
        assert text[start:end] == version
        assert text[start - 3:start] == "## "  # the header's place, not an earlier mention
    ((start, end),) = result.spans["project"]
    assert text[start:end] == "demo"


async def test_a_line_longer_than_a_chunk_is_hard_cut_and_noted() -> None:
    text = history(5) + "x" * 3000 + "\n" + history(5).replace("## ", "## 1")
    model, _ = function_model()
    (result,) = await run(model, [text], allow_partial=True)
    assert result.chunks is not None and result.chunks.hard_cuts
    for cut in result.chunks.hard_cuts:
        assert text[cut - 1] == "x" and text[cut] == "x"  # inside the run, nowhere natural
    assert result.ok and len(result.output.entries) == 10


class DenseCounter(FunctionModel):
    """FunctionModel with a tokenizer: 1 token per 4 ASCII characters, 1 per digit run
    character past the sample (dense text the ratio does not foresee)."""

    async def count_tokens(self, text: str) -> int:
        digits = sum(ch.isdigit() for ch in text)
        return (len(text) - digits) // 4 + digits


async def test_chunks_denser_than_the_sample_are_counted_and_split_again() -> None:
    prose = "".join(f"Line {w} of plain prose words here.\n" for w in "abcdefghij" * 60)
    dense = "".join(f"{n:012d} {n * 7:012d}\n" for n in range(2000))
    text = prose[:20_000] + "\n" + dense
    seen: list[str] = []

    async def reply(request: RecordedRequest) -> Reply:
        seen.append(next(m.text for m in request.messages if m.role == "user"))
        return Reply(tool_calls=[Call(GR, {"project": "p", "entries": []})])

    model = DenseCounter(reply, profile=ModelProfile(context_window=2000,
                                                     max_output_tokens=200))
    # the scripted project name is in no chunk: not what this test is about
    (result,) = await run(model, [text], chunking=Chunking(overlap=0), ground=False)
    budget_tokens = 2000 - 200 - 64  # less the prompt overhead: an upper bound
    assert result.ok and result.chunks is not None and len(seen) == result.chunks.total
    assert all([await model.count_tokens(s) <= budget_tokens for s in seen])
    assert "".join(seen) == text  # no overlap: the chunks tile the document
    sizes = [len(s) for s in seen]
    assert max(sizes[-5:]) < min(sizes[:3])  # the dense part got smaller chunks


def entries_bound(request: RecordedRequest) -> Any:
    """The ``maxItems`` of ``entries`` in the request's output tool schema."""
    (tool,) = [t for t in request.tools if t.name == GR]
    return tool.parameters["properties"]["entries"].get("maxItems")


async def test_map_over_items_reads_a_weak_model_one_item_per_chunk() -> None:
    text = history(12)  # fits the window: read item by item all the same
    bounds: list[Any] = []

    def reply(request: RecordedRequest) -> Reply:
        bounds.append(entries_bound(request))
        chunk = next(m.text for m in request.messages if m.role == "user")
        return Reply(tool_calls=[Call(GR, parse(chunk))])

    weak = FunctionModel(reply, profile=ModelProfile(context_window=100_000,
                                                     max_output_tokens=1000,
                                                     items_per_chunk=1))
    (result,) = await run(weak, [("h", text)], chunking=Chunking(items="entries"))
    assert result.ok, result.error
    assert [e.version for e in result.output.entries] == [f"{i}.0" for i in range(12, 0, -1)]
    assert result.output.project == "demo"
    assert result.chunks is not None and result.chunks.total == 13  # the header block + 12
    assert bounds == [1] * 13  # each chunk's list holds as many items as it has blocks
    two = FunctionModel(reply, profile=weak.profile)
    bounds.clear()
    (paired,) = await run(two, [("h", text)],
                          chunking=Chunking(items="entries", items_per_chunk=2))
    assert paired.ok and len(paired.output.entries) == 12
    assert paired.chunks is not None and paired.chunks.total == 7 and set(bounds) == {2, 1}


async def test_map_over_items_needs_a_list_field_of_the_output() -> None:
    model, seen = function_model()
    for items, output in (("project", History), ("changes", History), ("entries", str)):
        with pytest.raises(UsageError, match="items"):
            await run(model, [history(3)], output=output, chunking=Chunking(items=items))
    assert seen == []  # refused before any call


def test_partial_model_bounds_the_mapped_list() -> None:
    bounded = partial_model(History, "entries", 2)
    assert bounded.model_json_schema()["properties"]["entries"]["maxItems"] == 2
    assert "maxItems" not in partial_model(History).model_json_schema()["properties"]["entries"]
    assert partial_model(History, "entries", 2) is bounded  # cached per bound

    class Short(BaseModel):
        entries: Annotated[list[Entry], Merge.by_key("version")] = Field(max_length=1)

    assert partial_model(Short, "entries", 3).model_json_schema()["properties"]["entries"][
        "maxItems"] == 1  # the schema's own lower bound stays


LOCAL_CHANGELOG = "".join(
    f"demo ({v}) unstable; urgency=medium\n\n  * Fix bug number {n}.\n\n"
    f" -- Dee Veloper <dee@example.org>  Mon, 0{n} Jan 2024 12:00:00 +0000\n\n"
    for n, v in ((3, "3.1-1"), (2, "2.0-2"), (1, "1.0-1")))


@pytest.mark.skipif(not HAVE_LOCAL, reason="the 'local' extra is not installed")
async def test_map_over_items_on_the_embedded_model() -> None:
    class Item(BaseModel):
        version: Annotated[str, Grounded()]
        date: Annotated[str, Grounded()]

    class Log(BaseModel):
        entries: Annotated[list[Item], Merge.by_key("version")]

    model = LocalModel(max_tokens=200)
    try:
        (result,) = await run(model, [LOCAL_CHANGELOG], output=Log,
                              chunking=Chunking(items="entries"),
                              instructions="List the entries of the changelog as JSON.")
    finally:
        await model.aclose()
    # one entry per chunk (the profile's items_per_chunk), each list bounded to one item by
    # the grammar: no chunk can loop on an entry until its reply is cut
    assert result.chunks is not None and result.chunks.total == 3
    assert result.ok, result.error
    assert 1 <= len(result.output.entries) <= 3
    for i, entry in enumerate(result.output.entries):
        (start, end), = result.spans[f"entries[{i}].version"]
        assert LOCAL_CHANGELOG[start:end] == entry.version
