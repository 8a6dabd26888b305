"""Vendor fault: a server's tool parser that flushes the whole arguments at the
end of the stream after streaming part of them.

SGLang's MiniMax-M2 parser sent one call as two entries: the name with empty
arguments at index 0, then at index 1 ``"id": null, "name": null`` and
arguments that are a streamed start followed by the whole object,
``{"command": "...head -100"{"command": "...head -100", "description": "Run
tests"}`` (sgl-project/sglang#23071). vLLM's xlam parser sends ``{`` and then
the whole object (``{{"city": "Orlando", ...}``, vllm-project/vllm#51697).
The agent ran the named call without arguments and answered the second one
"tool '' not found", or failed validation on the doubled start: the tool
never ran. Now a nameless, id-less entry right after a named call without
arguments holds that call's arguments, and a start followed by its whole
object is that object.

Served by the OpenAI fake on 127.0.0.1, streamed, through the public API."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import Complete, OutputConfig, ReActAgent, ToolResult, ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

COMMAND = {"command": "pytest -q | head -100", "description": "Run tests"}


class FlushingParser(OpenAIFake):
    """Streams each tool call as its server's parser did (``extra["flush"]``):
    ``"split"``: name and empty arguments, then at the next index a nameless,
    id-less entry with a start of the arguments and the whole of them;
    ``"brace"``: ``{`` then the whole arguments, at the call's index."""

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        mode = reply.extra.get("flush")
        if not mode or not reply.tool_calls:
            return super().delta_frames(reply, body)
        frames = [self.chunk(body, {"role": "assistant", "content": ""})]
        for i, call in enumerate(reply.tool_calls):
            args = orjson.dumps(call.arguments, option=orjson.OPT_NON_STR_KEYS).decode()
            args = args.replace('":', '": ').replace(',"', ', "')
            head = {"index": i, "id": f"call_{i}", "type": "function",
                    "function": {"name": call.name, "arguments": ""}}
            frames.append(self.chunk(body, {"tool_calls": [head]}))
            if mode == "split":
                start = args[: len(args) // 2]
                frames.append(self.chunk(body, {"tool_calls": [{
                    "index": i + 1, "id": None, "type": "function",
                    "function": {"name": None, "arguments": start + args}}]}))
            else:
                for part in ("{", args):
                    frames.append(self.chunk(body, {"tool_calls": [{
                        "index": i, "function": {"arguments": part}}]}))
        return frames


class Ticket(BaseModel):
    id: int
    title: str


async def _stream(fake: OpenAIFake, schema: Any = None, **kwargs: Any) -> list[Any]:
    async with OpenAIChatModel("MiniMax-M2.5", base_url=fake.url, api_key="k", stream=True,
                               settings=FAST) as model:
        return [e async for e in ReActAgent("p", model, **kwargs).stream("run the tests",
                                                                         schema)]


@pytest.mark.parametrize("flush", ["split", "brace"])
async def test_a_flushed_call_runs_once_with_its_arguments(flush: str) -> None:
    ran: list[dict[str, str]] = []

    def bash(command: str, description: str) -> str:
        """Run a shell command."""
        ran.append({"command": command, "description": description})
        return "12 passed"

    async with FlushingParser() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("bash", COMMAND)], extra={"flush": flush}),
                 FakeReply(text="All 12 tests pass."))
        events = await _stream(fake, tools=[bash])
    assert ran == [COMMAND]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.is_error for r in results] == [False]
    assert isinstance(events[-1], Complete) and events[-1].message.text == "All 12 tests pass."


@pytest.mark.parametrize("flush", ["split", "brace"])
async def test_a_flushed_output_call_is_the_output(flush: str) -> None:
    data = {"id": 7, "title": "login page"}
    async with FlushingParser() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response", data)],
                           extra={"flush": flush}))
        events = await _stream(fake, Ticket, output=OutputConfig(strategy=ToolStrategy()))
    assert isinstance(events[-1], Complete) and events[-1].output == Ticket(**data)
    assert len(fake.requests) == 1


async def test_two_calls_of_their_own_stay_two() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("bash", COMMAND),
                                       FakeCall("bash", {**COMMAND, "command": "ls"})]),
                 FakeReply(text="done"))
        ran: list[str] = []

        def bash(command: str, description: str) -> str:
            """Run a shell command."""
            ran.append(command)
            return "ok"

        await _stream(fake, tools=[bash])
    assert sorted(ran) == sorted([COMMAND["command"], "ls"])
