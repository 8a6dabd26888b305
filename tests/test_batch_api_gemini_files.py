"""Gemini batch input files: a batch too large inline goes as a JSONL file
through the Files API's resumable upload (providers/_gemini_batch.py, the
fake's tests/fakes/gemini_batches.py), with google-genai as a witness."""

from __future__ import annotations

import orjson
import pytest

from agentflow.batch_api.runner import BatchSettings
from agentflow.errors import BadRequestError
from agentflow.providers._gemini_batch import GeminiBatchAPI
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.gemini import GeminiFake
from tests.gemini_batch_support import (
    FAST,
    MODEL,
    batch_requests,
    finish,
    gemini_model,
    results_by_id,
    sdk_client,
)


async def test_a_batch_too_large_inline_is_uploaded_as_a_file_and_named() -> None:
    """Over the inline limit (20 MB; here a small one) the requests go as a
    JSONL input file through the Files API's resumable upload, in chunks,
    and the batch names it; results come back from the responses file."""
    async with GeminiFake() as fake:
        fake.batch_max_bytes = 4_000  # the fake refuses such a body inline, as Gemini does
        fake.default = FakeReply(tool_calls=[FakeCall("record", {"name": "Ada"})])
        model = gemini_model(fake)
        api = GeminiBatchAPI(model._client, inline_max_bytes=4_000, chunk_bytes=1_500)
        requests = batch_requests(model, 20)
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
        await finish(api, batch_id)
        results = await results_by_id(api, batch_id)
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
        batch_id = await api.submit(batch_requests(model, 2))
        assert fake.upload_start_queries == [{"gw": "on"}]
        await finish(api, batch_id)
        assert len(await results_by_id(api, batch_id)) == 2
        await api.aclose()
        await model.aclose()


async def test_a_small_batch_stays_inline() -> None:
    async with GeminiFake() as fake:
        model = gemini_model(fake)
        api = model.batch_api()
        batch_id = await api.submit(batch_requests(model, 2))
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
        model = gemini_model(fake)
        api = GeminiBatchAPI(model._client, inline_max_bytes=1_000)
        with pytest.raises(BadRequestError, match="over gemini's limit of 3,000"):
            await api.submit(batch_requests(model, 10))
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
        sdk = sdk_client(fake)
        content = b"".join(orjson.dumps({"key": f"k{i}", "request": {"contents": [
            {"role": "user", "parts": [{"text": f"Name {i}?"}]}]}}) + b"\n" for i in range(3))
        uploaded = await sdk.aio.files.upload(file=io.BytesIO(content), config={
            "mime_type": "application/jsonl", "display_name": "by-sdk"})
        assert uploaded.name in fake.uploads and fake.uploads[uploaded.name] == content
        job = await sdk.aio.batches.create(model=MODEL, src=uploaded.name)
        assert job.name in fake.batches.jobs and fake.batches.submitted == {
            "k0": 1, "k1": 1, "k2": 1}
        model = gemini_model(fake)
        api = model.batch_api()
        assert job.name is not None
        await finish(api, job.name)
        read = await sdk.aio.batches.get(name=job.name)
        assert read.dest is not None and read.dest.file_name
        results = await results_by_id(api, job.name)
        assert sorted(results) == ["k0", "k1", "k2"]
        await api.aclose()
        await model.aclose()
