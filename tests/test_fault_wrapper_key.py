"""Model fault: a wrapped output written under a key of the model's choosing.

An output type that is no object (``list[Contact]``, an ``Enum``, ``int``)
travels as ``{"result": <value>}``. Models name that key after the content
instead: ``{"contacts": [...]}``, ``{"items": [...]}``, ``{"sentiment":
"positive"}`` (the wrapper key around the output reported against
pydantic-ai and instructor). Validation said "result: Field required", the
model kept its key, and the call failed on an answer with one reading. The
one value of a one-key object is now read as the result when the type takes
no object and the value is none (``output._wrapper_key``); validation judges
it. A string for a type that takes any text, a nested object, and an object
with more keys are still asked again.

Served by the OpenAI fake: native schema output, tool and prompt strategies."""

from __future__ import annotations

import enum
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


class Contact(BaseModel):
    name: str
    age: int


class Sentiment(enum.Enum):
    positive = "positive"
    negative = "negative"


async def _call(strategy: OutputStrategy, output: Any, *replies: FakeReply) -> tuple[Any, int]:
    return await call_output(strategy, output, "Read it.", *replies)


@STRATEGIES
@pytest.mark.parametrize(("output", "written", "read"), [
    (list[Contact], {"contacts": [{"name": "Ann", "age": 30}]}, [Contact(name="Ann", age=30)]),
    (list[int], {"items": [1, 2]}, [1, 2]),
    (Sentiment, {"sentiment": "positive"}, Sentiment.positive),
    (int, {"count": 7}, 7),
])
async def test_the_one_value_under_another_key_is_the_result(
        strategy: OutputStrategy, output: Any, written: dict[str, Any], read: Any) -> None:
    value, requests = await _call(strategy, output, reply_with(strategy, written))
    assert value == read and requests == 1


@pytest.mark.parametrize(("output", "written"), [
    (str, {"error": "no answer"}),
    (list[int], {"items": [1], "note": "x"}),
    (list[int], {"items": {"values": [1]}}),
    (Sentiment, {"sentiment": "neutral"}),
])
async def test_other_objects_are_still_asked_again(output: Any, written: dict[str, Any]) -> None:
    bad = reply_with(PromptStrategy(), written)
    with pytest.raises(StructuredOutputValidationError):
        await _call(PromptStrategy(), output, bad, bad, bad)


async def test_a_dict_output_keeps_its_one_key() -> None:
    value, _ = await _call(PromptStrategy(), dict[str, list[int]],
                           reply_with(PromptStrategy(), {"items": [1, 2]}))
    assert value == {"items": [1, 2]}
