"""Vendor fault: a stream's usage inside its finish chunk's choice.

Moonshot's API (Kimi) streams the request's token counts as
``choices[0].usage`` in the finish chunk, not as the chunk's ``usage``, with
the cached prompt tokens as a top-level ``cached_tokens``
(https://github.com/earendil-works/pi/issues/2017: "Moonshot returns usage
data in chunk.choices[0].usage instead of the standard chunk.usage"). Read
as "no usage", every streamed Kimi call's tokens were unknown
(``Usage.unreported``) and its cost unestimated. They are read there when the
stream gives none in ``usage``.

Served by an OpenAI-style fake answering as Moonshot does, streamed."""

from __future__ import annotations

from typing import Any

from agentflow import Complete, ReActAgent, Usage
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class MoonshotFake(OpenAIFake):
    """No ``usage`` on any chunk; the finish chunk's choice carries it."""

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frame = self.chunk(body, {}, self.finish_of(reply))
        frame.pop("usage", None)
        prompt, completion = reply.usage
        frame["choices"][0]["usage"] = {
            "prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion, "cached_tokens": 16}
        return [frame]


async def test_moonshot_usage_is_read_from_the_choice() -> None:
    async with MoonshotFake() as fake:
        fake.add(FakeReply(text="Hello there.", usage=(40, 9)))
        async with OpenAIChatModel("kimi-k2.5", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            events = [e async for e in ReActAgent("k", model).stream("Hi")]
    done = events[-1]
    assert isinstance(done, Complete)
    assert done.usage == Usage(input_tokens=40, output_tokens=9, cached_tokens=16, requests=1)
