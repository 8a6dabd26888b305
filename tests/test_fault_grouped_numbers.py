"""Model fault: a number written with thousands separators.

Asked for ``count: int`` or ``amount: float``, models copy the figure as the
document writes it: ``"1,200"``, ``"12,345,678"``, ``"1,200.50"``. Validation
refused it ("unable to parse string as an integer"), a retry (a request, its
tokens and latency) was spent on a value with one reading, and a model that
copied it again failed the call (C27's kind: a coercible value is read, only
one that cannot be is asked again). Such a string is now read as its number
where that is its one reading (``output._json_lax.grouped_number``), on every
output strategy and for function tools' arguments alike: with a decimal point
after the groups, or more than one group, always; a single group
(``"1,200"``) for an integer only, since for a float it may be 1.2 written
with a decimal comma. Currency signs and units (``"$30"``) and a field that
takes a string are left as written.

Served by the OpenAI fake: native schema output, tool and prompt strategies."""

from __future__ import annotations

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


class Line(BaseModel):
    item: str
    count: int
    amount: float
    stock: int | None = None


class Code(BaseModel):
    code: str
    count: int | str


async def _call(strategy: OutputStrategy, schema: type[BaseModel],
                *replies: FakeReply) -> tuple[Any, int]:
    return await call_output(strategy, schema, "Read the invoice line.", *replies)


@STRATEGIES
async def test_grouped_numbers_are_read_without_a_retry(strategy: OutputStrategy) -> None:
    value = {"item": "bolts", "count": "12,345,678", "amount": "1,200.50", "stock": "1,200"}
    output, requests = await _call(strategy, Line, reply_with(strategy, value))
    assert output == Line(item="bolts", count=12345678, amount=1200.5, stock=1200)
    assert requests == 1


@STRATEGIES
async def test_one_group_for_a_float_is_asked_again(strategy: OutputStrategy) -> None:
    first = reply_with(strategy, {"item": "bolts", "count": 3, "amount": "1,200"})
    second = reply_with(strategy, {"item": "bolts", "count": 3, "amount": 1200})
    output, requests = await _call(strategy, Line, first, second)
    assert output.amount == 1200.0 and requests == 2


@pytest.mark.parametrize("amount", ["$30", "30 USD", "1,20", "1,2000", "12,34,567"])
async def test_signs_units_and_other_groupings_are_never_read(amount: str) -> None:
    bad = reply_with(PromptStrategy(), {"item": "bolts", "count": 3, "amount": amount})
    with pytest.raises(StructuredOutputValidationError):
        await _call(PromptStrategy(), Line, bad, bad, bad)


async def test_a_field_that_takes_a_string_keeps_it() -> None:
    value = {"code": "1,200", "count": "1,200"}
    output, _ = await _call(PromptStrategy(), Code, reply_with(PromptStrategy(), value))
    assert output == Code(code="1,200", count="1,200")


async def test_a_function_tools_arguments_are_read_the_same_way() -> None:
    seen: list[int] = []

    @tool
    def restock(count: int) -> str:
        """Order ``count`` more units."""
        seen.append(count)
        return "ordered"

    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("restock", '{"count": "1,200"}')]),
                 FakeReply(text="Done."))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            await ReActAgent("s", model, tools=[restock]).call("Restock bolts.")
    assert seen == [1200]
