"""Model fault: the output's list written without the object around it.

Asked for an object whose one field is a list (``Scores(items:
list[Score])``, the usual way to ask for many records), models answer the
bare JSON array ``[{...}, {...}]``: the object's only reading, written
without its wrapper. Validation refused it ("Input should be a valid
dictionary"), every retry spent the same way, and the call failed
(guardrails-ai/guardrails#594; the array-versus-object wrapper every
structured-output API forces, podly-pure-podcasts/podly_pure_podcasts#89).
A bare array is now read as that field when it is the object's only array
property and nothing else is required; any other object still asks the
model again.

Served by the OpenAI fake: native schema output, tool and prompt strategies."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentflow import (
    NativeStrategy,
    StructuredOutputValidationError,
)
from agentflow.output.strategies import OutputStrategy
from tests.fakes.base import FakeReply
from tests.output_scenarios import STRATEGIES, call_output, reply_with

ITEMS = [{"name": "alpha", "n": 1}, {"name": "beta", "n": 2}]


class Score(BaseModel):
    name: str
    n: int


class Scores(BaseModel):
    items: list[Score]
    note: str | None = None


class Report(BaseModel):
    title: str
    items: list[Score]


async def _call(strategy: OutputStrategy, schema: type[BaseModel],
                *replies: FakeReply) -> tuple[BaseModel, int]:
    return await call_output(strategy, schema, "Score them.", *replies)


@STRATEGIES
async def test_a_bare_array_is_the_objects_list(strategy: OutputStrategy) -> None:
    output, requests = await _call(strategy, Scores, reply_with(strategy, ITEMS))
    assert output == Scores(items=[Score(**i) for i in ITEMS])
    assert requests == 1


@STRATEGIES
async def test_an_object_requiring_more_asks_again(strategy: OutputStrategy) -> None:
    bare = reply_with(strategy, ITEMS)
    whole = reply_with(strategy, {"title": "t", "items": ITEMS})
    output, requests = await _call(strategy, Report, bare, whole)
    assert output == Report(title="t", items=[Score(**i) for i in ITEMS])
    assert requests == 2


async def test_retries_spent_on_arrays_raise_the_validation_error() -> None:
    bare = reply_with(NativeStrategy(), ITEMS)
    with pytest.raises(StructuredOutputValidationError):
        await _call(NativeStrategy(), Report, bare, bare, bare)
