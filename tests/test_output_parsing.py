"""Tolerant parsing of free text into a validated output."""

from __future__ import annotations

import enum
from typing import Literal

import orjson
import pytest
from pydantic import BaseModel, ValidationError

from agentflow import OutputRetry, ReActAgent, StructuredOutputError
from agentflow.messages import TextBlock
from agentflow.model import ModelProfile
from agentflow.output.parsing import (
    AMBIGUOUS_OUTPUT,
    NoJSONFound,
    json_candidates,
    parse_output,
)
from agentflow.output.schema import OutputSpec
from agentflow.output.thinking import strip_thinking
from agentflow.testing import Call, Reply, ScriptedModel


class LabelOutput(BaseModel):
    label: str
    reason: str


SPEC = OutputSpec.of(LabelOutput)


@pytest.mark.parametrize(
    "text",
    [
        '{"label": "billing", "reason": "dup charge"}',
        '```json\n{\n    "label": "billing",\n    "reason": "dup charge"\n}\n```',  # C05
        '```JSON\n{"label": "billing", "reason": "dup charge"}\n```',
        '```\n{"label": "billing", "reason": "dup charge"}\n```',
        'Sure! Here it is:\n{"label": "billing", "reason": "dup charge"}\nHope this helps.',
        '{"label": "billing", "reason": "dup charge",}',  # trailing comma
        "{'label': 'billing', 'reason': 'dup charge'}",  # single quotes
        '{label: "billing", reason: "dup charge"}',  # unquoted keys
        '<think>the user wants {"label": "x"}</think>{"label": "billing", "reason": "dup charge"}',
    ],
)
def test_tolerant_parse(text: str) -> None:
    assert parse_output(text, SPEC) == LabelOutput(label="billing", reason="dup charge")


def test_backticks_inside_strings_survive() -> None:
    text = '```json\n{"label": "code", "reason": "use `x` not ```y```"}\n```'
    out = parse_output(text, SPEC)
    assert out.label == "code" and "`x`" in out.reason


def test_python_literals_repaired_without_eval() -> None:
    class Flags(BaseModel):
        on: bool
        value: int | None

    out = parse_output("{'on': True, 'value': None}", OutputSpec.of(Flags))
    assert out == Flags(on=True, value=None)


def test_picks_the_json_value_that_validates() -> None:
    text = 'Example: {"a": 1}. Answer: {"label": "l", "reason": "r"}'
    assert parse_output(text, SPEC).label == "l"


def test_bare_value_for_wrapped_type() -> None:
    assert parse_output("[1, 2, 3]", OutputSpec.of(list[int])) == [1, 2, 3]
    assert parse_output('{"result": [1]}', OutputSpec.of(list[int])) == [1]
    assert parse_output("42", OutputSpec.of(int)) == 42


class Mood(enum.Enum):
    POSITIVE = "positive"
    NEGATIVE = "negative"


@pytest.mark.parametrize(("output", "text", "expected"), [
    (Literal["yes", "no"], "yes", "yes"),
    (Literal["yes", "no"], '  "no".\n', "no"),
    (Literal["yes", "no"], "**yes**", "yes"),
    (Literal["yes", "no"], "`no`", "no"),
    (Literal["yes", "no"], "<think>yes, or no?</think>\nno", "no"),
    (Mood, "negative", Mood.NEGATIVE),
    (Mood, "\u201cpositive\u201d", Mood.POSITIVE),
])
def test_a_bare_choice_of_strings_is_read(output: object, text: str, expected: object) -> None:
    # A classifier answering the label as bare text, with no JSON at all.
    assert parse_output(text, OutputSpec.of(output)) == expected


@pytest.mark.parametrize(("output", "text"), [
    (Literal["yes", "no"], "maybe"),
    (Literal["yes", "no"], "Yes"),            # letter case is the model's to get right
    (Literal["yes", "no"], "yes, I think so"),
    (Mood, "The mood is negative."),
    (str, "Let me look that up first."),      # any prose would pass as a str
    (int, "forty"),
])
def test_bare_text_is_never_read_as_anything_else(output: object, text: str) -> None:
    with pytest.raises(NoJSONFound):
        parse_output(text, OutputSpec.of(output))


