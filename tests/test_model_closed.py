"""A model used after ``aclose()`` raises ``ModelClosedError`` naming it, as a
closed httpx or aiohttp client refuses requests, instead of opening a new
HTTP session (or, for the embedded model, starting a new server:
tests/test_providers_local.py) behind the caller's back. Each HTTP adapter
against its vendor's fake on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gc
import pickle
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import ExtractResult, ModelClosedError, ReActAgent, UsageError, extract_many
from agentflow.batch import WINDOW
from agentflow.messages import Msg
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate
from agentflow.testing import FunctionModel, RecordedRequest

from .fakes.anthropic import AnthropicFake
from .fakes.base import FakeReply, FakeServer
from .fakes.gemini import GeminiFake
from .fakes.ollama import OllamaFake
from .fakes.openai import OpenAIFake
from .leak_watch import collect_earlier_garbage
from .provider_scenarios import FAST

VENDORS: dict[str, tuple[type[FakeServer], str, Callable[[str, str], Any]]] = {
    "openai": (OpenAIFake, "gpt-4o-mini", lambda url, name: OpenAIChatModel(
        name, base_url=url, api_key="sk-test", settings=FAST)),
    "anthropic": (AnthropicFake, "claude-3-5-haiku-latest", lambda url, name: AnthropicChatModel(
        name, base_url=url, api_key="sk-test", settings=FAST)),
    "gemini": (GeminiFake, "gemini-2.5-flash", lambda url, name: GeminiChatModel(
        name, base_url=url, api_key="test-key", settings=FAST)),
    "ollama": (OllamaFake, "qwen3:8b", lambda url, name: OllamaChatModel(
        name, base_url=url, settings=FAST)),
}


def client_of(model: Any) -> Any:
    """The model's ``HttpClient`` (OpenAI-style adapters call it ``_http``)."""
    return getattr(model, "_http", None) or model._client


@pytest.mark.parametrize("vendor", sorted(VENDORS))
async def test_a_closed_model_refuses_requests_and_opens_no_session(vendor: str) -> None:
    fake_type, name, make = VENDORS[vendor]
    async with fake_type() as fake:
        fake.default = FakeReply(text="hi")
        model = make(fake.url, name)
        assert (await generate(model, [Msg.user("hi")])).message.text == "hi"
        session = client_of(model)._session
        await model.aclose()
        sent = len(fake.requests)
        with pytest.raises(ModelClosedError) as caught:
            await generate(model, [Msg.user("hi")])
        assert caught.value.model == f"{vendor}:{name}"
        assert f"{vendor}:{name}" in str(caught.value) and "aclose()" in str(caught.value)
        assert isinstance(caught.value, UsageError) and caught.value.same_for_every_input
        assert len(fake.requests) == sent  # nothing was sent
        assert session.closed and client_of(model)._session is None  # none opened again
        await model.aclose()  # still idempotent


@pytest.mark.parametrize("vendor", sorted(VENDORS))
@pytest.mark.parametrize("how", ["done", "raised"])
async def test_every_model_closes_its_session_at_the_end_of_its_async_with_block(
        vendor: str, how: str) -> None:
    """Each HTTP adapter is an async context manager (Anthropic, Gemini and
    Ollama were not: ``async with`` raised ``TypeError``): the block's end
    closes the model's session however the block ends, with nothing left
    for the garbage collector to warn about."""
    fake_type, name, make = VENDORS[vendor]
    collect_earlier_garbage()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with fake_type() as fake:
            fake.default = FakeReply(text="hi")
            try:
                async with make(fake.url, name) as model:
                    assert (await generate(model, [Msg.user("hi")])).message.text == "hi"
                    session = client_of(model)._session
                    assert session is not None and not session.closed
                    if how == "raised":
                        raise LookupError("the caller's own failure")
            except LookupError:
                assert how == "raised"
            assert session.closed and client_of(model)._session is None
            with pytest.raises(ModelClosedError):
                await generate(model, [Msg.user("hi")])
            del session, model
            gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)
            or "nclosed" in str(w.message)] == []


async def test_an_agent_closed_by_its_async_with_block_says_its_model_is_closed() -> None:
    async with OpenAIFake() as fake:
        fake.default = FakeReply(text="hi")
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        async with ReActAgent("a", model) as agent:
            assert (await agent.call("hi")).text == "hi"
        with pytest.raises(ModelClosedError, match="openai:gpt-4o-mini"):
            await agent.call("hi")


async def test_a_closed_model_makes_no_batch_api_client() -> None:
    """A vendor batch API's clients are siblings of the model's: a closed
    model makes none (``extract_many(mode="batch")`` fails at its start)."""
    model = OpenAIChatModel("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="k")
    await model.batch_api().aclose()  # while open: made and closed on its own
    await model.aclose()
    with pytest.raises(ModelClosedError, match="openai:gpt-4o-mini"):
        model.batch_api()


def test_closed_on_one_loop_is_closed_on_every_loop() -> None:
    """A model reused across loops (``asyncio.run`` twice) keeps a session per
    loop: closing it on one closes it for all, and no later loop opens one."""

    async def run() -> tuple[str, Any]:
        async with OpenAIFake() as fake:
            fake.default = FakeReply(text="hi")
            model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                    settings=FAST)
            reply = await generate(model, [Msg.user("hi")])
            await model.aclose()
            return reply.message.text, model

    text, model = asyncio.run(run())
    assert text == "hi"
    with pytest.raises(ModelClosedError):
        asyncio.run(generate(model, [Msg.user("hi")]))


def test_the_error_crosses_a_process_boundary() -> None:
    error = ModelClosedError("the model openai:m was used after aclose()", model="openai:m")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ModelClosedError and copy.model == "openai:m"
    assert str(copy) == str(error)


async def test_counting_tokens_on_a_closed_model_is_refused() -> None:
    model = OpenAIChatModel("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert await model.count_tokens("hello") > 0
    await model.aclose()
    with pytest.raises(ModelClosedError, match="openai:gpt-4o-mini"):
        await model.count_tokens("hello")


class Name(BaseModel):
    name: str


async def test_extract_many_on_a_closed_model_raises_once_and_stops() -> None:
    """One ``ModelClosedError`` for the run, not one failed record per input:
    the inputs stop being read (at most a window of them is started)."""
    read: list[int] = []

    def inputs() -> Iterator[str]:
        for i in range(100):
            read.append(i)
            yield f"name {i}"

    async with OpenAIFake() as fake:
        fake.default = FakeReply(text='{"name": "ann"}')
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
        await model.aclose()
        seen: list[ExtractResult] = []
        with pytest.raises(ModelClosedError, match="openai:gpt-4o-mini"):
            async for result in extract_many(model, inputs(), Name, concurrency=1):
                seen.append(result)
        assert seen == [] and fake.requests == []
        assert len(read) <= 1 + WINDOW  # never the whole corpus


async def test_a_model_closed_during_the_run_ends_it_after_the_records_before() -> None:
    def answer(request: RecordedRequest) -> str:
        if "after-close" in request.messages[-1].text:  # closed by then
            raise ModelClosedError("the model test:m was used after aclose()", model="test:m")
        return '{"name": "ann"}'

    done: list[ExtractResult] = []
    with pytest.raises(ModelClosedError, match="test:m"):
        docs = ["ann", "ann too", "after-close ann", "after-close ann"]
        async for result in extract_many(FunctionModel(answer), docs, Name, concurrency=1):
            done.append(result)
    assert [(r.index, r.ok) for r in done] == [(0, True), (1, True)]
