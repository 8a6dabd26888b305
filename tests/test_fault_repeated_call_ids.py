"""Vendor fault: one tool call streamed twice, under a second index.

GitHub Copilot's chat endpoint (and gateways in front of it) sometimes sends
a finished tool call again, same ``id``, same name, same arguments, under
the next ``index`` (NousResearch/hermes-agent#96925: "Could not uniquify
duplicate tool call id"). The second copy got an id of its own and the tool
ran twice: a side effect (a mail, a payment) done twice. A call repeated
under its id and name is now one call, streamed as whole replies always
were; a repeat whose arguments differ is a call of its own, and calls that
only share an id (another tool) stay apart.

Served by an OpenAI-compatible fake that streams the repeat, through the
public API."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentflow import ReActAgent, ToolResult
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class RepeatingFake(OpenAIFake):
    """Streams ``extra["calls"]`` (name, arguments, id) one whole call per
    chunk, at indexes 0, 1, 2..."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if "calls" not in reply.extra:
            return super().render_events(reply, body)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return b"data: " + orjson.dumps({
                "id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1,
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + b"\n\n"
        frames = [chunk({"role": "assistant", "content": None})]
        for n, (name, args, call_id) in enumerate(reply.extra["calls"]):
            frames.append(chunk({"tool_calls": [{"index": n, "id": call_id, "type": "function",
                                                 "function": {"name": name, "arguments": ""}}]}))
            frames.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": args}}]}))
        return [*frames, chunk({}, "tool_calls"), b"data: [DONE]\n\n"]


async def _run(calls: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    done: list[tuple[str, str]] = []

    def send_mail(to: str) -> str:
        """Send a mail.

        Args:
            to: the address.
        """
        done.append(("send_mail", to))
        return "sent"

    def get_time(zone: str) -> str:
        """The time in a zone.

        Args:
            zone: the zone.
        """
        done.append(("get_time", zone))
        return "noon"

    async with RepeatingFake() as fake:
        fake.add(FakeReply(extra={"calls": calls}), FakeReply(text="Done."))
        async with OpenAIChatModel("gpt-4.1", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            events = [e async for e in ReActAgent("m", model, tools=[send_mail, get_time])
                      .stream("Mail Ann.")]
    assert all(not e.is_error for e in events if isinstance(e, ToolResult))
    return done


async def test_a_call_sent_twice_runs_once() -> None:
    args = '{"to": "ann@example.com"}'
    assert await _run([("send_mail", args, "call_A"), ("send_mail", args, "call_A")]) == [
        ("send_mail", "ann@example.com")]


@pytest.mark.parametrize(("calls", "expected"), [
    ([("send_mail", '{"to": "ann@example.com"}', "call_A"),
      ("send_mail", '{"to": "bob@example.com"}', "call_A")],
     [("send_mail", "ann@example.com"), ("send_mail", "bob@example.com")]),
    ([("send_mail", '{"to": "ann@example.com"}', "call_0"),
      ("get_time", '{"zone": "UTC"}', "call_0")],
     [("get_time", "UTC"), ("send_mail", "ann@example.com")]),
], ids=["other-arguments", "other-tool"])
async def test_distinct_calls_sharing_an_id_both_run(
        calls: list[tuple[str, str, str]], expected: list[tuple[str, str]]) -> None:
    assert sorted(await _run(calls)) == expected
