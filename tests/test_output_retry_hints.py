"""Every re-ask after an output failed its checks tells the model what was
wrong (agentflow.middleware.output_hints): field path and message, secrets
masked, length bounded, on every strategy (native response format, the
output tool, the prompt) and on the forced retry of the tool strategy."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator

from agentflow import Grounded, ModelProfile, ReActAgent
from agentflow._secrets import register_secret
from agentflow.middleware.output_hints import MAX_DETAIL_CHARS, MAX_LINE_CHARS, failure_detail
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel

GR = "generate_response"
SPECIFIC = ModelProfile()  # enforces a specific tool choice: the forced retry adds a user nudge
AUTO_ONLY = ModelProfile(tool_choice_modes=frozenset({"auto"}))  # forced by a system reminder
NATIVE = ModelProfile(native_output="json_schema", schema_dialect="openai_strict")
NO_TOOLS = ModelProfile(supports_tools=False)  # the prompt strategy

AGE = "age: Input should be less than or equal to 150"


class Aged(BaseModel):
    name: str
    age: int = Field(ge=0, le=150)


BAD = '{"name": "Ann", "age": 200}'
GOOD = {"name": "Ann", "age": 40}


def added(request: RecordedRequest) -> str:
    """The text the engine added after the model's last reply: the messages
    after the last assistant turn (tool results, a nudge, a reminder)."""
    messages = request.messages
    last = max(i for i, m in enumerate(messages) if m.role == "assistant")
    parts: list[str] = []
    for m in messages[last + 1:]:
        parts.append(m.text)
        parts += [b.output for b in m.tool_results]
    # a system reminder may be placed before the assistant turn's answer
    parts += [m.text for m in messages if m.role == "system" and "system-reminder" in m.text]
    return "\n".join(parts)


@pytest.mark.parametrize("profile", [SPECIFIC, AUTO_ONLY], ids=["nudge", "reminder"])
async def test_the_forced_retry_after_invalid_json_text_says_what_was_wrong(
        profile: ModelProfile) -> None:
    """Tool strategy: the model answers with JSON as text that fails
    validation; the forced retry carries the field path and message."""
    model = ScriptedModel([BAD, Reply(tool_calls=[Call(GR, GOOD)])], profile=profile)
    reply = await ReActAgent("a", model).call("go", output=Aged)
    assert reply.output == Aged(**GOOD)
    hint = added(model.requests[1])
    assert AGE in hint and GR in hint


async def test_the_forced_retry_after_invalid_arguments_repeats_what_was_wrong() -> None:
    """Invalid tool arguments (answered with the detail), then prose: the
    forced retry says again what was wrong with that last output."""
    model = ScriptedModel([Reply(tool_calls=[Call(GR, {"name": "Ann", "age": -1})]),
                           "let me think", Reply(tool_calls=[Call(GR, GOOD)])],
                          profile=SPECIFIC)
    reply = await ReActAgent("a", model).call("go", output=Aged)
    assert reply.output == Aged(**GOOD)
    assert "age: Input should be greater than or equal to 0" in added(model.requests[1])
    assert "age: Input should be greater than or equal to 0" in added(model.requests[2])


async def test_a_forced_retry_without_a_failed_output_stays_the_plain_nudge() -> None:
    model = ScriptedModel(["prose, no JSON", Reply(tool_calls=[Call(GR, GOOD)])],
                          profile=SPECIFIC)
    await ReActAgent("a", model).call("go", output=Aged)
    assert added(model.requests[1]) == f"Now call the `{GR}` tool with your final answer."


@pytest.mark.parametrize("profile", [NATIVE, NO_TOOLS], ids=["native", "prompt"])
async def test_text_strategies_re_ask_with_the_field_path(profile: ModelProfile) -> None:
    def answer(request: RecordedRequest) -> str:
        return BAD if len(model.requests) == 1 else orjson.dumps(GOOD).decode()

    model = FunctionModel(answer, profile=profile)
    reply = await ReActAgent("a", model).call("go", output=Aged)
    assert reply.output == Aged(**GOOD)
    assert AGE in added(model.requests[1])


class Keyed(BaseModel):
    token: str
    values: list[int]

    @field_validator("token")
    @classmethod
    def no_keys(cls, v: str) -> str:
        raise ValueError(f"looks like a key: {v}")


SECRET = "sk-hint-" + "R8y" * 8


def _wide() -> str:
    return orjson.dumps({"token": SECRET, "values": ["x"] * 400}).decode()


@pytest.mark.parametrize(("profile", "first"), [
    (SPECIFIC, None),  # tool arguments: the tool's error result
    (SPECIFIC, "text"),  # JSON text on the tool strategy: the forced retry
    (NATIVE, "text"),  # the native response format: a user message
    (NO_TOOLS, "text"),  # the prompt strategy: a user message
], ids=["tool-result", "forced", "native", "prompt"])
async def test_every_re_ask_masks_secrets_and_is_bounded(profile: ModelProfile,
                                                         first: str | None) -> None:
    register_secret(SECRET)
    wide = _wide()
    bad: Any = wide if first else Reply(tool_calls=[Call(GR, orjson.loads(wide))])
    model = ScriptedModel([bad, bad, bad, bad], profile=profile)
    agent = ReActAgent("a", model)
    with pytest.raises(Exception):  # noqa: B017 - the give-up's type is the engine's business
        _ = (await agent.call("go", output=Keyed)).output
    hint = added(model.requests[1])
    assert "token: Value error, looks like a key: ***" in hint
    assert SECRET not in hint and SECRET[:12] not in hint
    assert "values.0: Input should be a valid integer" in hint
    assert len(hint) < MAX_DETAIL_CHARS + 600 and "more lines)" in hint


class Person(BaseModel):
    name: Annotated[str, Grounded()]


DOC = "Minutes: Ann Smith chaired the meeting."


@pytest.mark.parametrize(("profile", "first"), [
    (SPECIFIC, Reply(tool_calls=[Call(GR, {"name": "Bob Jones"})])),
    (SPECIFIC, '{"name": "Bob Jones"}'),
    (NATIVE, '{"name": "Bob Jones"}'),
], ids=["tool-result", "text-on-tool", "native"])
async def test_a_grounding_failures_re_ask_still_says_not_found(profile: ModelProfile,
                                                                first: Any) -> None:
    after: Any = (Reply(tool_calls=[Call(GR, {"name": "Ann Smith"})]) if profile is SPECIFIC
                  else '{"name": "Ann Smith"}')
    model = ScriptedModel([first, after], profile=profile)
    reply = await ReActAgent("a", model).call(DOC, output=Person)
    assert reply.output == Person(name="Ann Smith")
    assert "name: 'Bob Jones' is not found in the document" in added(model.requests[1])


def test_failure_detail_cuts_a_long_line_and_counts_what_it_leaves_out() -> None:
    class Many(BaseModel):
        values: list[int]

    with pytest.raises(ValidationError) as info:
        Many.model_validate({"values": ["x"] * 400})
    detail = failure_detail(info.value)
    assert detail.startswith("- values.0: Input should be a valid integer")
    assert len(detail) <= MAX_DETAIL_CHARS + 40 and detail.endswith("more lines)")
    long = failure_detail(ValueError("y" * 5000))
    assert len(long) == MAX_LINE_CHARS and long.endswith("...")
