"""Shared helpers for the locator tests: learn rules, score one field, read what a rule
offers, extract one document with a model that answers as told; a gettext catalogue's
header and its team and language as an example."""

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


class PoHeader(BaseModel):
    """A gettext catalogue header's ``Language-Team`` and ``Language``."""

    team: str | None = None
    language: str | None = None


def po_catalogue(project: str, team: str, language: str, *, comment: str = "",
                 message: tuple[str, str] | None = None) -> str:
    """A gettext catalogue (``.po``): a first comment line ``# comment``
    (none where empty), its header (``Project-Id-Version: project``,
    ``Language-Team: team``, ``Language: language``, ``MIME-Version``, each
    quoted up to its ``\\n``), and then ``message``'s msgid and msgstr."""
    text = (f"# {comment}\n" if comment else "") + (
        f'msgid ""\nmsgstr ""\n"Project-Id-Version: {project}\\n"\n'
        f'"Language-Team: {team}\\n"\n"Language: {language}\\n"\n"MIME-Version: 1.0\\n"\n')
    if message is not None:
        text += f'\nmsgid "{message[0]}"\nmsgstr "{message[1]}"\n'
    return text


def po_example(project: str, team: str, language: str, *, comment: str = "",
               message: tuple[str, str] | None = None) -> Example:
    """``po_catalogue`` as an example that fills ``PoHeader`` with its team and language."""
    return Example(po_catalogue(project, team, language, comment=comment, message=message),
                   PoHeader(team=team, language=language))
