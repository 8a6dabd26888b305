"""Shared helpers for the locator tests: learn rules, score one field, read what a rule
offers, extract one document with a model that answers as told."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.extraction.confidence import field_confidence
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples
from agentflow.testing import FunctionModel


def learned_rules(examples: list[Example], model: type[BaseModel]) -> dict[str, Locator]:
    """The locators learned from ``examples`` for ``model``."""
    return learn_locators(check_examples(examples, model), model)


def scored(model: BaseModel, doc: str, rules: dict[str, Locator], name: str) -> float:
    """The confidence of field ``name`` of ``model`` in ``doc`` under ``rules[name]`` alone."""
    return field_confidence(model, doc, {}, {name: rules[name]})[0][name]


def offered_node(rule: Locator, doc: str) -> Any:
    """The grammar node ``rule`` offers for its field of ``doc`` (a nullable grounded string)."""
    schema = {"type": "object", "properties": {rule.field: {"anyOf": [
        {"type": "string", "x-grounded": True}, {"type": "null"}]}}}
    return apply_locators(schema, {rule.field: rule}, doc)["properties"][rule.field]


def run_one(answer: dict[str, Any], doc: str, output: type[BaseModel],
            examples: list[Example]) -> Any:
    """The one result of ``extract_many`` on ``doc`` with a model that answers ``answer``."""
    async def go() -> Any:
        model = FunctionModel(lambda request: json.dumps(answer))
        (result,) = [r async for r in extract_many(model, [doc], output, examples=examples)]
        return result

    return asyncio.run(go())
