"""A value a field's own learned locator reads where it cuts a token is whole
there (newcomer23 probe, sshd ``Port=2022``): examples like ``Port 2222``
make the field whole-token, the tokenizer keeps ``Port=2022`` one token (on
purpose: ``urgency=medium``), and the rule reads ``2022`` after the ``=``;
that place's edges are the rule's edges, so the value is accepted there, and
nowhere else: any other cut of a token is refused as before."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.errors import GroundingError
from agentflow.extraction.defaults import EXTRACTION_DEFAULT
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locator_rule import VALUES_KEY
from agentflow.grounding.locator_whole import READ_KEY
from agentflow.grounding.output_checks import check_output
from agentflow.model import ModelProfile
from agentflow.output.grammar import substring_grammar
from agentflow.providers._local_grammar import JSON_SEPARATORS
from agentflow.testing import FunctionModel
from tests.locator_support import learned_rules


class Sshd(BaseModel):
    port: str | None = Field(None, description="the first Port value")
    permit_root_login: str | None = Field(None, description="PermitRootLogin value")


SSHD = [
    Example("# build host\nPort 2222\nPermitRootLogin prohibit-password\n",
            Sshd(port="2222", permit_root_login="prohibit-password")),
    Example("Port 22\nAddressFamily inet\nPermitRootLogin no\nUsePAM yes\n",
            Sshd(port="22", permit_root_login="no")),
]

GLUED = "Port=2022\nPermitRootLogin=without-password\nUsePAM yes\n"


def _check(value: Sshd, text: str, learned: bool = True) -> dict[str, list[tuple[int, int]]]:
    rules = learned_rules(SSHD, Sshd) if learned else None
    return check_output(value, Sshd, EXTRACTION_DEFAULT, text, locators=rules)


def test_the_value_the_rule_reads_after_a_glued_separator_is_whole() -> None:
    spans = _check(Sshd(port="2022", permit_root_login="without-password"), GLUED)
    assert spans == {"port": [(5, 9)], "permit_root_login": [(26, 42)]}


def test_without_the_rule_the_cut_is_refused() -> None:
    with pytest.raises(GroundingError, match="cuts through the token 'Port=2022'"):
        _check(Sshd(port="2022"), GLUED, learned=False)


def test_a_cut_the_rule_does_not_read_is_refused() -> None:
    with pytest.raises(GroundingError, match="cuts through the token"):
        _check(Sshd(permit_root_login="password"), GLUED)  # a part of the rule's value
    with pytest.raises(GroundingError, match="cuts through the token 'Listen=2022'"):
        _check(Sshd(port="2022"), "Listen=2022\nPort=22\n")  # another label's value
    with pytest.raises(GroundingError, match="cuts through the token"):
        _check(Sshd(port="2022"), "Port=2022=2022\n")  # the line writes it twice



def test_an_extraction_on_a_grammar_model_keeps_the_value_and_is_sure_of_it() -> None:
    profile = ModelProfile(supports_tools=False, native_output="json_schema",
                           schema_dialect="local", substring_grammar=True)
    answer = json.dumps({"port": "2022", "permit_root_login": "without-password"})
    model = FunctionModel(lambda request: answer, profile=profile)

    async def go() -> list[Any]:
        return [r async for r in extract_many(model, [GLUED], Sshd, examples=SSHD)]

    (result,) = asyncio.run(go())
    assert result.ok, result.error
    assert result.output == Sshd(port="2022", permit_root_login="without-password")
    assert not result.dropped and not result.needs_review
    assert min(result.confidence.values()) >= 0.9


def test_the_grammar_offers_the_value_the_rule_reads_in_a_token() -> None:
    rules = learned_rules(SSHD, Sshd)
    schema = {"type": "object", "properties": {
        name: {"type": "string", "x-grounded": "whole_tokens"} for name in ("port",
                                                                              "permit_root_login")}}
    offered = apply_locators(schema, rules, GLUED)["properties"]
    assert offered["port"][READ_KEY] is True and offered["port"][VALUES_KEY] == ["2022"]
    grammar = substring_grammar(offered["port"], GLUED, JSON_SEPARATORS)
    assert grammar is not None and '("2022")' in grammar
    other = apply_locators(schema, rules, "Port 2022\n")["properties"]["port"]
    assert READ_KEY not in other  # a whole token: offered as before
