"""Model fault: "no value" written as text for a field that takes none.

Asked for ``age: int | None`` or ``day: date | None``, models write the
absence of a value as ``""`` (the usual answer where a strict dialect made
every field required), ``"null"``, ``"None"`` or ``"N/A"``. Validation
refused it ("unable to parse string as an integer", "input is too short"),
the model wrote the same on every retry, and the call failed on a value with
one reading. Where the field's schema takes no such string (a number, a
boolean, a date or email string, an enum without that member) the word is now
read as ``null`` when the field allows it, or left out so an optional
field's default applies (``output._absent``), for outputs on every strategy
and for function tools' arguments. A field that takes the string keeps it
(``str | None`` keeps ``""`` and ``"None"``), and a required field that takes
no ``null`` still asks the model again.

Served by the OpenAI fake: native schema output, tool and prompt strategies."""

from __future__ import annotations

import datetime
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agentflow import (
    PromptStrategy,
    ReActAgent,
    StructuredOutputValidationError,
)
from agentflow.output.strategies import OutputStrategy
from agentflow.providers.openai import OpenAIChatModel
from agentflow.tools import tool
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.output_scenarios import STRATEGIES, call_output, reply_with
from tests.provider_scenarios import FAST


class Person(BaseModel):
    name: str
    age: int | None
    born: datetime.date | None = None
    member: bool | None = None
    level: Literal["none", "low"] | None = None
    visits: int = 0
    note: str | None = None


class Count(BaseModel):
    name: str
    count: int


async def _call(strategy: OutputStrategy, schema: type[BaseModel],
                *replies: FakeReply) -> tuple[Any, int]:
    return await call_output(strategy, schema, "Read the record.", *replies)


@STRATEGIES
async def test_no_value_words_are_null_or_the_default(strategy: OutputStrategy) -> None:
    value = {"name": "Ann", "age": "", "born": "N/A", "member": "null", "level": "None",
             "visits": " ", "note": ""}
    output, requests = await _call(strategy, Person, reply_with(strategy, value))
    assert output == Person(name="Ann", age=None, born=None, member=None, level="none",
                            visits=0, note="")
    assert requests == 1


async def test_a_field_that_takes_the_word_keeps_it() -> None:
    value = {"name": "None", "age": 3, "note": "null"}
    output, _ = await _call(PromptStrategy(), Person, reply_with(PromptStrategy(), value))
    assert output.name == "None" and output.note == "null"


async def test_a_required_field_without_null_is_asked_again() -> None:
    first = reply_with(PromptStrategy(), {"name": "Ann", "count": ""})
    second = reply_with(PromptStrategy(), {"name": "Ann", "count": 2})
    output, requests = await _call(PromptStrategy(), Count, first, second)
    assert output == Count(name="Ann", count=2) and requests == 2
    with pytest.raises(StructuredOutputValidationError, match="count"):
        await _call(PromptStrategy(), Count, first, first, first)


async def test_a_function_tools_arguments_are_read_the_same_way() -> None:
    seen: list[Any] = []

    @tool
    def search(query: str, limit: int | None = None, since: datetime.date | None = None) -> str:
        """Search the archive."""
        seen.append((query, limit, since))
        return "nothing"

    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall(
            "search", '{"query": "bolts", "limit": "", "since": "null"}')]),
            FakeReply(text="Done."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            await ReActAgent("s", model, tools=[search]).call("Search bolts.")
    assert seen == [("bolts", None, None)]
