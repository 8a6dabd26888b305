"""A grounded reply's budget follows its source (issue 30, item 5): a model
whose grammar holds values to the document gets a ``max_tokens`` that lets a
list copy a long document whole, within its context window; a short document,
a schema without lists or a request that sets its own cap keep the default."""

from __future__ import annotations

from typing import Annotated

import orjson
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.grounding import Grounded
from agentflow.model import GenerateOptions, ModelProfile
from agentflow.output.reply_budget import (
    COPY_FACTOR,
    MARGIN_TOKENS,
    copies_lists,
    reply_budget,
    reply_tokens,
)
from agentflow.testing import ScriptedModel
from agentflow.usage import estimate_tokens

Item = Annotated[str, Grounded(whole_items=True)]


class Notes(BaseModel):
    title: Annotated[str, Grounded(whole_tokens=True)]
    items: list[Item]


class Title(BaseModel):
    title: Annotated[str, Grounded(whole_tokens=True)]


PROFILE = ModelProfile(supports_tools=False, native_output="json_schema", schema_dialect="local",
                       substring_grammar=True, context_window=8192, max_output_tokens=256)
LINES = [f"  * Step {i}: do the thing number {i} and check it." for i in range(120)]
LONG = "Runbook\n\n" + "\n".join(LINES) + "\n"
SHORT = "Runbook\n\n" + "\n".join(LINES[:2]) + "\n"


def test_only_lists_of_grounded_strings_copy_the_source() -> None:
    listed = {"type": "object", "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/I"}}},
        "$defs": {"I": {"type": "string", "x-grounded": "items"}}}
    assert copies_lists(listed)
    assert not copies_lists({"type": "object", "properties": {
        "a": {"type": "string", "x-grounded": True},
        "b": {"type": "array", "items": {"type": "integer"}}}})
    assert reply_tokens({"properties": {"a": {"type": "string", "x-grounded": True}}}, 999) is None
    need = reply_tokens(listed, 1000)
    assert need is not None and need >= 1000 * COPY_FACTOR
    # above the default, within what the window leaves after the prompt
    assert reply_budget(listed, 1000, 3000, default=256, window=4096) == min(
        need, 4096 - 3000 - MARGIN_TOKENS)
    assert reply_budget(listed, 10, 100, default=1024, window=4096) is None  # default suffices
    assert reply_budget(listed, 1000, 4000, default=256, window=4096) is None  # no room left


def _reply(text: str) -> str:
    items = [line.strip()[2:] for line in text.splitlines() if line.startswith("  * ")]
    return orjson.dumps({"title": "Runbook", "items": items}).decode()


async def test_a_long_document_gets_the_reply_budget_its_list_needs() -> None:
    model = ScriptedModel([_reply(LONG), _reply(SHORT), '{"title": "Runbook"}'], profile=PROFILE)
    agent = ReActAgent("x", model)
    out = await agent.call(LONG, Notes)
    assert len(out.output.items) == 120  # the whole list, not cut at the default cap
    cap = model.requests[0].options.max_tokens
    source = estimate_tokens(LONG)
    prompt = estimate_tokens("\n".join(m.text for m in model.requests[0].messages))
    assert cap is not None and cap >= source * COPY_FACTOR > PROFILE.max_output_tokens
    assert cap <= PROFILE.context_window - prompt  # within the window
    await agent.call(SHORT, Notes)
    assert model.requests[1].options.max_tokens is None  # the model's default suffices
    await agent.call(LONG, Title)
    assert model.requests[2].options.max_tokens is None  # no list: bounded by the schema


async def test_a_request_that_sets_its_cap_keeps_it() -> None:
    model = ScriptedModel([_reply(LONG)], profile=PROFILE)
    agent = ReActAgent("x", model, options=GenerateOptions(max_tokens=5000))
    await agent.call(LONG, Notes)
    assert model.requests[0].options.max_tokens == 5000
