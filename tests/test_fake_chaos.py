"""The chaos fake (tests/fakes/chaos.py) used by benchmarks/compare: seeded
decisions, vendor profiles, reminders, pacing and counters."""

from __future__ import annotations

from collections import Counter
from typing import Any

import aiohttp
import orjson
import pytest
from pydantic import BaseModel

from agentflow import AgentflowError, AgentState, ReActAgent
from agentflow.providers import HttpSettings
from agentflow.providers.minimax import DEFAULT_PROFILE as MINIMAX_PROFILE
from agentflow.providers.registry import get_model

from .fakes.chaos import ChaosFake, ChaosSettings, split
from .fakes.chaos_model import BEHAVIOURS, Decision, decide, render

RECORD = {"name": "Ada Lovelace", "email": "ada@example.org", "age": 36, "tags": ["vip"]}
TASK = f"Extract the contact: {orjson.dumps(RECORD).decode()}"
TOOL = {"type": "function", "function": {"name": "Contact", "parameters": {"type": "object"}}}


def _decide(attempt: int, **kw: Any) -> Decision:
    args: dict[str, Any] = {"seed": 1, "key": "k", "attempt": attempt, "misbehave": 0.5,
                            "misbehave_reminded": 0.5, "reminded": False, "forced": False}
    return decide(**{**args, **kw})


def test_decisions_are_seeded_and_cover_every_behaviour() -> None:
    first = [_decide(a) for a in range(400)]
    assert first == [_decide(a) for a in range(400)]
    assert {d.behaviour for d in first} == {"comply", *BEHAVIOURS}
    assert first != [_decide(a, seed=2) for a in range(400)]


def test_forcing_turns_prose_into_a_call_and_reminders_lower_misbehaviour() -> None:
    forced = [_decide(a, forced=True).behaviour for a in range(400)]
    assert not {"prose", "fenced", "wrapped"} & set(forced)
    calm = [_decide(a, misbehave=1.0, misbehave_reminded=0.0, reminded=True) for a in range(50)]
    assert {d.behaviour for d in calm} == {"comply"}


def test_render_shapes() -> None:
    assert render(RECORD, Decision("comply"), tool_mode=True).calls == (orjson.dumps(
        RECORD).decode(),)
    assert len(render(RECORD, Decision("double"), tool_mode=True).calls) == 2
    assert "{" not in render(RECORD, Decision("prose"), tool_mode=True).text
    coerced = orjson.loads(render(RECORD, Decision("coerce"), tool_mode=False).text)
    assert coerced["age"] == "36"
    cut = render(RECORD, Decision("broken", "truncated", 0.5), tool_mode=False).text
    assert len(cut) < len(orjson.dumps(RECORD))
    assert split("abcdefghij", 4) == ["ab", "cde", "fg", "hij"]


async def _post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> Any:
    async with session.post(url, json=body) as response:
        return response.status, await response.json()


async def test_profiles_and_counters() -> None:
    async with ChaosFake(ChaosSettings(profile="openai")) as fake, aiohttp.ClientSession() as s:
        chat = fake.url + "/v1/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": TASK}], "tools": [TOOL],
                "tool_choice": "required"}
        status, data = await _post(s, chat, body)
        assert status == 200
        call = data["choices"][0]["message"]["tool_calls"][0]["function"]
        assert orjson.loads(call["arguments"]) == RECORD

        _, settings = await _post(s, fake.url + "/_chaos/config", {"profile": "glm"})
        assert settings["profile"] == "glm"
        status, data = await _post(s, fake.url + "/api/paas/v4/chat/completions", body)
        assert (status, data["error"]["message"]) == (400, "Tool choice must be auto")

        await _post(s, fake.url + "/_chaos/config", {"profile": "minimax"})
        status, _ = await _post(s, chat, body)
        assert status == 200

        _, stats = await _post(s, fake.url + "/_chaos/stats", {"reset": True})
        assert stats["requests"] == 3 and stats["rejected"] == 1 and stats["forced"] == 3
        _, stats = await _post(s, fake.url + "/_chaos/stats", {})
        assert stats == {}


async def test_stream_carries_the_output_in_n_fragments() -> None:
    async with ChaosFake(ChaosSettings(chunks=5)) as fake, aiohttp.ClientSession() as s:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": TASK}]}
        async with s.post(fake.url + "/v1/chat/completions", json=body) as response:
            lines = [ln async for ln in response.content if ln.startswith(b"data: {")]
        pieces = [orjson.loads(ln[6:])["choices"][0]["delta"].get("content") for ln in lines]
        content = [p for p in pieces if p]
        assert len(content) == 5
        assert orjson.loads("".join(content)) == RECORD


# --------------------------------------------------------------- misbehaviours of issue 12

NEW = ("markup", "same_index", "reasoning", "literal", "cut")


def test_new_misbehaviours_render_their_kind() -> None:
    markup = render(RECORD, Decision("markup"), tool_mode=True, tool_name="Contact",
                    markup="minimax")
    assert markup.calls == () and '<invoke name="Contact">' in markup.text
    glm = render(RECORD, Decision("markup"), tool_mode=True, tool_name="Contact", markup="glm")
    assert "<arg_key>email</arg_key>" in glm.text
    same = render(RECORD, Decision("same_index"), tool_mode=True)
    assert same.same_index and len(same.calls) == 2
    think = render(RECORD, Decision("reasoning"), tool_mode=False).text
    assert think.startswith("<think>") and '"draft"' in think and think.endswith(
        orjson.dumps(RECORD).decode())
    assert "True" in render({"ok": True}, Decision("literal", "python"), tool_mode=True).calls[0]
    double = render(RECORD, Decision("literal", "double_encoded"), tool_mode=True).calls[0]
    assert orjson.loads(orjson.loads(double)) == RECORD
    assert render(RECORD, Decision("cut", "", 0.5), tool_mode=True).cut == 0.5


