"""Vendor fault: Ollama out of memory, retried as if a moment would free it.

Ollama answers a model its server cannot fit with a 500: its own check
before loading ("model requires more system memory (5.0 GiB) than is
available (3.9 GiB)", continuedev/continue#11715, ollama/ollama#10920) or
the runner dying as llama.cpp fails to allocate ("llama runner process has
terminated: CUDA error: out of memory", ollama/ollama#9782; "... error
loading model: unable to allocate CUDA0 buffer", #8597; "... error:failed to
allocate buffer, size = 33074.89 MiB", #11733). Each was a ``ServerError``:
retried with backoff, failing the same way each time, and in a batch every
document did the same. It is an ``OutOfMemoryError`` now: raised at once,
saying what to check, and a batch stops at the first (the model's fault,
not one input's). Other 500s are still retried.

Served by the Ollama fake on 127.0.0.1, through the public API."""

from __future__ import annotations

from contextlib import aclosing

import pytest

from agentflow import OutOfMemoryError, ReActAgent, ServerError, extract_many
from agentflow.providers.ollama import OllamaChatModel
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake, ollama_error
from tests.provider_scenarios import FAST

REPORTS = [
    "model requires more system memory (5.0 GiB) than is available (3.9 GiB)",
    "llama runner process has terminated: CUDA error: out of memory",
    "llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer",
    "llama runner process has terminated: error:failed to allocate buffer, size = 33074.89 MiB",
]


def model_for(fake: OllamaFake) -> OllamaChatModel:
    return OllamaChatModel("llama3.1:8b", base_url=fake.url, settings=FAST)


@pytest.mark.parametrize("report", REPORTS, ids=["system-memory", "cuda", "cuda0-buffer",
                                                 "metal-buffer"])
async def test_an_out_of_memory_500_is_raised_at_once_saying_what_to_check(report: str) -> None:
    async with OllamaFake() as fake:
        fake.add(ollama_error(500, report))
        fake.default = FakeReply(text="never")
        async with aclosing(model_for(fake)) as model:
            with pytest.raises(OutOfMemoryError) as info:
                await ReActAgent("r", model).call("hi")
    error = info.value
    assert isinstance(error, ServerError) and not error.retryable
    assert error.status == 500 and report in str(error)
    assert "ollama ps" in error.hint and "num_ctx" in error.hint and error.hint in str(error)
    assert error.same_for_every_input
    assert len(fake.requests) == 1


async def test_an_out_of_memory_error_line_after_the_200_is_the_same_error() -> None:
    async with OllamaFake() as fake:
        fake.add(FakeReply(text="partial", extra={"error": REPORTS[1], "error_after": 1}))
        async with aclosing(model_for(fake)) as model:
            with pytest.raises(OutOfMemoryError):
                async for _ in ReActAgent("r", model).stream("hi"):  # streamed: NDJSON lines
                    pass
    assert len(fake.requests) == 1


async def test_an_out_of_memory_error_in_a_200_body_is_the_same_error() -> None:
    """As a proxy relays it: ``{"error": ...}`` with a 200, a whole reply."""
    async with OllamaFake() as fake:
        fake.add(ollama_error(200, REPORTS[0]))
        async with aclosing(model_for(fake)) as model:
            with pytest.raises(OutOfMemoryError):
                await ReActAgent("r", model).call("hi")
    assert len(fake.requests) == 1


async def test_another_500_is_still_retried() -> None:
    async with OllamaFake() as fake:
        fake.add(ollama_error(500, "unexpected server status: llama runner is restarting"))
        fake.add(FakeReply(text="after retry"))
        async with aclosing(model_for(fake)) as model:
            assert (await ReActAgent("r", model).call("hi")).text == "after retry"
    assert len(fake.requests) == 2


async def test_a_batch_stops_at_the_first() -> None:
    async with OllamaFake() as fake:
        fake.default = ollama_error(500, REPORTS[0])
        async with aclosing(model_for(fake)) as model:
            with pytest.raises(OutOfMemoryError):
                async for _ in extract_many(model, ["a", "b", "c", "d"], str, concurrency=1):
                    pass
    assert len(fake.requests) == 1
