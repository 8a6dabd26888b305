"""Model fault: a function tool's argument of the wrong JSON kind, run as a
wrong value.

pydantic's lax mode reads ``true`` as the integer 1 and digits as Unix
seconds for a datetime. An output refused both (``output.json_kinds``), but
a function tool's arguments were validated lax without that check: ``{"n":
true}`` ran ``reserve(n=1)`` and ``{"at": "2024"}`` ran it for
1970-01-01T00:33:44Z (a wrong value passed to the function; C27's kind:
validate before use, coerce only what has one reading). The same check now
runs on every function tool's arguments: the model gets an error result
naming each field, and the tool runs with what it writes next. ``"3"`` for
an integer and ``"yes"`` for a boolean are still read.

Served by the OpenAI fake, whole."""

from __future__ import annotations

import datetime
from typing import Any

from agentflow import ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from agentflow.tools import tool
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


async def test_a_boolean_for_a_number_and_digits_for_a_date_are_refused() -> None:
    seen: list[tuple[Any, ...]] = []

    @tool
    def reserve(n: int, at: datetime.datetime, quiet: bool = False) -> str:
        """Reserve ``n`` seats at ``at``."""
        seen.append((n, at, quiet))
        return "reserved"

    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("reserve", '{"n": true, "at": "2024"}')]),
                 FakeReply(tool_calls=[FakeCall(
                     "reserve", '{"n": "3", "at": "2024-03-05T10:00:00Z", "quiet": "yes"}')]),
                 FakeReply(text="Done."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            await ReActAgent("s", model, tools=[reserve]).call("Reserve three seats.")
        error = str(fake.requests[1].body["messages"][-1]["content"])
    assert seen == [(3, datetime.datetime(2024, 3, 5, 10, tzinfo=datetime.UTC), True)]
    assert "n: Input should be an integer, got the boolean true" in error
    assert 'at: Input should be a date or time as ISO 8601 text' in error