def test_prose_only_is_no_json_found() -> None:
    with pytest.raises(NoJSONFound):
        parse_output("Top movies: 1. Movie A  2. Movie B", SPEC)


def test_json_that_does_not_validate_reports_validation_error() -> None:
    with pytest.raises(ValidationError) as info:
        parse_output('{"label": "x"}', SPEC)
    assert info.value.errors()[0]["loc"] == ("reason",)


def test_unclosed_think_runs_to_end_and_candidates_dedupe() -> None:
    assert strip_thinking("<think>still thinking") == ""
    cands = list(json_candidates('```json\n{"a":1}\n```'))
    assert cands.count('{"a":1}') == 1


@pytest.mark.parametrize("text", [
    '{"label": "a", "reason": "cut off in the mid',
    '{"label": "a", "reason": ["x", "y"',
    "{'label': 'a', 'reason': 'b",
])
def test_cut_off_json_is_never_completed_by_repair(text: str) -> None:
    with pytest.raises((ValidationError, NoJSONFound)):
        parse_output(text, SPEC)


def test_closed_syntax_errors_are_still_repaired() -> None:
    assert parse_output("{'label': \"it's\", 'reason': 'b',}", SPEC).label == "it's"


# ----------------------------------------------------------------------------- reasoning

ANSWER = LabelOutput(label="billing", reason="dup charge")
FINAL = '{"label": "billing", "reason": "dup charge"}'
DRAFT = '{"label": "draft", "reason": "not yet"}'


@pytest.mark.parametrize("text", [
    f"<think>{DRAFT}</think>{FINAL}",
    f"<THINK>{DRAFT}</THINK>\n{FINAL}",
    f'<thinking budget="3">maybe {DRAFT}</thinking> {FINAL}',
    f"<Reasoning>\n{DRAFT}\n</Reasoning>\nAnswer: {FINAL}",
    f"<reflection>{DRAFT}</reflection>```json\n{FINAL}\n```",
    f"{DRAFT} was my first idea</think>{FINAL}",  # the template opened the block
    f"<think>I should answer now.\n{FINAL}",  # unclosed tag: the JSON after it is kept
    f"<reasoning type='x'>let me see\n\n{FINAL}",
])
def test_reasoning_drafts_never_count(text: str) -> None:
    assert parse_output(text, SPEC) == ANSWER


@pytest.mark.parametrize("text", [
    f"<think>{FINAL}</think>",
    f"<reflection>{FINAL}</reflection> I cannot answer.",
])
def test_json_only_inside_reasoning_is_no_answer(text: str) -> None:
    with pytest.raises(NoJSONFound):
        parse_output(text, SPEC)


@pytest.mark.parametrize("text", [
    f'First draft: {DRAFT}. Final: {FINAL}',
    f'First draft: {FINAL}. Final: {DRAFT}',
    f'```json\n{DRAFT}\n```\nCorrected:\n```json\n{FINAL}\n```',
    f'```json\n{FINAL}\n```\nCorrected:\n```json\n{DRAFT}\n```',
    f'```json\n{DRAFT}\n```\nSorry, correction: {FINAL}',  # text after a fence is read
    f'{DRAFT}\n{FINAL}',
    "{'label': 'draft', 'reason': 'not yet'} or {'label': 'x', 'reason': 'y'}",
    '{label: "a", reason: "b"} or {label: "c", reason: "d"}',  # repaired alike
])
def test_several_different_values_that_fit_are_ambiguous(text: str) -> None:
    # The framework cannot tell a draft from a correction or an example from
    # the answer without reading the prose: it asks again instead of guessing.
    with pytest.raises(ValidationError) as info:
        parse_output(text, SPEC)
    [error] = info.value.errors()
    assert error["type"] == AMBIGUOUS_OUTPUT and "2 different JSON values" in error["msg"]


