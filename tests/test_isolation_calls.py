"""Fifty users at once through one shared agent's ``call`` and ``stream``:
the OpenAI adapter against a fake vendor server on 127.0.0.1
(``tests.isolation_users``). Every request body the vendor receives holds
its own user's marker only, and every reply (the output, the tool results,
the events, the usage, the spans) goes to its own caller only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentflow import Complete, ReActAgent
from agentflow.output.examples import Example
from agentflow.providers.registry import get_model
from agentflow.telemetry import Telemetry
from agentflow.web import event_to_dict
from tests.isolation_users import (
    MARK,
    USERS,
    Note,
    Vendor,
    held_vendor,
    is_warm_up,
    marker,
    marks,
    note_tool,
    shared_agent,
    usage_of,
)


@pytest.fixture
async def vendor() -> AsyncIterator[Vendor]:
    async with held_vendor() as running:
        yield running


async def test_fifty_calls_and_streams_of_one_agent_stay_apart(vendor: Vendor) -> None:
    agent = shared_agent(vendor)
    got: dict[str, Any] = {}
    spent: dict[str, tuple[int, int, int]] = {}

    async def user(n: int) -> None:
        mark = marker(n)
        text = f"I am {mark}; fetch my note"
        if n % 2:
            async for event in agent.stream(text, Note):
                assert marks(event_to_dict(event)) <= {mark}, event
                if isinstance(event, Complete):
                    got[mark] = event.output
                    usage = event.usage
                    spent[mark] = (usage.input_tokens, usage.output_tokens, usage.requests)
        else:
            got[mark] = (await agent.call(text, Note)).output

    async with asyncio.timeout(15), asyncio.TaskGroup() as tg:
        for n in range(USERS):
            tg.create_task(user(n))
    await agent.aclose()
    vendor.check()
    assert got == {marker(n): Note(user=marker(n), secret=f"note-of-{marker(n)}")
                   for n in range(USERS)}
    assert spent == {marker(n): (2 * usage_of(marker(n))[0], 2 * usage_of(marker(n))[1], 2)
                     for n in range(1, USERS, 2)}  # each stream counts its own two requests


async def test_fifty_calls_with_their_own_examples_send_their_own_only(
        vendor: Vendor) -> None:
    """Each user's call brings its own worked example (``examples=``, user
    data: a tuple, the form a per-call set-up may be kept for, and a list):
    every request holds its own user's example only, however the engine
    keeps a call's set-up between calls."""
    agent = shared_agent(vendor)
    got: dict[str, Any] = {}

    async def user(n: int) -> None:
        mark = marker(n)
        shown = Example(f"{mark} asked for the note of {mark}",
                        Note(user=mark, secret=f"example-secret-of-{mark}"))
        examples = (shown,) if n % 2 else [shown]
        reply = await agent.call(f"I am {mark}; fetch my note", Note, examples=examples)
        got[mark] = reply.output

    async with asyncio.timeout(60), asyncio.TaskGroup() as tg:
        for n in range(USERS):
            tg.create_task(user(n))
    await agent.aclose()
    vendor.check()
    for body in vendor.fake.bodies:
        text = orjson.dumps(body).decode()
        if not is_warm_up(body):
            assert text.count("example-secret-of-") == 1  # one example: its own user's
    assert got == {marker(n): Note(user=marker(n), secret=f"note-of-{marker(n)}")
                   for n in range(USERS)}


async def test_fifty_calls_spans_hold_their_own_call_only(vendor: Vendor) -> None:
    """With content recorded, every span (the call's, each model request's,
    each tool run's) holds its own user's marker only, and each request and
    tool span is a child of its own call's span."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = get_model("openai:gpt-4o-mini", base_url=vendor.fake.url, api_key="sk-test")
    agent = ReActAgent("shared", model, tools=[note_tool],
                       telemetry=Telemetry(tracer_provider=provider, record_content=True))

    async def user(n: int) -> None:
        text = f"I am {marker(n)}; fetch my note"
        if n % 2:
            async for _ in agent.stream(text, Note):
                pass
        else:
            await agent.call(text, Note)

    async with asyncio.timeout(15), asyncio.TaskGroup() as tg:
        for n in range(USERS):
            tg.create_task(user(n))
    await agent.aclose()
    vendor.check()
    spans = exporter.get_finished_spans()
    calls = {s.context.span_id: s for s in spans if s.name.startswith("invoke_agent")}
    assert len(calls) == USERS
    owner: dict[int, str] = {}
    for span in spans:
        if span.name.startswith("invoke_agent"):
            continue
        assert span.parent is not None and span.parent.span_id in calls
        marks = set(MARK.findall(orjson.dumps(dict(span.attributes or {})).decode()))
        assert len(marks) == 1, span.attributes  # its own user's text only
        mark = marks.pop()
        assert owner.setdefault(span.parent.span_id, mark) == mark  # one user per call
    assert len(set(owner.values())) == USERS
    assert len([s for s in spans if s.name.startswith("execute_tool")]) == USERS
