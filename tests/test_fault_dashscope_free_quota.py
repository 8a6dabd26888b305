"""Vendor fault: DashScope's spent free quota, typed as a permission or request fault.

Model Studio answers a model whose free quota is used up, with "use free
tier only" on, with 403 ``AllocationQuota.FreeTierOnly`` "The free quota has
been exhausted. To continue accessing the model on a paid basis, please
complete your payment information ..." (axoviq-ai/synthadoc#215), and on
other endpoints with a 400 "The free tier of the model has been exhausted"
(APIParkLab/APIPark#394). It was a ``PermissionDeniedError`` or a
``BadRequestError`` (an extraction run blamed each document's request); it
is a ``QuotaExceededError`` now, never retried. A rate limit on the
allocation (``Throttling.AllocationQuota``) is still retried.

Served by the DashScope fake, through the public API."""

from __future__ import annotations

import pytest

from agentflow import QuotaExceededError, ReActAgent
from agentflow.providers.dashscope import DashScopeChatModel
from tests.fakes.base import FakeReply
from tests.fakes.dashscope import DashScopeFake
from tests.provider_scenarios import FAST

FREE_TIER = ('The free quota has been exhausted. To continue accessing the model on a paid '
             'basis, please complete your payment information (or disable the "use free tier '
             'only" mode in the management console if already completed).')


async def _call(fake: DashScopeFake) -> str:
    async with DashScopeChatModel("qwen-plus", base_url=fake.url, api_key="k",
                                  settings=FAST) as model:
        return (await ReActAgent("q", model).call("hi")).text


@pytest.mark.parametrize(("status", "body"), [
    (403, {"error": {"message": FREE_TIER, "type": "AllocationQuota.FreeTierOnly",
                     "param": None, "code": "AllocationQuota.FreeTierOnly"},
           "request_id": "4d8a20d5"}),
    (400, {"error": {"message": "The free tier of the model has been exhausted. If you wish "
                                "to continue access the model on a paid basis, please disable "
                                'the "use free tier only" mode in the management console.',
                     "type": "invalid_request_error"}}),
], ids=["403-code", "400-message"])
async def test_a_spent_free_quota_is_a_quota_error(status: int, body: object) -> None:
    async with DashScopeFake() as fake:
        fake.add_error(status, body)
        fake.add(FakeReply(text="never"))
        with pytest.raises(QuotaExceededError) as info:
            await _call(fake)
    assert info.value.status == status and not info.value.retryable
    assert len(fake.requests) == 1


async def test_an_allocation_rate_limit_is_still_retried() -> None:
    async with DashScopeFake() as fake:
        fake.add_error(429, {"error": {"message": "Allocated quota exceeded, please increase "
                                                  "your quota limit.",
                                       "type": "Throttling.AllocationQuota",
                                       "code": "Throttling.AllocationQuota"}})
        fake.add(FakeReply(text="after retry"))
        assert await _call(fake) == "after retry"
    assert len(fake.requests) == 2
