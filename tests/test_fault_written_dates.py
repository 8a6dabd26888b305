"""Model fault: a date copied in the document's own form.

Asked for ``day: date``, models copy the date as written: ``"March 5,
2024"``, ``"5th of March 2024"``, ``"2024/03/05"``. pydantic reads ISO 8601
only ("invalid character in year"), a retry was spent on a value with one
reading, and a model that copied it again failed the call. A string that is
one date as a whole with one reading is now read as that date
(``output._written_dates``, the forms ``grounding.date_readings`` reads), on
every output strategy and for function tools' arguments; ``"05/03/2024"``
(5 March or 3 May), text around a date and a datetime are still asked again.

Served by the OpenAI fake: native schema output, tool and prompt strategies."""

from __future__ import annotations

import datetime
from typing import Any

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

MARCH_5 = datetime.date(2024, 3, 5)


class Invoice(BaseModel):
    issued: datetime.date
    due: datetime.date | None = None
    paid: list[datetime.date] = []


class Loose(BaseModel):
    when: datetime.date | str
    at: datetime.datetime | None = None


async def _call(strategy: OutputStrategy, schema: type[BaseModel],
                *replies: FakeReply) -> tuple[Any, int]:
    return await call_output(strategy, schema, "Read the invoice.", *replies)


@STRATEGIES
async def test_a_date_with_one_reading_is_read(strategy: OutputStrategy) -> None:
    value = {"issued": "March 5, 2024", "due": " 5th of March 2024 ",
             "paid": ["2024/03/05", "13/03/2024"]}
    output, requests = await _call(strategy, Invoice, reply_with(strategy, value))
    assert output == Invoice(issued=MARCH_5, due=MARCH_5,
                             paid=[MARCH_5, datetime.date(2024, 3, 13)])
    assert requests == 1


@pytest.mark.parametrize("issued", ["05/03/2024", "on March 5, 2024", "5 mars 2024"])
async def test_two_readings_or_other_text_are_asked_again(issued: str) -> None:
    bad = reply_with(PromptStrategy(), {"issued": issued})
    with pytest.raises(StructuredOutputValidationError, match="issued"):
        await _call(PromptStrategy(), Invoice, bad, bad, bad)


async def test_a_field_that_takes_other_text_or_a_time_keeps_it() -> None:
    first = reply_with(PromptStrategy(), {"when": "March 5, 2024", "at": "March 5, 2024"})
    second = reply_with(PromptStrategy(), {"when": "March 5, 2024"})
    output, requests = await _call(PromptStrategy(), Loose, first, second)
    assert output == Loose(when="March 5, 2024") and requests == 2


async def test_a_function_tools_arguments_are_read_the_same_way() -> None:
    seen: list[datetime.date] = []

    @tool
    def book(day: datetime.date) -> str:
        """Book the room for ``day``."""
        seen.append(day)
        return "booked"

    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("book", '{"day": "March 5, 2024"}')]),
                 FakeReply(text="Done."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            await ReActAgent("s", model, tools=[book]).call("Book it.")
    assert seen == [MARCH_5]
