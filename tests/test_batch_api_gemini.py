"""Gemini batch mode (providers/_gemini_batch.py) driven directly against the
fake (tests/fakes/gemini_batches.py), with google-genai as a witness of the
wire shapes. Input files: tests/test_batch_api_gemini_files.py; extract_many
in batch mode: tests/test_batch_api_gemini_extract.py."""

from __future__ import annotations

from collections import deque

import pytest

from agentflow.batch_api.protocol import (
    BatchCapable,
    BatchFinder,
    BatchRequest,
    BatchState,
)
from agentflow.errors import BadRequestError, RateLimitedError, ServerError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat
from agentflow.providers import HttpSettings
from agentflow.providers._gemini_batch import GeminiBatchAPI, batch_state
from agentflow.providers._gemini_errors import MISSING_SIGNATURE
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.base import FakeCall, FakeReply, collect
from tests.fakes.gemini import MISSING_SIGNATURE as FAKE_MISSING_SIGNATURE
from tests.fakes.gemini import GeminiFake, gemini_error
from tests.gemini_batch_support import (
    FORCED,
    MODEL,
    TOOL,
    batch_requests,
    finish,
    gemini_model,
    results_by_id,
    sdk_client,
)


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
        model = gemini_model(fake, model_name, stream=False)
        live_chunks = [c async for c in model.stream(
            [Msg.user("Extract the name from document 0.")], [TOOL], FORCED)]
        live_body = fake.bodies[-1]
        api = model.batch_api()
        requests = batch_requests(model, 3)
        assert requests[0].body == live_body
        assert requests[0].path == f"/models/{model_name}:generateContent"
        batch_id = await api.submit(requests)
        assert batch_id.startswith("batches/")
        assert fake.batches.submitted == {"in-0": 1, "in-1": 1, "in-2": 1}
        assert await finish(api, batch_id) == [BatchState.QUEUED, BatchState.IN_PROGRESS,
                                                BatchState.COMPLETED]
        final = await api.status(batch_id)
        assert (final.total, final.succeeded, final.failed) == (3, 3, 0)
        assert [r.custom_id async for r in api.results(batch_id)] == ["in-2", "in-1", "in-0"]
        results = await results_by_id(api, batch_id)
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
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 1))
        assert (await finish(api, batch_id))[-1] is BatchState.COMPLETED
        assert (await results_by_id(api, batch_id))["in-0"].reply is not None
        await api.aclose()
        await model.aclose()


async def test_per_request_failures_are_typed_and_say_whether_to_resubmit() -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="ok")
        fake.batches.script.outcomes = {"in-1": "errored"}
        model = gemini_model(fake)
        api = model.batch_api()
        requests = batch_requests(model, 2)
        schema = ResponseFormat(type="json_schema", name="r", schema={
            "type": "object", "properties": {"a": {"type": "string"}}})
        requests.append(model.batch_request(  # JSON mime type with tools before Gemini 3
            "in-2", [Msg.user("hi")], [TOOL], GenerateOptions(response_format=schema)))
        batch_id = await api.submit(requests)
        await finish(api, batch_id)
        status = await api.status(batch_id)
        assert (status.state, status.total, status.succeeded, status.failed) == (
            BatchState.COMPLETED, 3, 1, 2)
        results = await results_by_id(api, batch_id)
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
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 2))
        assert (await finish(api, batch_id))[-1] is BatchState.FAILED
        status = await api.status(batch_id)
        assert status.message == "the input could not be read"
        assert await results_by_id(api, batch_id) == {}
        await api.aclose()
        await model.aclose()


async def test_expiry_keeps_what_ran() -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="done")
        fake.batches.script.expire = True
        fake.batches.script.finished = 1
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 3))
        assert (await finish(api, batch_id))[-1] is BatchState.EXPIRED
        results = await results_by_id(api, batch_id)
        assert list(results) == ["in-0"] and results["in-0"].reply is not None
        await api.aclose()
        await model.aclose()


async def test_cancel_ends_cancelled_and_is_idempotent() -> None:
    async with GeminiFake() as fake:
        fake.default = FakeReply(text="done")
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 2))
        await api.cancel(batch_id)
        assert (await finish(api, batch_id))[-1] is BatchState.CANCELLED
        await api.cancel(batch_id)  # terminal: the API says FAILED_PRECONDITION; no error
        assert await results_by_id(api, batch_id) == {}
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
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 2))
        await finish(api, batch_id)
        results = [r async for r in api.results(batch_id)]
        assert [r.custom_id for r in results] == [
            "in-0", "not-a-request-of-this-batch", "", "in-1"]
        stray = results[2].error
        assert stray is not None and "malformed batch result line" in stray.message
        await api.aclose()
        await model.aclose()


