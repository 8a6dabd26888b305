"""Tool-call ids each wire takes (providers/_call_ids.py): a conversation whose
calls another vendor named goes on on Anthropic and OpenAI instead of failing
every request with a 400 about the ids."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentflow import AgentState, ReActAgent
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.providers._call_ids import OPENAI_MAX_ID, anthropic_call_id, openai_call_id
from agentflow.providers.registry import get_model
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST, close_models, tracked

KIMI = "functions.get_weather:0"                          # Kimi K2's ids
GATEWAY = "call_Q1JuaH3v7ZNL4Gk8y0BJ5N9I|fc_0f0d91e0a300c49b016a990224e6ec87d1b1"
RESPONSES = "fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f"  # 53 characters


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    await close_models()


def test_ids_a_wire_takes_are_unchanged() -> None:
    for call_id in ("toolu_01A09q90qw90lq917835lq9", "call_abc-12_x", "x" * 100):
        assert anthropic_call_id(call_id) == call_id
    for call_id in ("call_abc", "functions.get_weather:0", "y" * OPENAI_MAX_ID):
        assert openai_call_id(call_id) == call_id


@pytest.mark.parametrize("call_id", [KIMI, GATEWAY, "", "ünï côdé", "a b"])
def test_anthropic_ids_are_mapped_deterministically(call_id: str) -> None:
    mapped = anthropic_call_id(call_id)
    assert mapped == anthropic_call_id(call_id) and len(mapped) <= 64
    assert mapped.replace("_", "").replace("-", "").isascii()
    assert all(c.isalnum() or c in "_-" for c in mapped)
    assert anthropic_call_id(call_id + "!") != mapped  # distinct ids stay distinct


@pytest.mark.parametrize("call_id", [RESPONSES, GATEWAY, "z" * 500])
def test_openai_ids_are_shortened_deterministically(call_id: str) -> None:
    mapped = openai_call_id(call_id)
    assert len(mapped) == OPENAI_MAX_ID and mapped == openai_call_id(call_id)
    assert openai_call_id(call_id + "x") != mapped


def history(call_id: str) -> AgentState:
    """A turn in which another vendor called a tool and got its result."""
    return AgentState([
        Msg.user("Weather in Paris?"),
        Msg("assistant", [ToolUseBlock(call_id, "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock(call_id, "18C, sunny", name="get_weather")]),
        Msg.assistant("It is 18C and sunny in Paris."),
    ])


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "18C"


@pytest.mark.parametrize("call_id", [KIMI, GATEWAY])
async def test_a_conversation_goes_on_on_anthropic(call_id: str) -> None:
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="Still sunny."))
        model = tracked(get_model("anthropic:claude-sonnet-4-5", api_key="k",
                                  base_url=fake.url, settings=FAST))
        reply = await ReActAgent("t", model, tools=[get_weather]).call(
            "And now?", state=history(call_id))
        sent = fake.bodies[0]["messages"]
    assert reply.text == "Still sunny."
    use, result = sent[1]["content"][0], sent[2]["content"][0]
    assert use["id"] == result["tool_use_id"] == anthropic_call_id(call_id)


@pytest.mark.parametrize("call_id", [RESPONSES, GATEWAY])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_conversation_goes_on_on_openai(call_id: str, stream: bool) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="Still sunny."))
        model = tracked(get_model("openai:gpt-4o-mini", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await ReActAgent("t", model, tools=[get_weather]).call(
            "And now?", state=history(call_id))
        sent = fake.bodies[0]["messages"]
    assert reply.text == "Still sunny."
    call = next(m for m in sent if m.get("tool_calls"))["tool_calls"][0]
    answer = next(m for m in sent if m.get("role") == "tool")
    assert call["id"] == answer["tool_call_id"] == openai_call_id(call_id)


async def test_ids_a_server_repeats_per_reply_stay_unique_in_the_conversation() -> None:
    """A server that numbers its tool calls per reply (Kimi K2:
    ``functions.get_weather:0`` in every reply) gave a conversation two calls
    with one id; continued on Anthropic, every request then failed with 400
    "`tool_use` ids must be unique" (as strict OpenAI-style vendors refuse
    "Duplicate value for 'tool_call_id'"). The repeated id of a later reply
    is replaced when the reply is read, so the ids, events and results of
    the conversation stay unique."""
    from agentflow.events import ToolResult, ToolUse

    state = AgentState()
    async with OpenAIFake() as kimi, AnthropicFake() as claude:
        for city in ("Paris", "Oslo"):
            kimi.add(FakeReply(tool_calls=[FakeCall("get_weather", {"city": city}, id=KIMI)]))
        kimi.add(FakeReply(text="Paris 18C, Oslo 18C."))
        claude.add(FakeReply(text="Still 18C."))
        first = tracked(get_model("openai:gpt-4o-mini", api_key="k", base_url=kimi.url,
                                  settings=FAST))
        events = [e async for e in ReActAgent("t", first, tools=[get_weather]).stream(
            "Weather in Paris, then Oslo?", state=state)]
        second = tracked(get_model("anthropic:claude-sonnet-4-5", api_key="k",
                                   base_url=claude.url, settings=FAST))
        reply = await ReActAgent("t", second, tools=[get_weather]).call("And now?", state=state)
        sent = claude.bodies[0]["messages"]
    uses = [b.id for m in state.memory for b in m.tool_uses]
    assert len(uses) == len(set(uses)) == 2 and uses[0] == KIMI
    results = [r.tool_use_id for m in state.memory for r in m.tool_results]
    assert results == uses
    assert [e.id for e in events if isinstance(e, ToolUse)] == uses
    assert [e.id for e in events if isinstance(e, ToolResult)] == uses
    assert reply.text == "Still 18C."
    wire = [b["id"] for m in sent for b in m["content"] if isinstance(m["content"], list)
            and b["type"] == "tool_use"]
    assert len(set(wire)) == 2


async def test_a_history_that_already_repeats_an_id_goes_on_on_anthropic() -> None:
    """A conversation stored before the ids were made unique (or a UI
    client's history) holds one id twice: each request failed with 400
    "`tool_use` ids must be unique". The later call goes out as ``<id>_2``
    and the result after it answers that id, the same on every request."""
    state = AgentState([
        Msg.user("Weather in Paris, then Oslo?"),
        Msg("assistant", [ToolUseBlock(KIMI, "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock(KIMI, "18C, sunny", name="get_weather")]),
        Msg("assistant", [ToolUseBlock(KIMI, "get_weather", {"city": "Oslo"})]),
        Msg("tool", [ToolResultBlock(KIMI, "9C, rain", name="get_weather")]),
        Msg.assistant("Paris 18C, Oslo 9C."),
    ])
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="Still."), FakeReply(text="Still."))
        model = tracked(get_model("anthropic:claude-sonnet-4-5", api_key="k",
                                  base_url=fake.url, settings=FAST))
        agent = ReActAgent("t", model, tools=[get_weather])
        assert (await agent.call("And now?", state=state.copy())).text == "Still."
        assert (await agent.call("And now?", state=state.copy())).text == "Still."
        first, again = (b["messages"] for b in fake.bodies)
    pairs = [(b.get("id") or b.get("tool_use_id"), b.get("content") or b["input"]["city"])
             for m in first if isinstance(m["content"], list) for b in m["content"]
             if b["type"] in ("tool_use", "tool_result")]
    wire = anthropic_call_id(KIMI)
    assert pairs == [(wire, "Paris"), (wire, "18C, sunny"),
                     (f"{wire}_2", "Oslo"), (f"{wire}_2", "9C, rain")]
    assert first == again  # the same ids on every request: the cached prefix holds


@pytest.mark.parametrize("call_id", [KIMI, "y" * OPENAI_MAX_ID])
async def test_a_history_that_already_repeats_an_id_goes_out_unique_on_openai(
        call_id: str) -> None:
    """The same history on an OpenAI-style wire: each id once (strict
    servers refuse "Duplicate value for 'tool_call_id'"), within the 40
    characters, each result answering its own call."""
    state = AgentState([
        Msg.user("Weather in Paris, then Oslo?"),
        Msg("assistant", [ToolUseBlock(call_id, "get_weather", {"city": "Paris"})]),
        Msg("tool", [ToolResultBlock(call_id, "18C", name="get_weather")]),
        Msg("assistant", [ToolUseBlock(call_id, "get_weather", {"city": "Oslo"})]),
        Msg("tool", [ToolResultBlock(call_id, "9C", name="get_weather")]),
        Msg.assistant("Paris 18C, Oslo 9C."),
    ])
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="Still."))
        model = tracked(get_model("openai:gpt-4o-mini", api_key="k", base_url=fake.url,
                                  settings=FAST))
        await ReActAgent("t", model, tools=[get_weather]).call("And now?", state=state)
        sent = fake.bodies[0]["messages"]
    calls = [c["id"] for m in sent for c in m.get("tool_calls") or ()]
    answers = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert len(set(calls)) == 2 and calls[0] == call_id and answers == calls
    assert all(len(c) <= OPENAI_MAX_ID for c in calls)


def _one_reply_calls_twice(call_id: str) -> AgentState:
    """A history whose one reply calls ``call_id`` twice (a server numbering
    per function, stored before the agent made repeated ids unique)."""
    return AgentState([
        Msg.user("Weather in Paris and Oslo?"),
        Msg("assistant", [ToolUseBlock(call_id, "get_weather", {"city": "Paris"}),
                          ToolUseBlock(call_id, "get_weather", {"city": "Oslo"})]),
        Msg("tool", [ToolResultBlock(call_id, "18C", name="get_weather"),
                     ToolResultBlock(call_id, "9C", name="get_weather")]),
        Msg.assistant("Paris 18C, Oslo 9C."),
    ])


async def test_one_reply_that_repeats_an_id_goes_on_on_anthropic() -> None:
    """Both results answered the second call (``<id>_2``), the first none:
    400 "`tool_use` ids were found without `tool_result` blocks". Each
    result answers the oldest call of its id still unanswered."""
    async with AnthropicFake() as fake:
        fake.add(FakeReply(text="Still."))
        model = tracked(get_model("anthropic:claude-sonnet-4-5", api_key="k",
                                  base_url=fake.url, settings=FAST))
        agent = ReActAgent("t", model, tools=[get_weather])
        assert (await agent.call("And now?", state=_one_reply_calls_twice(KIMI))).text == "Still."
        sent = fake.bodies[0]["messages"]
    pairs = [(b.get("id") or b.get("tool_use_id"), b.get("content") or b["input"]["city"])
             for m in sent if isinstance(m["content"], list) for b in m["content"]
             if b["type"] in ("tool_use", "tool_result")]
    wire = anthropic_call_id(KIMI)
    assert pairs == [(wire, "Paris"), (f"{wire}_2", "Oslo"),
                     (wire, "18C"), (f"{wire}_2", "9C")]


@pytest.mark.parametrize("call_id", [KIMI, "y" * OPENAI_MAX_ID])
async def test_one_reply_that_repeats_an_id_goes_on_on_openai(call_id: str) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text="Still."))
        model = tracked(get_model("openai:gpt-4o-mini", api_key="k", base_url=fake.url,
                                  settings=FAST))
        reply = await ReActAgent("t", model, tools=[get_weather]).call(
            "And now?", state=_one_reply_calls_twice(call_id))
        assert reply.text == "Still."
        sent = fake.bodies[0]["messages"]
    calls = [c["id"] for m in sent for c in m.get("tool_calls") or ()]
    answers = [(m["tool_call_id"], m["content"]) for m in sent if m["role"] == "tool"]
    assert len(set(calls)) == 2 and calls[0] == call_id
    assert answers == [(calls[0], "18C"), (calls[1], "9C")]
