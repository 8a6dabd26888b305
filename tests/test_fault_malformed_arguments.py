"""Vendor fault: tool-call arguments that closed but are malformed JSON were
told "cut off ... (the reply was cut)".

A model writes a Windows path or a regex in a string without doubling its
backslash (``"C:\\Users\\"``: the backslash before the closing quote escapes
it, the string never ends; ``"\\d+\\"``). The object closed; nothing was
cut, yet the model was told to send "the whole object again" as if the
token limit had cut it, and tried the same text again; and a text that did
stop short without open brackets (``{"a": "x"``) was told only "not valid
JSON". Now the two are told apart (``agentflow.output.argument_flaws``):
cut = never closed, malformed = closed (or broken before its end), with the
fault and where it is, in the result the model reads and in the final error.

Served by the OpenAI and Anthropic fakes on 127.0.0.1, streamed and whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, StructuredOutputError, ToolRetriesExceededError
from agentflow.output.config import OutputConfig
from agentflow.output.strategies import ToolStrategy
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
MALFORMED = '{"path": "C:\\Users\\"}'  # closed; its last backslash escapes the quote
BAD_ESCAPE = '{"pattern": "\\d+\\"}'
CUT = '{"path": "C:/Users/ann", "mode": "r"'  # never closed: the reply was cut


def open_file(path: str) -> str:
    """Open a file."""
    return f"opened {path}"


class Found(BaseModel):
    pattern: str


def results(body: dict[str, object]) -> str:
    return " ".join(str(m.get("content")) for m in body["messages"]  # type: ignore[attr-defined]
                    if m.get("role") == "tool")


@STREAMS
@pytest.mark.parametrize("raw", [MALFORMED, BAD_ESCAPE], ids=["quote", "escape"])
async def test_closed_malformed_arguments_are_not_called_cut(stream: bool, raw: str) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("open_file", raw)]),
                 FakeReply(tool_calls=[FakeCall("open_file", {"path": "C:/Users"})]),
                 FakeReply(text="Done."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            reply = await ReActAgent("a", model, tools=[open_file]).call("Open it")
    assert reply.text == "Done."
    said = results(fake.bodies[1])
    assert "malformed JSON (the object closed, so nothing was cut)" in said
    assert "cut off" not in said and "reply was cut" not in said
    assert "backslash" in said and "at character" in said


@STREAMS
async def test_arguments_that_never_closed_are_called_cut(stream: bool) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("open_file", CUT)], finish_reason="length"),
                 FakeReply(text="Done."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            await ReActAgent("a", model, tools=[open_file]).call("Open it")
    said = results(fake.bodies[1])
    assert "cut off before the JSON object closed" in said and "malformed" not in said


async def test_the_final_errors_tell_the_two_apart() -> None:
    async with OpenAIFake() as fake:
        fake.default = FakeReply(tool_calls=[FakeCall("open_file", MALFORMED)])
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            with pytest.raises(ToolRetriesExceededError) as caught:
                await ReActAgent("a", model, tools=[open_file], tool_retries=1).call("Open")
    assert "malformed JSON" in str(caught.value) and "reply was cut" not in str(caught.value)
    async with OpenAIFake() as fake:
        fake.default = FakeReply(tool_calls=[FakeCall("generate_response", BAD_ESCAPE)])
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            agent = ReActAgent("a", model, output=OutputConfig(strategy=ToolStrategy(),
                                                               output_retries=1))
            reply = await agent.call("Find it", Found)
    with pytest.raises(StructuredOutputError) as failed:
        _ = reply.output
    assert "invalid escape" in str(failed.value) and "reply was cut" not in str(failed.value)