class Contact(BaseModel):
    name: str
    email: str
    age: int
    tags: list[str]


@pytest.mark.parametrize("profile", ["openai", "glm", "minimax"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_agentflow_is_valid_or_typed_under_the_new_misbehaviours(profile: str,
                                                                       stream: bool) -> None:
    weights = {b: (1.0 if b in NEW else 0.0) for b in BEHAVIOURS}
    settings = ChaosSettings(profile=profile, seed=3, misbehave=0.8, misbehave_reminded=0.5,
                             weights=weights, chunks=6)
    outcomes: Counter[str] = Counter()
    errors: set[str] = set()
    async with ChaosFake(settings) as fake:
        kw: dict[str, Any] = {"api_key": "k", "stream": stream,
                              "settings": HttpSettings(max_retries=0)}
        if profile == "glm":
            model = get_model("glm:glm-4.6", base_url=fake.url + "/api/paas/v4", **kw)
        elif profile == "minimax":
            model = get_model("openai:MiniMax-M2", base_url=fake.url + "/v1",
                              profile=MINIMAX_PROFILE, **kw)
        else:
            model = get_model("openai:gpt-4o-mini", base_url=fake.url + "/v1", **kw)
        async with ReActAgent("chaos", model) as agent:
            for i in range(24):
                record = {"name": f"P{i}", "email": f"p{i}@example.org", "age": 20 + i,
                          "tags": ["a", f"t{i}"]}
                prompt = f"Extract the contact (ticket {i}): {orjson.dumps(record).decode()}"
                try:
                    reply = await agent.call(prompt, Contact, state=AgentState())
                    value = reply.output
                except AgentflowError as exc:
                    outcomes["typed"] += 1
                    errors.add(type(exc).__name__)
                    continue
                outcomes["valid" if value == Contact(**record) else "wrong"] += 1
        behaviours = {k for k, v in fake.stats.items() if k.startswith("behaviour.") and v}
    assert outcomes["wrong"] == 0 and outcomes["valid"] + outcomes["typed"] == 24
    assert outcomes["valid"] >= 12
    # only cut replies end in an error: every other new misbehaviour is recovered
    # (a whole reply cut mid-JSON: UnexpectedReplyError, retried when retries are on)
    assert errors <= {"TruncatedStreamError", "ServerError", "UnexpectedReplyError"}
    assert len(behaviours & {f"behaviour.{b}" for b in NEW}) >= 3


FAULTS = ("schema", "no_usage", "ctx", "reasoning", "router", "proxy")


@pytest.mark.parametrize("profile", FAULTS)
async def test_agentflow_is_valid_or_typed_under_issue_32_faults(profile: str) -> None:
    """Each fault profile: every call gives the right record or a typed error
    (never a wrong record, never usage said to be 0 tokens when unknown)."""
    from agentflow.events import Complete
    from agentflow.output.config import OutputConfig
    from agentflow.output.strategies import ToolStrategy

    settings = ChaosSettings(profile=profile, seed=3, fault_rate=0.5, chunks=6)
    outcomes: Counter[str] = Counter()
    async with ChaosFake(settings) as fake:
        kw: dict[str, Any] = {"api_key": "k", "settings": HttpSettings(max_retries=0),
                              "stream": profile != "proxy"}  # proxy: whole-reply requests
        if profile == "ctx":
            kw["profile"] = get_model("openai:gpt-4o-mini", api_key="k").profile.with_(
                context_window=settings.n_ctx)
        model = get_model("openai:gpt-4o-mini", base_url=fake.url + "/v1", **kw)
        output = OutputConfig(strategy=ToolStrategy()) if profile == "router" else None
        async with ReActAgent("chaos", model, output=output) as agent:
            for i in range(12):
                record = {"name": f"P{i}", "email": f"p{i}@example.org", "age": 20 + i,
                          "tags": ["a", f"t{i}"]}
                prompt = f"Extract the contact (ticket {i}): {orjson.dumps(record).decode()}"
                complete = None
                try:
                    async for event in agent.stream(prompt, Contact, state=AgentState()):
                        if isinstance(event, Complete):
                            complete = event
                except AgentflowError:
                    outcomes["typed"] += 1
                    continue
                assert complete is not None
                if not complete.usage.known:
                    outcomes["usage_unknown"] += 1
                else:
                    assert complete.usage.total_tokens > 0
                value = complete.output
                outcomes["valid" if value == Contact(**record) else "wrong"] += 1
        faults = sum(v for k, v in fake.stats.items() if k.startswith("fault."))
        rejected = fake.stats["rejected"]
    assert outcomes["wrong"] == 0 and outcomes["valid"] + outcomes["typed"] == 12
    if profile == "ctx":
        assert outcomes["typed"] == 12 and faults >= 12
    else:
        assert outcomes["valid"] >= 10
    if profile in ("no_usage", "proxy"):  # proxy: streams that carry no usage
        assert outcomes["usage_unknown"] == outcomes["valid"]
    if profile in ("reasoning", "router"):
        assert faults >= 3
    if profile == "schema":
        assert rejected >= 1
