"""Gemini batch mode (providers/_gemini_batch.py) driven directly against the
fake (tests/fakes/gemini_batches.py), with google-genai as a witness of the
wire shapes."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.batch_api.protocol import (
    BatchCapable,
    BatchFinder,
    BatchRequest,
    BatchResult,
    BatchState,
)
from agentflow.batch_api.runner import BatchSettings
from agentflow.errors import BadRequestError, RateLimitedError, ServerError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat, ToolChoice, ToolSpec
from agentflow.providers._gemini_batch import GeminiBatchAPI, batch_state
from agentflow.providers._http import HttpSettings
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.base import FakeCall, FakeReply, collect
from tests.fakes.gemini import GeminiFake, gemini_error

FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.02, rate_governor=False)
TOOL = ToolSpec("record", "Record the answer.", {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
FORCED = GenerateOptions(tool_choice=ToolChoice("specific", "record"))
MODEL = "gemini-2.5-flash"


def _model(fake: GeminiFake, name: str = MODEL, **kw: Any) -> GeminiChatModel:
    return GeminiChatModel(name, api_key="AIza-test-key", base_url=fake.url, settings=FAST, **kw)


def _requests(model: GeminiChatModel, n: int) -> list[BatchRequest]:
    return [model.batch_request(f"in-{i}", [Msg.user(f"Extract the name from document {i}.")],
                                [TOOL], FORCED) for i in range(n)]


async def _finish(api: GeminiBatchAPI, batch_id: str, limit: int = 20) -> list[BatchState]:
    seen = []
    for _ in range(limit):
        status = await api.status(batch_id)
        seen.append(status.state)
        if status.state.terminal:
            return seen
    raise AssertionError(f"batch never ended: {seen}")


async def _results(api: GeminiBatchAPI, batch_id: str) -> dict[str, BatchResult]:
    return {r.custom_id: r async for r in api.results(batch_id)}


def test_the_model_is_batch_capable() -> None:
    model = GeminiChatModel(MODEL, api_key="k")
    assert isinstance(model, BatchCapable)
    api = model.batch_api()
    assert api.limits.max_bytes == 2 * 1024 ** 3  # an input file; inline up to 20 MB
    assert isinstance(api, GeminiBatchAPI) and api.inline_max_bytes == 20 * 1024 * 1024


@pytest.mark.parametrize(("name", "state"), [
    ("BATCH_STATE_PENDING", BatchState.QUEUED), ("JOB_STATE_PENDING", BatchState.QUEUED),
    ("JOB_STATE_QUEUED", BatchState.QUEUED), ("BATCH_STATE_RUNNING", BatchState.IN_PROGRESS),
    ("JOB_STATE_RUNNING", BatchState.IN_PROGRESS), ("JOB_STATE_CANCELLING", BatchState.CANCELLING),
    ("BATCH_STATE_SUCCEEDED", BatchState.COMPLETED), ("JOB_STATE_SUCCEEDED", BatchState.COMPLETED),
    ("JOB_STATE_PARTIALLY_SUCCEEDED", BatchState.COMPLETED),
    ("BATCH_STATE_FAILED", BatchState.FAILED), ("JOB_STATE_FAILED", BatchState.FAILED),
    ("BATCH_STATE_CANCELLED", BatchState.CANCELLED), ("JOB_STATE_CANCELLED", BatchState.CANCELLED),
    ("BATCH_STATE_EXPIRED", BatchState.EXPIRED), ("JOB_STATE_EXPIRED", BatchState.EXPIRED),
])
def test_both_state_spellings_map_to_batch_state(name: str, state: BatchState) -> None:
    assert batch_state(name) is state


def test_an_unknown_state_is_an_error() -> None:
    with pytest.raises(ValueError, match="BATCH_STATE_EXPLODED"):
        batch_state("BATCH_STATE_EXPLODED")


@pytest.mark.parametrize("responses_file", [False, True], ids=["inlined", "responses-file"])
@pytest.mark.parametrize("model_name", [MODEL, "gemini-3-pro-preview"])
async def test_submit_poll_results_parse_like_the_live_reply(
        responses_file: bool, model_name: str) -> None:
    reply = FakeReply(tool_calls=[FakeCall("record", {"name": "Ada"}, id="fc-fixed")],
                      usage=(40, 9))
    async with GeminiFake() as fake:
        fake.default = reply
        fake.batch_responses_file = responses_file
        model = _model(fake, model_name, stream=False)
        live_chunks = [c async for c in model.stream(
            [Msg.user("Extract the name from document 0.")], [TOOL], FORCED)]
        live_body = fake.bodies[-1]
        api = model.batch_api()
        requests = _requests(model, 3)
        assert requests[0].body == live_body
        assert requests[0].path == f"/models/{model_name}:generateContent"
        batch_id = await api.submit(requests)
        assert batch_id.startswith("batches/")
        assert fake.batches.submitted == {"in-0": 1, "in-1": 1, "in-2": 1}
        assert await _finish(api, batch_id) == [BatchState.QUEUED, BatchState.IN_PROGRESS,
                                                BatchState.COMPLETED]
        final = await api.status(batch_id)
        assert (final.total, final.succeeded, final.failed) == (3, 3, 0)
        assert [r.custom_id async for r in api.results(batch_id)] == ["in-2", "in-1", "in-0"]
        results = await _results(api, batch_id)
        chunks = list(model.parse_batch_reply(results["in-0"].reply))
        if model_name.startswith("gemini-3"):  # each reply has its own thought signature
            assert [type(c) for c in chunks] == [type(c) for c in live_chunks]
            assert chunks[1].name == live_chunks[1].name  # type: ignore[union-attr]
        else:
            assert chunks == live_chunks
        await api.aclose()
        await model.aclose()


async def test_sdk_job_state_names_are_read_too() -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="done")
        fake.batch_state_prefix = "JOB_STATE_"
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 1))
        assert (await _finish(api, batch_id))[-1] is BatchState.COMPLETED
        assert (await _results(api, batch_id))["in-0"].reply is not None
        await api.aclose()
        await model.aclose()


async def test_per_request_failures_are_typed_and_say_whether_to_resubmit() -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="ok")
        fake.batches.script.outcomes = {"in-1": "errored"}
        model = _model(fake)
        api = model.batch_api()
        requests = _requests(model, 2)
        schema = ResponseFormat(type="json_schema", name="r", schema={
            "type": "object", "properties": {"a": {"type": "string"}}})
        requests.append(model.batch_request(  # JSON mime type with tools before Gemini 3
            "in-2", [Msg.user("hi")], [TOOL], GenerateOptions(response_format=schema)))
        batch_id = await api.submit(requests)
        await _finish(api, batch_id)
        status = await api.status(batch_id)
        assert (status.state, status.total, status.succeeded, status.failed) == (
            BatchState.COMPLETED, 3, 1, 2)
        results = await _results(api, batch_id)
        assert results["in-0"].reply is not None
        server = results["in-1"].error
        assert server is not None and server.status == 500 and server.retryable
        refused = results["in-2"].error
        assert refused is not None and refused.status == 400 and not refused.retryable
        assert "response mime type" in refused.message
        await api.aclose()
        await model.aclose()


async def test_a_failed_batch_says_why_and_has_no_results() -> None:
    async with GeminiFake() as fake:
        fake.batches.script.fail = "the input could not be read"
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        assert (await _finish(api, batch_id))[-1] is BatchState.FAILED
        status = await api.status(batch_id)
        assert status.message == "the input could not be read"
        assert await _results(api, batch_id) == {}
        await api.aclose()
        await model.aclose()


async def test_expiry_keeps_what_ran() -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="done")
        fake.batches.script.expire = True
        fake.batches.script.finished = 1
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 3))
        assert (await _finish(api, batch_id))[-1] is BatchState.EXPIRED
        results = await _results(api, batch_id)
        assert list(results) == ["in-0"] and results["in-0"].reply is not None
        await api.aclose()
        await model.aclose()


async def test_cancel_ends_cancelled_and_is_idempotent() -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="done")
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        await api.cancel(batch_id)
        assert (await _finish(api, batch_id))[-1] is BatchState.CANCELLED
        await api.cancel(batch_id)  # terminal: the API says FAILED_PRECONDITION; no error
        assert await _results(api, batch_id) == {}
        await api.aclose()
        await model.aclose()


@pytest.mark.parametrize("responses_file", [False, True], ids=["inlined", "responses-file"])
async def test_unknown_unkeyed_and_garbled_results_are_yielded_without_an_input(
        responses_file: bool) -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="done")
        fake.batches.script.garbage = True
        fake.batches.script.order = "sent"
        fake.batch_responses_file = responses_file
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        await _finish(api, batch_id)
        results = [r async for r in api.results(batch_id)]
        assert [r.custom_id for r in results] == [
            "in-0", "not-a-request-of-this-batch", "", "in-1"]
        stray = results[2].error
        assert stray is not None and "malformed batch result line" in stray.message
        await api.aclose()
        await model.aclose()


async def test_429_and_503_while_polling_are_retried_with_backoff() -> None:
    async with GeminiFake() as fake:
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 1))
        fake.batches.script.poll_errors = deque([
            GeminiFake.rate_limited(0), gemini_error(503, "The service is currently unavailable."),
            gemini_error(500, "Internal error encountered.")])
        assert (await api.status(batch_id)).state is BatchState.QUEUED
        assert fake.batches.polls == 4
        await api.aclose()
        await model.aclose()


async def test_a_poll_error_surfaces_typed_once_retries_are_spent() -> None:
    async with GeminiFake() as fake:
        model = GeminiChatModel(MODEL, api_key="k", base_url=fake.url,
                                settings=HttpSettings(max_retries=0, rate_governor=False))
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 1))
        fake.batches.script.poll_errors = deque([GeminiFake.rate_limited(7)])
        with pytest.raises(RateLimitedError) as caught:
            await api.status(batch_id)
        assert caught.value.retry_after == 7
        await api.aclose()
        await model.aclose()


async def test_submit_is_not_retried_after_a_failure_that_may_have_created_the_batch() -> None:
    async with GeminiFake() as fake:
        model = _model(fake)
        api = model.batch_api()
        fake.batches.script.create_errors = deque([gemini_error(500, "Internal error")])
        with pytest.raises(ServerError):
            await api.submit(_requests(model, 2))
        assert fake.batches.creations == 1 and fake.batches.submitted == {"in-0": 1, "in-1": 1}
        fake.batches.script.create_errors = deque([GeminiFake.rate_limited(0)])
        await api.submit(_requests(model, 2))
        assert fake.batches.creations == 3 and fake.batches.submitted == {"in-0": 2, "in-1": 2}
        await api.aclose()
        await model.aclose()


async def test_a_batch_the_api_would_refuse_is_refused_before_sending() -> None:
    async with GeminiFake() as fake:
        model, other = _model(fake), _model(fake, "gemini-2.0-flash")
        api = model.batch_api()
        one = _requests(model, 1)[0]
        cases: list[tuple[list[BatchRequest], str]] = [
            ([], "at least one request"),
            ([one, one], "appears twice"),
            ([one, other.batch_request("b", [Msg.user("x")], [], GenerateOptions())],
             "one model"),
            ([BatchRequest(" ", one.path, one.body)], "does not match"),
        ]
        for requests, needle in cases:
            with pytest.raises(BadRequestError, match=needle) as caught:
                await api.submit(requests)
            assert caught.value.status is None
        assert fake.batches.creations == 0
        with pytest.raises(BadRequestError, match="no results yet"):
            await collect(api.results(await api.submit([one])))
        await api.aclose()
        await model.aclose()
        await other.aclose()


# ----------------------------------------------------------------------------- SDK witness

def _sdk(fake: GeminiFake) -> Any:
    from google import genai
    from google.genai import types

    root, _, version = fake.url.rpartition("/")
    return genai.Client(api_key="AIza-test-key", http_options=types.HttpOptions(
        base_url=root, api_version=version))


async def test_submitted_requests_conform_to_the_sdk_types() -> None:
    from tests.sdk.kits import _gemini_types
    from tests.sdk.strict import check

    async with GeminiFake() as fake:
        model = _model(fake, include_thoughts=True)
        api = model.batch_api()
        requests = [*_requests(model, 1), model.batch_request(
            "plain", [Msg.system("Be brief."), Msg.user("hi")], [],
            GenerateOptions(temperature=0.2, max_tokens=50))]
        batch_id = await api.submit(requests)
        raw = fake.batches.jobs[batch_id].raw
        items = raw["batch"]["inputConfig"]["requests"]["requests"]
        assert [item["metadata"] for item in items] == [{"key": "in-0"}, {"key": "plain"}]
        for item in items:
            assert not check(item["request"], _gemini_types(False))
        await api.aclose()
        await model.aclose()


async def test_the_sdk_creates_and_reads_the_fakes_batches_as_we_do() -> None:
    from google.genai import types

    async with GeminiFake() as fake:
        fake.default = FakeReply(text="Ada")
        fake.batches.script.outcomes = {"in-1": "errored"}
        sdk = _sdk(fake)
        job = await sdk.aio.batches.create(model=MODEL, src=[
            types.InlinedRequest(contents="Name?", metadata={"key": "by-sdk"})])
        assert job.name in fake.batches.jobs and fake.batches.submitted["by-sdk"] == 1
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        await _finish(api, batch_id)
        read = await sdk.aio.batches.get(name=batch_id)
        assert read.done and read.state == types.JobState.JOB_STATE_SUCCEEDED
        ours = await _results(api, batch_id)
        assert read.dest is not None and read.dest.inlined_responses is not None
        for item in read.dest.inlined_responses:
            assert item.metadata is not None
            mine = ours[item.metadata["key"]]
            if item.error is not None:
                assert mine.error is not None and mine.error.message == item.error.message
            else:
                assert item.response is not None
                assert item.response.text == mine.reply["candidates"][0]["content"]["parts"][0][
                    "text"] == "Ada"
        await api.aclose()
        await model.aclose()


async def test_find_looks_a_tag_up_across_pages() -> None:
    async with GeminiFake() as fake:
        fake.batch_page_max = 2
        model = _model(fake)
        api = model.batch_api()
        assert isinstance(api, BatchFinder)
        ids = [await api.submit(_requests(model, 1), tag=f"af-tag-{i}") for i in range(5)]
        assert await api.find("af-tag-0") == ids[0]  # the oldest: on the last page
        assert await api.find("af-tag-3") == ids[3]
        assert await api.find("af-never") is None
        await api.aclose()
        await model.aclose()


# ----------------------------------------------------------------------------- end to end

class Person(BaseModel):
    name: str


def echo(body: dict[str, Any]) -> FakeReply:
    """The name written in the first user text ("name: X"); a first turn for
    a name starting with BAD answers prose (the engine re-asks)."""
    text = next(p["text"] for p in body["contents"][0]["parts"] if "text" in p)
    name = text.split("name: ", 1)[1].split("<", 1)[0].strip()
    if name.startswith("BAD") and len(body["contents"]) == 1:
        return FakeReply(text="I think the name is " + name)
    return FakeReply(text=orjson.dumps({"name": name}).decode(), usage=(100, 10))


def _docs(*names: str) -> list[tuple[str, str]]:
    return [(f"id{i}", f"name: {n}") for i, n in enumerate(names)]


def _settings(**kw: Any) -> BatchSettings:
    return BatchSettings(flush_after=0.05, poll_initial=0.01, poll_max=0.02, **kw)


async def _run(model: Any, inputs: Any, settings: BatchSettings | None = None
               ) -> dict[str, Any]:
    return {r.id: r async for r in extract_many(model, inputs, Person, mode="batch",
                                                 batch=settings or _settings(), chunking=None)}


def _live(fake: GeminiFake) -> int:
    return sum(1 for r in fake.requests
               if r.path.endswith((":generateContent", ":streamGenerateContent")))


async def test_extract_many_in_batch_mode_on_the_gemini_fake() -> None:
    async with GeminiFake() as fake:
        fake.default = echo
        model = _model(fake)
        results = await _run(model, _docs("Ada", "BADx", "Cy"))
        assert {k: r.output.name for k, r in results.items()} == {
            "id0": "Ada", "id1": "BADx", "id2": "Cy"}
        assert len(fake.batches.jobs) == 1 and _live(fake) == 1  # the re-ask went live
        assert results["id1"].attempts == 2
        assert sorted(fake.batches.submitted.values()) == [1, 1, 1]
        assert results["id0"].usage.input_tokens == 100
        await model.aclose()


async def test_an_expired_batch_resubmits_only_what_did_not_run() -> None:
    async with GeminiFake() as fake:
        fake.default = echo
        fake.batches.script.expire = True
        fake.batches.script.expire_batches = 1
        fake.batches.script.finished = 1
        model = _model(fake)
        results = await _run(model, _docs("Ada", "Bob", "Cy"))
        assert all(r.ok for r in results.values()), results
        assert len(fake.batches.jobs) == 2
        assert sorted(fake.batches.submitted.values()) == [1, 2, 2]
        assert max(fake.batches.executed.values()) == 1
        await model.aclose()


async def test_a_batch_created_despite_a_failed_submit_is_found_not_paid_twice() -> None:
    async with GeminiFake() as fake:
        fake.default = echo
        fake.batches.script.create_errors = deque([gemini_error(500, "Internal error")])
        model = _model(fake)
        results = await _run(model, _docs("Ada", "Bob"))
        assert {r.output.name for r in results.values()} == {"Ada", "Bob"}
        assert fake.batches.creations == 1 and sorted(fake.batches.submitted.values()) == [1, 1]
        await model.aclose()


async def test_killed_while_polling_a_rerun_polls_the_same_batch(tmp_path: Any) -> None:
    journal = str(tmp_path / "batches.json")
    async with GeminiFake() as fake:
        fake.default = echo
        fake.batches.script.polls = 10_000  # runs until the test lets it end
        model = _model(fake)
        task = asyncio.ensure_future(_run(model, _docs("Ada", "Bob"), _settings(journal=journal)))
        for _ in range(500):
            await asyncio.sleep(0.01)
            if fake.batches.polls >= 2:
                break
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert fake.batches.creations == 1
        fake.batches.script.polls = 0  # the next poll ends it
        results = await _run(model, _docs("Ada", "Bob"), _settings(journal=journal))
        assert {r.output.name for r in results.values()} == {"Ada", "Bob"}
        assert fake.batches.creations == 1 and sorted(fake.batches.submitted.values()) == [1, 1]
        assert sorted(fake.batches.executed.values()) == [1, 1]
        await model.aclose()


# ----------------------------------------------------------------------------- input files

async def test_a_batch_too_large_inline_is_uploaded_as_a_file_and_named() -> None:
    """Over the inline limit (20 MB; here a small one) the requests go as a
    JSONL input file through the Files API's resumable upload, in chunks,
    and the batch names it; results come back from the responses file."""
    async with GeminiFake() as fake:
        fake.batch_max_bytes = 4_000  # the fake refuses such a body inline, as Gemini does
        fake.default = FakeReply(tool_calls=[FakeCall("record", {"name": "Ada"})])
        model = _model(fake)
        api = GeminiBatchAPI(model._client, inline_max_bytes=4_000, chunk_bytes=1_500)
        requests = _requests(model, 20)
        assert sum(len(orjson.dumps(dict(r.body))) for r in requests) > 4_000
        batch_id = await api.submit(requests)
        job = fake.batches.jobs[batch_id]
        (file_name,) = fake.uploads
        assert job.raw["batch"]["inputConfig"] == {"fileName": file_name}
        lines = [orjson.loads(line) for line in fake.uploads[file_name].splitlines()]
        assert [line["key"] for line in lines] == [r.custom_id for r in requests]
        assert [line["request"] for line in lines] == [dict(r.body) for r in requests]
        commands = [c for c, _, _ in fake.upload_calls]
        assert commands[0] == "start" and commands[-1] == "upload, finalize"
        assert len(commands) > 3 and set(commands[1:-1]) == {"upload"}  # chunked
        offsets = [o for _, o, _ in fake.upload_calls[1:]]
        sizes = [n for _, _, n in fake.upload_calls[1:]]
        assert offsets == [sum(sizes[:i]) for i in range(len(sizes))]
        assert fake.batches.submitted == {r.custom_id: 1 for r in requests}
        await _finish(api, batch_id)
        results = await _results(api, batch_id)
        assert sorted(results) == sorted(r.custom_id for r in requests)
        for result in results.values():
            chunks = list(model.parse_batch_reply(result.reply))
            assert any(c.type == "tool_call" and c.name == "record" for c in chunks)
        await api.aclose()
        await model.aclose()


async def test_an_upload_starts_under_the_base_urls_query_as_every_request() -> None:
    """The upload start URL (``/upload/<version>/files``) keeps the base URL's
    query string, as every request's URL does (``join_url``): a gateway's
    ``?key=`` was dropped from it alone."""
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="done")
        model = GeminiChatModel(MODEL, api_key="AIza-test-key", base_url=fake.url + "?gw=on",
                                settings=FAST)
        api = GeminiBatchAPI(model._client, inline_max_bytes=1, chunk_bytes=1_500)
        batch_id = await api.submit(_requests(model, 2))
        assert fake.upload_start_queries == [{"gw": "on"}]
        await _finish(api, batch_id)
        assert len(await _results(api, batch_id)) == 2
        await api.aclose()
        await model.aclose()


async def test_a_small_batch_stays_inline() -> None:
    async with GeminiFake() as fake:
        model = _model(fake)
        api = model.batch_api()
        batch_id = await api.submit(_requests(model, 2))
        assert "requests" in fake.batches.jobs[batch_id].raw["batch"]["inputConfig"]
        assert not fake.uploads and not fake.upload_calls
        await api.aclose()
        await model.aclose()


async def test_extract_many_runs_a_batch_too_large_inline_through_an_input_file() -> None:
    from pydantic import BaseModel

    from agentflow.batch import extract_many

    class Person(BaseModel):
        name: str

    class Small(GeminiChatModel):
        def batch_api(self) -> GeminiBatchAPI:
            return GeminiBatchAPI(self._client, inline_max_bytes=2_000, chunk_bytes=1_000)

    async with GeminiFake() as fake:
        fake.batch_max_bytes = 2_000
        fake.default = FakeReply(text='{"name": "Ada"}')
        model = Small(MODEL, api_key="AIza-test-key", base_url=fake.url, settings=FAST)
        settings = BatchSettings(flush_after=0.05, poll_initial=0.01, poll_max=0.02)
        docs = [(f"d{i}", f"Document {i}: Ada wrote it. " * 10) for i in range(6)]
        results = [r async for r in extract_many(model, docs, Person, mode="batch",
                                                 batch=settings, chunking=None)]
        await model.aclose()
        assert len(results) == 6 and all(r.ok and r.output.name == "Ada" for r in results)
        assert len(fake.uploads) == 1 and len(fake.batches.jobs) == 1


async def test_an_input_file_over_the_file_limit_is_refused_before_any_upload(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentflow.batch_api.protocol import BatchLimits
    from agentflow.providers import _gemini_batch

    monkeypatch.setattr(_gemini_batch, "LIMITS", BatchLimits(100_000, 3_000))
    async with GeminiFake() as fake:
        model = _model(fake)
        api = GeminiBatchAPI(model._client, inline_max_bytes=1_000)
        with pytest.raises(BadRequestError, match="over gemini's limit of 3,000"):
            await api.submit(_requests(model, 10))
        assert not fake.upload_calls and not fake.batches.jobs
        await api.aclose()
        await model.aclose()


async def test_the_sdk_uploads_to_the_fake_and_runs_a_batch_from_the_file() -> None:
    """google-genai's own resumable upload (files.upload) and batch creation
    from a file (src="files/...") against the fake: the fake speaks the
    protocol our client speaks."""
    import io

    async with GeminiFake() as fake:
        fake.default = FakeReply(text="Ada")
        sdk = _sdk(fake)
        content = b"".join(orjson.dumps({"key": f"k{i}", "request": {"contents": [
            {"role": "user", "parts": [{"text": f"Name {i}?"}]}]}}) + b"\n" for i in range(3))
        uploaded = await sdk.aio.files.upload(file=io.BytesIO(content), config={
            "mime_type": "application/jsonl", "display_name": "by-sdk"})
        assert uploaded.name in fake.uploads and fake.uploads[uploaded.name] == content
        job = await sdk.aio.batches.create(model=MODEL, src=uploaded.name)
        assert job.name in fake.batches.jobs and fake.batches.submitted == {
            "k0": 1, "k1": 1, "k2": 1}
        model = _model(fake)
        api = model.batch_api()
        assert job.name is not None
        await _finish(api, job.name)
        read = await sdk.aio.batches.get(name=job.name)
        assert read.dest is not None and read.dest.file_name
        results = await _results(api, job.name)
        assert sorted(results) == ["k0", "k1", "k2"]
        await api.aclose()
        await model.aclose()
