"""Vendor fault: a request too large for the model or the account, in unknown words.

LM Studio refuses a prompt over the loaded context with "Trying to keep the
first 15857 tokens when context the overflows. However, the model is loaded
with context length of only 4096 tokens" (lmstudio-ai/lmstudio-bug-tracker#237);
Hugging Face TGI with "Input validation error: `inputs` tokens +
`max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047
`max_new_tokens`" (huggingface/chat-ui#1149). Both were a plain
``BadRequestError`` that said nothing of chunking. OpenAI answers one request
over the account's per-minute token budget with 429 "Request too large for
gpt-4o ... on tokens per min (TPM): Limit 30000, Requested 342389. The input
or output tokens must be reduced" (vanna-ai/vanna-flask#11), Groq with 413:
the 429 was retried (in vain: no wait lets it through). All are a
``ContextLengthError`` now, with the limit and the request's size, never
retried; an ordinary "Rate limit reached ... Used ..." 429 is still retried.

Served by the OpenAI fake (a local or gateway server), through the public API."""

from __future__ import annotations

import pytest

from agentflow import BadRequestError, ContextLengthError, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


async def _call(fake: OpenAIFake) -> str:
    async with OpenAIChatModel("local-model", base_url=fake.url, api_key="k",
                               settings=FAST) as model:
        return (await ReActAgent("r", model).call("a long document")).text


@pytest.mark.parametrize(("status", "body", "limit", "requested"), [
    (400, {"error": "Trying to keep the first 15857 tokens when context the overflows. "
                    "However, the model is loaded with context length of only 4096 tokens, "
                    "which is not enough. Try to load the model with a larger context "
                    "length, or provide a shorter input"}, 4096, 15857),
    (400, {"error": "The number of tokens to keep from the initial prompt is greater than "
                    "the context length (n_keep: 13055>= n_ctx: 4096). Try to load the "
                    "model with a larger context length, or provide a shorter input."},
     4096, 13055),
    (422, {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= "
                    "8192. Given: 6204 `inputs` tokens and 2047 `max_new_tokens`",
           "error_type": "validation"}, 8192, 8251),
    (422, {"error": "Input validation error: `inputs` must have less than 4096 tokens. "
                    "Given: 4545", "error_type": "validation"}, 4096, 4545),
    (429, {"error": {"message": "Request too large for gpt-4o in organization org-x on "
                                "tokens per min (TPM): Limit 30000, Requested 342389. The "
                                "input or output tokens must be reduced in order to run "
                                "successfully.", "type": "tokens", "param": None,
                     "code": "rate_limit_exceeded"}}, 30000, 342389),
    (413, {"error": {"message": "Request too large for model `llama-3.3-70b-versatile` in "
                                "organization `org_x` service tier `on_demand` on tokens per "
                                "minute (TPM): Limit 6000, Requested 7000, please reduce your "
                                "message size and try again.", "type": "tokens",
                     "code": "rate_limit_exceeded"}}, 6000, 7000),
], ids=["lmstudio", "n-keep", "tgi-total", "tgi-inputs", "openai-tpm", "groq-tpm"])
async def test_a_request_too_large_is_a_context_error(
        status: int, body: object, limit: int, requested: int) -> None:
    async with OpenAIFake() as fake:
        fake.add_error(status, body)
        fake.add(FakeReply(text="never"))
        with pytest.raises(ContextLengthError) as info:
            await _call(fake)
    assert (info.value.limit, info.value.requested) == (limit, requested)
    assert not info.value.retryable and "chunk" in info.value.reason
    assert len(fake.requests) == 1


async def test_an_ordinary_token_rate_limit_is_still_retried() -> None:
    async with OpenAIFake() as fake:
        fake.add_error(429, {"error": {
            "message": "Rate limit reached for gpt-4o in organization org-x on tokens per min "
                       "(TPM): Limit 30000, Used 29000, Requested 1500. Please try again in "
                       "1.0s.", "type": "tokens", "code": "rate_limit_exceeded"}},
            {"retry-after-ms": "10"})
        fake.add(FakeReply(text="after retry"))
        assert await _call(fake) == "after retry"
    assert len(fake.requests) == 2


async def test_other_bad_requests_are_unchanged() -> None:
    async with OpenAIFake() as fake:
        fake.add_error(400, {"error": "Input validation error: `temperature` must be strictly "
                                      "positive"})
        with pytest.raises(BadRequestError) as info:
            await _call(fake)
    assert not isinstance(info.value, ContextLengthError)
