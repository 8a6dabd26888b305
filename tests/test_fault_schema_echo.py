"""Model fault: the output's schema written back instead of a value.

Models (small local ones, and any given the schema in the prompt) answer
with the schema's ``properties`` instead of values for them. The object
under one undeclared key (``{"properties": {...}}``) is read as the output
when it holds the required keys (a value wrapped in the schema's own word,
pydantic/pydantic-ai#81), so where every field takes an object
(``spec: dict``) the echo ``{"properties": {"spec": {"type": "object",
...}}}`` was read as ``spec={"type": "object", ...}`` and reported ``ok``:
the schema taken for the answer. An object whose every value is the
schema's node for its key, or JSON Schema words naming a type, is now no
answer (``output._wrapper_key.schema_echo``): the model is asked again. So
is an output whose every field holds exactly the schema's node for it (the
properties written as the output), with an error saying so. Values under
``properties`` are still read.

Served by the OpenAI fake: native schema output, tool and prompt strategies."""

from __future__ import annotations

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


class Pump(BaseModel):
    spec: dict[str, Any]
    parts: list[dict[str, Any]] = []


async def _call(strategy: OutputStrategy, *replies: FakeReply) -> tuple[Any, int]:
    return await call_output(strategy, Pump, "Describe the pump.", *replies)


@STRATEGIES
@pytest.mark.parametrize("echo", [
    {"properties": Pump.model_json_schema()["properties"]},
    {"properties": {"spec": {"type": "object"}}},
    {"properties": {"spec": {"type": "object", "additionalProperties": True},
                    "parts": {"type": "array", "items": {"type": "object"}}}},
], ids=["own", "typed", "both"])
async def test_the_schema_written_back_is_asked_again(strategy: OutputStrategy,
                                                      echo: dict[str, Any]) -> None:
    value = {"spec": {"kind": "rotary"}}
    output, requests = await _call(strategy, reply_with(strategy, echo),
                                   reply_with(strategy, value))
    assert output == Pump(spec={"kind": "rotary"}) and requests == 2


async def test_values_under_properties_are_still_read() -> None:
    wrapped = {"properties": {"spec": {"kind": "rotary", "type": "pump"}}}
    output, requests = await _call(PromptStrategy(), reply_with(PromptStrategy(), wrapped))
    assert output == Pump(spec={"kind": "rotary", "type": "pump"}) and requests == 1


@STRATEGIES
async def test_the_properties_written_as_the_output_are_named(strategy: OutputStrategy) -> None:
    echo = Pump.model_json_schema()["properties"]
    output, requests = await _call(strategy, reply_with(strategy, echo),
                                   reply_with(strategy, {"spec": {"kind": "rotary"}}))
    assert output == Pump(spec={"kind": "rotary"}) and requests == 2


async def test_the_echo_error_names_the_keys() -> None:
    echo = reply_with(PromptStrategy(), {"spec": Pump.model_json_schema()["properties"]["spec"]})
    with pytest.raises(StructuredOutputValidationError, match="schema's own properties"):
        await _call(PromptStrategy(), echo, echo, echo)
