"""Shared helpers for the Gemini batch tests (tests/test_batch_api_gemini*.py):
a model on the fake, its batch requests, polling a batch to its end, its
results by id, and google-genai's client on the fake as a witness."""

from __future__ import annotations

from typing import Any

from agentflow.batch_api.protocol import BatchRequest, BatchResult, BatchState
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ToolChoice, ToolSpec
from agentflow.providers import HttpSettings
from agentflow.providers._gemini_batch import GeminiBatchAPI
from agentflow.providers.gemini import GeminiChatModel
from tests.fakes.gemini import GeminiFake

FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.02, rate_governor=False)
TOOL = ToolSpec("record", "Record the answer.", {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
FORCED = GenerateOptions(tool_choice=ToolChoice("specific", "record"))
MODEL = "gemini-2.5-flash"


def gemini_model(fake: GeminiFake, name: str = MODEL, **kw: Any) -> GeminiChatModel:
    """A Gemini model on ``fake`` that retries fast."""
    return GeminiChatModel(name, api_key="AIza-test-key", base_url=fake.url, settings=FAST, **kw)


def batch_requests(model: GeminiChatModel, n: int) -> list[BatchRequest]:
    """``n`` batch requests (``in-0``...) that force the ``record`` tool."""
    return [model.batch_request(f"in-{i}", [Msg.user(f"Extract the name from document {i}.")],
                                [TOOL], FORCED) for i in range(n)]


async def finish(api: GeminiBatchAPI, batch_id: str, limit: int = 20) -> list[BatchState]:
    """The states a batch is polled through until it ends."""
    seen = []
    for _ in range(limit):
        status = await api.status(batch_id)
        seen.append(status.state)
        if status.state.terminal:
            return seen
    raise AssertionError(f"batch never ended: {seen}")


async def results_by_id(api: GeminiBatchAPI, batch_id: str) -> dict[str, BatchResult]:
    """A batch's results by custom id."""
    return {r.custom_id: r async for r in api.results(batch_id)}


def sdk_client(fake: GeminiFake) -> Any:
    """google-genai's client, pointed at ``fake``."""
    from google import genai
    from google.genai import types

    root, _, version = fake.url.rpartition("/")
    return genai.Client(api_key="AIza-test-key", http_options=types.HttpOptions(
        base_url=root, api_version=version))
