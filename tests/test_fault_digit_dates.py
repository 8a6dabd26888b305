"""Model fault: a year or a compact date written for a date or datetime.

Asked for ``at: datetime`` or ``day: date``, models write ``"2024"`` (only
the year is known) or ``"20240305"`` (the document's compact form).
pydantic reads a string of digits as Unix seconds, in lax and strict JSON
mode alike: ``"2024"`` became 1970-01-01T00:33:44Z and ``"20131200"`` the
date 1970-08-22, reported ``ok`` (a wrong value taken for a right one; a
JSON number was already refused, ``NUMBER_IS_NO_DATE``). Digits alone
written for a date, datetime or time are now refused the same way, naming
the field and the digits, so the model is asked again for ISO 8601 text; a
field that takes a string or a number keeps them.

Served by the OpenAI fake: native schema output, tool and prompt strategies."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import (
    PromptStrategy,
    StructuredOutputValidationError,
)
from agentflow.output.strategies import OutputStrategy
from tests.fakes.base import FakeReply
from tests.output_scenarios import STRATEGIES, call_output, reply_with

UTC = datetime.UTC


class Visit(BaseModel):
    at: datetime.datetime
    day: datetime.date | None = None
    days: list[datetime.date] = []


class Loose(BaseModel):
    when: str | datetime.datetime
    year: int | datetime.date


async def _call(strategy: OutputStrategy, schema: type[BaseModel],
                *replies: FakeReply) -> tuple[Any, int]:
    return await call_output(strategy, schema, "When was the visit?", *replies)


@STRATEGIES
@pytest.mark.parametrize("written", [{"at": "2024"}, {"at": "20240305"},
                                     {"at": "2024-03-05T10:00:00Z", "day": "20131200"},
                                     {"at": "2024-03-05T10:00:00Z", "days": ["1709596800"]}])
async def test_digits_for_a_date_are_asked_again(strategy: OutputStrategy,
                                                 written: dict[str, Any]) -> None:
    right = {"at": "2024-03-05T10:00:00Z", "day": "2024-03-05"}
    output, requests = await _call(strategy, Visit, reply_with(strategy, written),
                                   reply_with(strategy, right))
    assert output == Visit(at=datetime.datetime(2024, 3, 5, 10, tzinfo=UTC),
                           day=datetime.date(2024, 3, 5))
    assert requests == 2


async def test_retries_spent_on_digits_name_the_field_and_the_digits() -> None:
    bad = reply_with(PromptStrategy(), {"at": "2024"})
    with pytest.raises(StructuredOutputValidationError, match=r'at: .*digits "2024"'):
        await _call(PromptStrategy(), Visit, bad, bad, bad)


async def test_a_field_that_takes_a_string_or_a_number_keeps_the_digits() -> None:
    value = {"when": "2024", "year": "2024"}
    output, requests = await _call(PromptStrategy(), Loose, reply_with(PromptStrategy(), value))
    assert output == Loose(when="2024", year=2024) and requests == 1