async def test_429_and_503_while_polling_are_retried_with_backoff() -> None:
    async with GeminiFake() as fake:
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 1))
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
        batch_id = await api.submit(batch_requests(model, 1))
        fake.batches.script.poll_errors = deque([GeminiFake.rate_limited(7)])
        with pytest.raises(RateLimitedError) as caught:
            await api.status(batch_id)
        assert caught.value.retry_after == 7
        await api.aclose()
        await model.aclose()


async def test_submit_is_not_retried_after_a_failure_that_may_have_created_the_batch() -> None:
    async with GeminiFake() as fake:
        model = gemini_model(fake)
        api = model.batch_api()
        fake.batches.script.create_errors = deque([gemini_error(500, "Internal error")])
        with pytest.raises(ServerError):
            await api.submit(batch_requests(model, 2))
        assert fake.batches.creations == 1 and fake.batches.submitted == {"in-0": 1, "in-1": 1}
        fake.batches.script.create_errors = deque([GeminiFake.rate_limited(0)])
        await api.submit(batch_requests(model, 2))
        assert fake.batches.creations == 3 and fake.batches.submitted == {"in-0": 2, "in-1": 2}
        await api.aclose()
        await model.aclose()


async def test_a_batch_the_api_would_refuse_is_refused_before_sending() -> None:
    async with GeminiFake() as fake:
        model, other = gemini_model(fake), gemini_model(fake, "gemini-2.0-flash")
        api = model.batch_api()
        one = batch_requests(model, 1)[0]
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

async def test_submitted_requests_conform_to_the_sdk_types() -> None:
    from tests.sdk.kits import _gemini_types
    from tests.sdk.strict import check

    async with GeminiFake() as fake:
        model = gemini_model(fake, include_thoughts=True)
        api = model.batch_api()
        requests = [*batch_requests(model, 1), model.batch_request(
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
        sdk = sdk_client(fake)
        job = await sdk.aio.batches.create(model=MODEL, src=[
            types.InlinedRequest(contents="Name?", metadata={"key": "by-sdk"})])
        assert job.name in fake.batches.jobs and fake.batches.submitted["by-sdk"] == 1
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 2))
        await finish(api, batch_id)
        read = await sdk.aio.batches.get(name=batch_id)
        assert read.done and read.state == types.JobState.JOB_STATE_SUCCEEDED
        ours = await results_by_id(api, batch_id)
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
        model = gemini_model(fake)
        api = model.batch_api()
        assert isinstance(api, BatchFinder)
        ids = [await api.submit(batch_requests(model, 1), tag=f"af-tag-{i}") for i in range(5)]
        assert await api.find("af-tag-0") == ids[0]  # the oldest: on the last page
        assert await api.find("af-tag-3") == ids[3]
        assert await api.find("af-never") is None
        await api.aclose()
        await model.aclose()


async def test_a_batch_item_missing_a_thought_signature_is_typed_and_names_the_fix() -> None:
    """A batch request refused for a function call without its thought
    signature (the 400, or a reply ended ``MISSING_THOUGHT_SIGNATURE``,
    ai.google.dev/gemini-api/docs/thought-signatures): the item error had
    only ``INVALID_ARGUMENT`` and Google's words; it now has the code
    ``MISSING_SIGNATURE`` and says what to keep, as the live error does, and
    neither is resubmitted (it fails the same way)."""
    async with GeminiFake() as fake:
        fake.add(gemini_error(400, FAKE_MISSING_SIGNATURE),
                 FakeReply(text="", extra={"finish": MISSING_SIGNATURE}))
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 2))
        await finish(api, batch_id)
        results = await results_by_id(api, batch_id)
        refused = results["in-0"].error
        assert refused is not None and refused.status == 400 and not refused.retryable
        assert refused.code == MISSING_SIGNATURE and "thoughtSignature" in refused.message
        ended = results["in-1"].reply
        assert ended is not None
        with pytest.raises(BadRequestError) as info:
            list(model.parse_batch_reply(ended, [TOOL]))
        assert info.value.code == MISSING_SIGNATURE and not info.value.retryable
        await api.aclose()
        await model.aclose()
