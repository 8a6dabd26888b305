"""Vendor fault: Google RPC errors relayed by an OpenAI-compatible endpoint.

Gemini's OpenAI-compatible endpoint (``/v1beta/openai``) answers its errors
in Google's RPC shape: a one-element list ``[{"error": {code, message,
status, details}}]``, or that whole document as the *text* of an
OpenAI-style ``error.message`` (continuedev/continue#10748, #10290, #9251:
``{"error": {"message": "{\\n  \\"error\\": {\\n    \\"code\\": 400, ...
\\"reason\\": \\"API_KEY_INVALID\\" ...", "code": 400, "status": "Bad
Request"}}``). Read as a plain OpenAI error, an invalid key was a
``BadRequestError`` whose message was that JSON, a daily quota was retried as
a rate limit, and ``RetryInfo.retryDelay`` was not read. Now such an error is
mapped as Gemini's native API maps it: ``AuthenticationError``,
``QuotaExceededError``, the vendor's delay; its message is the RPC message.

Served by the OpenAI fake on 127.0.0.1 (the OpenAI-compatible adapter)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentflow import (
    AuthenticationError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
    ReActAgent,
)
from agentflow.providers import HttpSettings
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

KEY_DETAILS = [
    {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
     "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}},
    {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
     "message": "API key not valid. Please pass a valid API key."},
]
DAILY = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
    "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
    "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "quotaValue": "200"}]},
    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]
MINUTE = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
    "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "quotaValue": "15"}]},
    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]
QUOTA = "You exceeded your current quota, please check your plan and billing details."
KEY = "API key not valid. Please pass a valid API key."


def rpc(code: int, message: str, status: str, details: list[Any]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, "details": details}}


def as_text(code: int, reason: str, document: dict[str, Any]) -> bytes:
    """The RPC document as the text of an OpenAI-style error (pretty-printed, as sent)."""
    text = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
    return orjson.dumps({"error": {"message": text, "code": code, "status": reason}})


SHAPES = {
    "as-text": lambda code, reason, doc: as_text(code, reason, doc),
    "as-list": lambda code, reason, doc: orjson.dumps([doc]),
}


async def _fail(body: bytes, status: int, settings: HttpSettings = FAST
                ) -> tuple[ProviderError, int]:
    async with OpenAIFake() as fake:
        fake.add_error(status, body)
        fake.add(FakeReply(text="never read"))
        async with OpenAIChatModel("gemini-2.5-flash", base_url=fake.url, api_key="k",
                                   settings=settings) as model:
            with pytest.raises(ProviderError) as caught:
                await ReActAgent("g", model).call("Capital of France?")
    return caught.value, len(fake.requests)


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_an_invalid_key_is_an_authentication_error(shape: str) -> None:
    body = SHAPES[shape](400, "Bad Request", rpc(400, KEY, "INVALID_ARGUMENT", KEY_DETAILS))
    error, _ = await _fail(body, 400)
    assert isinstance(error, AuthenticationError)
    assert KEY in str(error) and '"error"' not in str(error)  # the message, not its JSON
    assert error.vendor == "openai"


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_a_spent_daily_quota_is_not_retried(shape: str) -> None:
    body = SHAPES[shape](429, "Too Many Requests",
                         rpc(429, QUOTA, "RESOURCE_EXHAUSTED", DAILY))
    error, sent = await _fail(body, 429)
    assert isinstance(error, QuotaExceededError)
    assert sent == 1


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_a_rate_limit_carries_the_vendors_delay(shape: str) -> None:
    body = SHAPES[shape](429, "Too Many Requests",
                         rpc(429, QUOTA, "RESOURCE_EXHAUSTED", MINUTE))
    error, _ = await _fail(body, 429, HttpSettings(max_retries=0, read_timeout=5))
    assert isinstance(error, RateLimitedError) and not isinstance(error, QuotaExceededError)
    assert error.retry_after == 7.0
    assert QUOTA in str(error)


async def test_an_openai_style_error_is_read_as_before() -> None:
    body = orjson.dumps({"error": {"message": "Incorrect API key provided: k.",
                                   "type": "invalid_request_error", "param": None,
                                   "code": "invalid_api_key"}})
    error, _ = await _fail(body, 401)
    assert isinstance(error, AuthenticationError) and error.code == "invalid_api_key"