@pytest.mark.parametrize("text", [
    f'```json\n{FINAL}\n```\nTo repeat: {FINAL}',
    f'{FINAL}\n\n```json\n{FINAL}\n```',
    f'Answer: {FINAL}\nAgain, spaced: {{"reason": "dup charge",  "label": "billing"}}',
    f'{FINAL} {DRAFT[:-1]}',  # the cut-off second value never fits: one answer
])
def test_the_same_value_twice_is_one_answer(text: str) -> None:
    assert parse_output(text, SPEC) == ANSWER


def test_a_value_that_needs_repair_never_outvotes_exact_json() -> None:
    # exact JSON is read before anything repaired; a sloppy echo is not a candidate then
    text = f'{{label: "draft", reason: "x"}}\n{FINAL}'
    assert parse_output(text, SPEC) == ANSWER


@pytest.mark.parametrize("text", [
    f'Answer: {FINAL}. For example {{"a": 1}} would be wrong.',
    f'Example: {{"a": 1}}. Answer: {FINAL}',
])
def test_last_valid_value_skips_later_invalid_examples(text: str) -> None:
    assert parse_output(text, SPEC) == ANSWER


@pytest.mark.parametrize(("text", "named"), [
    ("{'label': 'x', 'reason': {'a', 'b'}}", "set"),
    ("{'label': b'x', 'reason': 'r'}", "bytes"),
])
def test_non_json_literals_are_refused_not_repaired(text: str, named: str) -> None:
    with pytest.raises(NoJSONFound, match=named):
        parse_output(text, SPEC)


@pytest.mark.parametrize("profile", [
    ModelProfile(), ModelProfile(supports_tools=False), ModelProfile(native_output="json_schema"),
], ids=["tool", "prompt", "native"])
async def test_every_path_takes_a_bare_label(profile: ModelProfile) -> None:
    model = ScriptedModel(["negative."], profile=profile)
    reply = await ReActAgent("a", model).call("Mood of: 'awful day'", Mood)
    assert reply.output is Mood.NEGATIVE and len(model.requests) == 1  # no retry spent


def test_a_python_literal_and_json_that_differ_are_ambiguous() -> None:
    text = f"{{'label': 'draft', 'reason': 'not yet'}}\n{FINAL}"
    with pytest.raises(ValidationError, match="2 different JSON values"):
        parse_output(text, SPEC)


AMBIGUOUS = f'```json\n{DRAFT}\n```\nSorry, correction: {FINAL}'
PROFILES = {
    "tool": ModelProfile(),
    "native": ModelProfile(native_output="json_schema", schema_dialect="openai_strict"),
    "prompt": ModelProfile(supports_tools=False),
}


@pytest.mark.parametrize("strategy", list(PROFILES))
async def test_every_path_asks_again_when_the_reply_holds_two_answers(strategy: str) -> None:
    second = (Reply(tool_calls=[Call("generate_response", orjson.loads(FINAL))])
              if strategy == "tool" else Reply(text=FINAL))
    model = ScriptedModel([Reply(text=AMBIGUOUS), second], profile=PROFILES[strategy])
    events = [e async for e in ReActAgent("a", model).stream("Label it", LabelOutput,
                                                              strategy=strategy)]
    assert getattr(events[-1], "output", None) == ANSWER and len(model.requests) == 2
    asked = " ".join(b.text for m in model.requests[1].messages for b in m.content
                     if isinstance(b, TextBlock))
    assert "2 different JSON values" in asked  # the re-ask names the ambiguity
    retries = [e for e in events if isinstance(e, OutputRetry)]
    assert len(retries) == 1


@pytest.mark.parametrize("strategy", ["native", "prompt"])
async def test_an_answer_that_stays_ambiguous_is_no_output(strategy: str) -> None:
    model = ScriptedModel([Reply(text=AMBIGUOUS)] * 4, profile=PROFILES[strategy])
    reply = await ReActAgent("a", model).call("Label it", LabelOutput, strategy=strategy)
    with pytest.raises(StructuredOutputError, match="different JSON values"):
        reply.output  # noqa: B018
