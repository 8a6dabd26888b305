"""Approvals between users of one shared agent: a decision applies only to
the conversation the app loads by its own key (the user's), so user B
cannot approve or refuse user A's pending call, even knowing its id (the
tool-call ids are the vendor's, or agentflow's process prefix and counter:
never a capability). B's attempt runs nothing and leaves A's call waiting;
A's own decision then runs it, once.

Served by the OpenAI fake (tool calls with the ids it chose) through
``stream_with_store`` on a SQLite store keyed per user.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentflow import InvalidInputError, ReActAgent
from agentflow.approvals import Approve, Refuse, RequireApproval, pending_calls
from agentflow.events import Complete, Event
from agentflow.providers.registry import get_model
from agentflow.web import SQLiteStateStore, stream_with_store
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake

sent: list[str] = []


def send_money(to: str) -> str:
    """Send the user's money to ``to``."""
    sent.append(to)
    return f"sent to {to}"


def _answer(body: Any) -> FakeReply:
    last = body["messages"][-1]
    user = next(m for m in body["messages"] if m["role"] == "user")["content"]
    if last["role"] == "tool":
        return FakeReply(text=f"done for {user}: {last['content']}")
    who = user.split()[0]
    return FakeReply(tool_calls=[FakeCall("send_money", {"to": f"friend-of-{who}"},
                                          id=f"call_{who}_1")])


async def _drain(events: Any) -> list[Event]:
    return [event async for event in events]


@pytest.mark.parametrize("decision", [Approve(), Refuse("no")], ids=["approve", "refuse"])
async def test_user_b_cannot_decide_user_as_pending_call(tmp_path: Path,
                                                         decision: Any) -> None:
    sent.clear()
    async with OpenAIFake() as fake:
        fake.default = _answer
        model = get_model("openai:gpt-4o-mini", base_url=fake.url, api_key="sk-test")
        agent = ReActAgent("shared", model, tools=[send_money],
                           middleware=[RequireApproval({"send_money"})])
        async with SQLiteStateStore(tmp_path / "s.db") as store:
            keys = {"ann": "user-ann:c1", "bob": "user-bob:c1"}  # the app's keys: user + id
            for who, key in keys.items():
                await _drain(stream_with_store(agent, store, key, f"{who} pays"))
            ann_calls = pending_calls((await store.load(keys["ann"])).state)
            assert [c.id for c in ann_calls] == ["call_ann_1"]

            with pytest.raises(InvalidInputError):  # bob, on his own key (the app's)
                await _drain(stream_with_store(agent, store, keys["bob"], None,
                                               decisions={"call_ann_1": decision}))
            with pytest.raises(InvalidInputError, match="no pending call call_ann_1"):
                await _drain(stream_with_store(agent, store, keys["bob"], None, decisions={
                    "call_bob_1": Approve(), "call_ann_1": decision}))
            assert sent == []  # nothing ran, not even bob's own call
            assert [c.id for c in pending_calls((await store.load(keys["ann"])).state)] == [
                "call_ann_1"]  # ann's call still waits for ann
            assert [c.id for c in pending_calls((await store.load(keys["bob"])).state)] == [
                "call_bob_1"]  # and bob's for bob

            events = await _drain(stream_with_store(agent, store, keys["ann"], None,
                                                    decisions={"call_ann_1": decision}))
        await agent.aclose()
    done = next(e for e in events if isinstance(e, Complete))
    if isinstance(decision, Approve):
        assert sent == ["friend-of-ann"]  # once, for ann
        assert done.message.text == "done for ann pays: sent to friend-of-ann"
    else:
        assert sent == []
        assert "Refused: no" in done.message.text
