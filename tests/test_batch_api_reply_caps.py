"""How much of a batch API's replies is read: polls and listings whole, at
most ``HttpSettings.max_reply_bytes``; results files line by line, each line
(one reply) at most that much. Both were read without a bound: a server
answering a poll with an endless body, or a results file with a line that
never ends, filled the memory. Against the Anthropic fake
(tests/fakes/anthropic_batches.py) and the OpenAI fake's Batch API."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentflow.batch_api.protocol import BatchState
from agentflow.errors import ReplyTooLargeError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions
from agentflow.providers import HttpSettings
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

CAPPED = HttpSettings(backoff_initial=0.01, backoff_max=0.02, rate_governor=False,
                      max_reply_bytes=4000)


async def test_a_results_line_over_the_cap_is_refused_the_others_read() -> None:
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="Ada"), FakeReply(text="x" * 20_000))
        model = AnthropicChatModel("claude-sonnet-4-5", api_key="sk-ant-test",
                                   base_url=fake.url, settings=CAPPED)
        api = model.batch_api()
        requests = [model.batch_request(f"in-{i}", [Msg.user("hi")], [], GenerateOptions())
                    for i in range(2)]
        batch_id = await api.submit(requests)
        for _ in range(20):
            if (await api.status(batch_id)).state.terminal:
                break
        read = []
        with pytest.raises(ReplyTooLargeError, match="4,000 characters") as info:
            async for result in api.results(batch_id):
                read.append(result.custom_id)
        assert info.value.limit == 4000 and len(read) <= 1
        await api.aclose()
        await model.aclose()


async def test_a_poll_over_the_cap_is_refused_and_a_results_file_is_read_by_line() -> None:
    """OpenAI's output file was read whole (``response.read()``): now line by
    line, so a file larger than the cap, of lines under it, is read."""
    async with OpenAIFake(api_key="sk-x") as fake:
        fake.default = FakeReply(text="y" * 1500)
        settings = replace(CAPPED, max_reply_bytes=3000)
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="sk-x",
                                settings=settings)
        api = model.batch_api()
        requests = [model.batch_request(f"in-{i}", [Msg.user("hi")], [], GenerateOptions())
                    for i in range(4)]  # a file of 4 lines over 1,500 bytes each
        batch_id = await api.submit(requests)
        for _ in range(20):
            if (await api.status(batch_id)).state is BatchState.COMPLETED:
                break
        results = [r async for r in api.results(batch_id)]
        assert sorted(r.custom_id for r in results) == [f"in-{i}" for i in range(4)]
        assert all(r.error is None for r in results)
        await api.aclose()
        await model.aclose()
    tiny = replace(CAPPED, max_reply_bytes=50)  # a poll's JSON is longer than that
    async with OpenAIFake(api_key="sk-x") as fake:
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="sk-x", settings=tiny)
        api = model.batch_api()
        with pytest.raises(ReplyTooLargeError):
            await api.submit([model.batch_request("in-0", [Msg.user("hi")], [], GenerateOptions())])
        await api.aclose()
        await model.aclose()
