"""Vendor fault: a batch item Anthropic paused, read as the input's answer.

A Message Batches item runs server tools (web search, web fetch, code
execution) in the API's own loop as a live request does, and may end with
``stop_reason: "pause_turn"`` the same way: the turn is not over, and the
documented handling is to send the paused content back as the last assistant
turn, with no added user message (platform.claude.com/docs/en/agents-and-tools/
tool-use/server-tools, "The server-side loop and pause_turn"). Live requests
did so (tests/test_fault_anthropic_pause_turn.py); a batch reply did not: its
paused text ("Let me search for that.") reached the engine as an ended reply
(finish reason ``other``), which re-asked the model in a new user turn, or
took a paused turn's JSON-looking text as the answer. The batch reply's turn
now goes on live, under the run's live-request limit, its usage summed.

Served by the Anthropic fake (tests/fakes/anthropic_batches.py) in batch mode."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.batch_api.runner import BatchSettings
from agentflow.providers import HttpSettings
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply

FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.02, rate_governor=False)


SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
          "input": {"query": "who is it"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
          "content": [{"type": "web_search_result", "title": "A page",
                       "url": "https://pages.example/a", "encrypted_content": "Eq=="}]}


class Person(BaseModel):
    name: str


class SearchingServer(AnthropicFake):
    """Puts the server-tool blocks a reply names (``extra["server"]``) first."""

    def _content(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        return [*reply.extra.get("server", ()), *super()._content(reply, body)]


def searching(body: dict[str, Any]) -> FakeReply:
    """A first turn pauses mid-search; the continuation (the paused content
    sent back as the last assistant turn) answers."""
    messages = body["messages"]
    first = messages[0]["content"]
    text = first if isinstance(first, str) else next(
        b["text"] for b in first if b["type"] == "text")
    name = text.split("name: ", 1)[1].strip()
    if len(messages) == 1:
        return FakeReply(text="Let me search for that.", usage=(300, 20),
                         extra={"stop_reason": "pause_turn", "server": [SEARCH, RESULT]})
    return FakeReply(text=orjson.dumps({"name": name}).decode(), usage=(400, 10))


async def test_a_paused_batch_item_continues_live_with_its_paused_turn() -> None:
    async with SearchingServer() as fake:
        fake.default = searching
        model = AnthropicChatModel("claude-sonnet-4-5", api_key="sk-ant-test",
                                   base_url=fake.url, settings=FAST)
        settings = BatchSettings(flush_after=0.05, poll_initial=0.01, poll_max=0.02)
        results = {r.id: r async for r in extract_many(
            model, [("id0", "name: Ada"), ("id1", "name: Cy")], Person, mode="batch",
            batch=settings, chunking=None)}
        await model.aclose()
    assert {k: r.output.name for k, r in results.items()} == {"id0": "Ada", "id1": "Cy"}
    live = [r.body for r in fake.requests if r.path == "/v1/messages"]
    assert len(fake.batches.jobs) == 1 and len(live) == 2  # one continuation per input
    for body in live:  # the paused turn sent back as it was, no user message after it
        last = body["messages"][-1]
        assert last["role"] == "assistant"
        assert last["content"] == [SEARCH, RESULT,
                                   {"type": "text", "text": "Let me search for that."}]
    for result in results.values():
        assert result.attempts == 1  # one turn, never re-asked
        assert result.usage.input_tokens == 700 and result.usage.output_tokens == 30
