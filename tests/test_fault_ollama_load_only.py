"""Vendor fault: Ollama answers "I loaded the model" and nothing else.

Ollama answers a chat request it has nothing to prompt from (no messages, or
no user turn among them) with a 200 whose only line is ``{"done": true,
"done_reason": "load"}`` (``unload`` with ``keep_alive: 0``): no content, no
counts (can1357/oh-my-pi#7465,
https://github.com/can1357/oh-my-pi/issues/7465; ollama/ollama#8395). Read as
a clean empty stop, every recovery layer sent the same request again and got
the same nothing, ending in an "empty reply" that named no cause. It is a
``BadRequestError`` now, at once (the same request always gets it), naming
the ``done_reason``.

Served by the Ollama fake on 127.0.0.1, streamed and whole, through the
public API."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import BadRequestError, ReActAgent
from agentflow.providers.ollama import OllamaChatModel
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake
from tests.provider_scenarios import FAST


class City(BaseModel):
    name: str


@pytest.mark.parametrize("reason", ["load", "unload"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_reply_that_only_loaded_the_model_is_a_typed_error(
        reason: str, stream: bool) -> None:
    async with OllamaFake() as fake:
        fake.add(*[FakeReply(usage=(0, 0), extra={"done_reason": reason})] * 3)
        model = OllamaChatModel("llama3.1:8b", base_url=fake.url, settings=FAST, stream=stream)
        try:
            with pytest.raises(BadRequestError) as caught:
                await ReActAgent("a", model).call("Where is the Louvre?", City)
        finally:
            await model.aclose()
    assert caught.value.code == reason
    assert f"done_reason {reason!r}" in str(caught.value)
    assert len(fake.bodies) == 1  # the same request gets the same nothing: never sent again


async def test_a_reply_that_generated_is_read_as_before() -> None:
    async with OllamaFake() as fake:
        fake.add(FakeReply(text='{"name": "Paris"}'))
        model = OllamaChatModel("llama3.1:8b", base_url=fake.url, settings=FAST)
        try:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
        finally:
            await model.aclose()
    assert reply.output == City(name="Paris")
