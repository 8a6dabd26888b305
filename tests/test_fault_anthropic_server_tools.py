"""Vendor fault: a server tool's streamed input read as a call to run.

Anthropic runs its server tools itself (web search, web fetch, code
execution: a ``server_tool_use`` block, then the tool's result block) and
streams a server tool's input as ``input_json_delta`` fragments, as it does a
client ``tool_use``'s (https://github.com/anthropics/anthropic-sdk-python/issues/1421:
the SDK accumulates input for ``ServerToolUseBlock`` too). Those fragments
were read as a tool call without a name: the agent answered "tool '' not
found", asked again, and the call ended with ``ToolRetriesExceededError``
(or a structured output never came) whenever a gateway or an
Anthropic-compatible vendor ran a server tool. Only a ``tool_use`` block's
input is a call for the agent; the server's blocks are the vendor's.

Served by the Anthropic fake, streamed and whole, through the public API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import Complete, ReActAgent, ToolResult, ToolUse
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply, sse
from tests.provider_scenarios import FAST

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
          "input": {"query": "weather Paris"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
          "content": [{"type": "web_search_result", "title": "Paris weather",
                       "url": "https://weather.example/paris", "encrypted_content": "Eq=="}]}


class Forecast(BaseModel):
    city: str
    sky: str


class ServerSearch(AnthropicFake):
    """Puts a web search the server ran (its use and result blocks) before the
    reply's own blocks; the use's input streams as ``input_json_delta``."""

    def _content(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        return [SEARCH, RESULT, *super()._content(reply, body)]

    def _block_events(self, index: int, block: dict[str, Any], size: int | None,
                      input_in_start: bool = False) -> Iterator[bytes]:
        if block["type"] not in (SEARCH["type"], RESULT["type"]):
            yield from super()._block_events(index, block, size, input_in_start)
            return
        start = {**block, "input": {}} if block is SEARCH else block
        yield sse({"type": "content_block_start", "index": index, "content_block": start},
                  "content_block_start")
        if block is SEARCH:
            text = orjson.dumps(block["input"]).decode()
            for at in range(0, len(text), 6):
                yield sse({"type": "content_block_delta", "index": index, "delta": {
                    "type": "input_json_delta", "partial_json": text[at:at + 6]}},
                    "content_block_delta")
        yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def _model(fake: AnthropicFake, stream: bool) -> AnthropicChatModel:
    return AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                              stream=stream, settings=FAST)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_server_search_is_not_a_call_to_run(stream: bool) -> None:
    async with ServerSearch() as fake:
        fake.add(FakeReply(text="Sunny in Paris today."))
        async with _model(fake, stream) as model:
            events = [e async for e in ReActAgent("w", model).stream("Weather in Paris?")]
    assert not [e for e in events if isinstance(e, ToolUse | ToolResult)]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny in Paris today."
    assert len(fake.requests) == 1


async def test_the_output_after_a_server_search_is_read() -> None:
    async with ServerSearch() as fake:
        fake.add(FakeReply(text='{"city": "Paris", "sky": "sunny"}'))
        async with _model(fake, stream=True) as model:
            events = [e async for e in ReActAgent("w", model).stream("Weather?", Forecast)]
    done = events[-1]
    assert isinstance(done, Complete) and done.output == Forecast(city="Paris", sky="sunny")
    assert len(fake.requests) == 1
