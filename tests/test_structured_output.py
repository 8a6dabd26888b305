"""The structured-output engine, rule by rule (DESIGN.md §3, issue 3)."""

from __future__ import annotations

import dataclasses
import itertools
import logging
from typing import Any, Literal

import anyio
import orjson
import pytest
from pydantic import BaseModel, Field, field_validator

from agentflow import (
    AgentState,
    Complete,
    ModelProfile,
    ModelRetry,
    Msg,
    MultipleStructuredOutputsError,
    NativeStrategy,
    OutputConfig,
    OutputPartial,
    OutputRetry,
    OutputTruncatedError,
    PromptStrategy,
    ReActAgent,
    StructuredOutputError,
    StructuredOutputReminder,
    StructuredOutputValidationError,
    ToolChoice,
    ToolNameError,
    ToolStrategy,
    UnsupportedFeatureError,
)
from agentflow.events import Event
from agentflow.messages import (
    CACHE_CONTROL,
    STRUCTURED_OUTPUT,
    STRUCTURED_OUTPUT_REMINDER,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    ToolUseBlock,
)
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel

GR = "generate_response"
SPECIFIC = ModelProfile()  # enforces every tool_choice mode (OpenAI-like, tools only)
AUTO_ONLY = ModelProfile(tool_choice_modes=frozenset({"auto"}))  # GLM-like
NATIVE = ModelProfile(native_output="json_schema", schema_dialect="openai_strict")
NO_TOOLS = ModelProfile(supports_tools=False)


class Contact(BaseModel):
    name: str
    email: str


OK = {"name": "Ann", "email": "ann@x.io"}


def lookup(q: str) -> str:
    """Look a person up."""
    return f"{q}: ann@x.io"


def gr(args: Any = None, **kw: Any) -> Reply:
    return Reply(tool_calls=[Call(GR, OK if args is None else args)], **kw)


async def run(agent: ReActAgent, msg: str = "go", output: Any = Contact, **kw: Any) -> tuple[
    Msg, list[Event]
]:
    """The call's events and reply. ``agent.stream`` raises instead of ending
    with a ``Complete`` that lacks its output (``tests/test_stream_failures.py``);
    here the loop runs as ``call`` runs it (the same events as ``stream``), so a
    failed call's ``Complete`` and reply can be inspected."""
    state = kw.pop("state", None)
    events = [e async for e in agent._events(msg, output, state, kw.pop("strategy", None),
                                             kw.pop("ground", None), None, strict=False)]
    assert not kw, kw
    complete = events[-1]
    assert isinstance(complete, Complete)
    return complete.message, events


def of_type(events: list[Event], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def reminders(messages: Any, kind: str) -> list[Msg]:
    return [m for m in messages if m.metadata.get(STRUCTURED_OUTPUT_REMINDER_TYPE) == kind]


# ----------------------------------------------------------------------------- basics


async def test_tool_path_returns_validated_instance_in_one_request() -> None:
    model = ScriptedModel([gr()], profile=SPECIFIC)
    agent = ReActAgent("a", model, tools=[lookup])
    reply, events = await run(agent)
    assert reply.output == Contact(**OK)
    assert events[-1].output == Contact(**OK)
    assert events[-1].stop_reason == "structured_output"
    assert len(model.requests) == 1  # rule 6: success stops the loop, no extra request


async def test_no_output_requested_means_output_raises() -> None:
    agent = ReActAgent("a", ScriptedModel(["hi"]))
    reply = await agent.call("hello")
    with pytest.raises(StructuredOutputError) as info:
        _ = reply.output
    assert info.value.reason == "not_requested"


async def test_generate_response_reserved_name() -> None:
    def generate_response(x: int) -> int:
        return x

    with pytest.raises(ToolNameError, match="reserved"):
        ReActAgent("a", ScriptedModel([]), tools=[generate_response])


# ----------------------------------------------------------------------------- rule 1


async def test_rule1_output_tool_is_per_call_and_never_in_the_toolkit() -> None:
    class Other(BaseModel):
        score: int

    def answer(request: RecordedRequest) -> Reply:
        text = request.messages[-1].text
        props = next(t for t in request.tools if t.name == GR).parameters["properties"]
        args = OK if "contact" in text else {"score": 3}
        assert set(props) == set(args)  # each call sees only its own schema
        return gr(args, delay=0.01)

    model = FunctionModel(answer, profile=SPECIFIC)
    agent = ReActAgent("a", model, tools=[lookup])
    results: dict[str, Any] = {}

    async def one(msg: str, tp: Any) -> None:
        results[msg] = (await agent.call(msg, tp, state=AgentState())).output

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "contact", Contact)
        tg.start_soon(one, "score", Other)
    assert results == {"contact": Contact(**OK), "score": Other(score=3)}
    assert agent.toolkit.names == ["lookup"]


# ----------------------------------------------------------------------------- rule 2


async def test_rule2_enter_and_exit_reminders_once_at_transitions() -> None:
    model = ScriptedModel([gr(), gr(), "plain", "plain again", gr()], profile=SPECIFIC)
    agent = ReActAgent("a", model)
    state = AgentState()
    await agent.call("1", Contact, state=state)
    assert state.so_tool_active
    assert len(reminders(state.memory, "enter")) == 1
    await agent.call("2", Contact, state=state)  # same kind: nothing added
    assert len(reminders(state.memory, "enter")) == 1
    await agent.call("3", state=state)  # leaves tool mode: one exit reminder
    assert not state.so_tool_active
    assert len(reminders(state.memory, "exit")) == 1
    await agent.call("4", state=state)
    assert len(reminders(state.memory, "exit")) == 1
    await agent.call("5", Contact, state=state)  # enters again
    assert len(reminders(state.memory, "enter")) == 2
    # never removed: the earlier reminders are still where they were (stable prefix)
    first_enter = reminders(state.memory, "enter")[0]
    assert state.memory.index(first_enter) == 0
    # the last request saw the same prefix as the memory before it
    assert list(model.requests[-1].messages[: len(model.requests[3].messages)]) == list(
        model.requests[3].messages
    )


async def test_rule2_flag_survives_json_round_trip_and_native_never_sets_it() -> None:
    state = AgentState()
    agent = ReActAgent("a", ScriptedModel([gr()], profile=SPECIFIC))
    await agent.call("x", Contact, state=state)
    restored = AgentState.from_json(state.to_json())
    assert restored.so_tool_active and restored == state

    native = ReActAgent("n", ScriptedModel(['{"name":"Ann","email":"a@b"}'], profile=NATIVE))
    native_state = AgentState()
    reply = await native.call("x", Contact, state=native_state)
    assert reply.output.name == "Ann"
    assert not native_state.so_tool_active
    assert reminders(native_state.memory, "enter") == []


# ----------------------------------------------------------------------------- rule 3


async def test_rule3_forcing_with_specific_tool_choice() -> None:
    state = AgentState()
    model = ScriptedModel(["I think Ann.", gr()], profile=SPECIFIC)
    agent = ReActAgent("a", model, tools=[lookup])
    reply, events = await run(agent, state=state)
    assert reply.output == Contact(**OK)
    assert model.requests[0].options.tool_choice is None
    assert model.requests[1].options.tool_choice == ToolChoice.specific(GR)
    retry = of_type(events, OutputRetry)
    assert [(r.reason, r.attempt) for r in retry] == [("forcing", 1)]
    assert events[-1].forced_retries == 1
    # no system reminder is needed; a transient user nudge keeps the request from
    # ending on the assistant's own turn (a prefill, which newer models refuse)
    nudge = model.requests[1].messages[-1]
    assert nudge.role == "user" and nudge.metadata[CACHE_CONTROL] is False
    assert not [m for r in model.requests for m in reminders(r.messages, "prompt")
                if m.role == "system"]
    assert reminders(state.memory, "prompt") == []


async def test_rule3_forcing_with_prompt_reminder_when_vendor_cannot_force() -> None:
    state = AgentState()
    model = ScriptedModel(["prose", gr()], profile=AUTO_ONLY)
    agent = ReActAgent("a", model, tools=[lookup])
    reply, _ = await run(agent, state=state)
    assert reply.output == Contact(**OK)
    assert all(r.options.tool_choice is None for r in model.requests)
    transient = reminders(model.requests[1].messages, "prompt")
    assert len(transient) == 1
    meta = transient[0].metadata
    assert meta[STRUCTURED_OUTPUT_REMINDER] is True and meta[CACHE_CONTROL] is False
    assert transient[0].role == "system" and GR in transient[0].text
    # the reminder was in the snapshot of the very next request, and it is gone after the call
    assert reminders(state.memory, "prompt") == []


async def test_rule3_thinking_mode_that_forbids_forcing_uses_the_reminder() -> None:
    thinking = ModelProfile(
        supports_thinking=True, thinking_default=True, forced_tool_choice_with_thinking=False
    )
    model = ScriptedModel(["prose", gr()], profile=thinking)
    reply, _ = await run(ReActAgent("a", model))
    assert reply.output.name == "Ann"
    assert model.requests[1].options.tool_choice is None
    assert reminders(model.requests[1].messages, "prompt")


async def test_rule3_user_can_prefer_prompt_reminders() -> None:
    model = ScriptedModel(["prose", gr()], profile=SPECIFIC)
    cfg = OutputConfig(reminder=StructuredOutputReminder.PROMPT)
    await run(ReActAgent("a", model, output=cfg))
    assert model.requests[1].options.tool_choice is None
    assert reminders(model.requests[1].messages, "prompt")


async def test_rule3_text_that_already_validates_is_accepted_without_retry() -> None:
    model = ScriptedModel(['Here: ```json\n{"name": "Ann", "email": "ann@x.io"}\n```'],
                          profile=SPECIFIC)
    reply, events = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    assert of_type(events, OutputRetry) == [] and len(model.requests) == 1


class Aged(BaseModel):
    name: str
    age: int = Field(ge=0, le=150)


async def test_rule3_give_up_says_what_was_wrong_with_the_outputs_it_saw() -> None:
    """A model that answers with an output that fails validation, as text or
    as the tool's arguments, then never calls the tool again: the give-up
    names the failing field, not only the missing call."""
    bad = '{"name": "Ann", "age": 200}'
    model = ScriptedModel([bad] * 4, profile=SPECIFIC)
    reply, _ = await run(ReActAgent("a", model), output=Aged)
    with pytest.raises(StructuredOutputValidationError) as info:
        _ = reply.output
    message = str(info.value)
    assert f"did not call {GR} after 3 forced retries" in message
    assert "age: Input should be less than or equal to 150" in message
    assert info.value.errors[0]["loc"] == ("age",) and info.value.attempts == 4
    # the tool called with bad arguments, then prose to the end
    called = Reply(tool_calls=[Call(GR, {"name": "Ann", "age": -1})])
    model = ScriptedModel([called, "no", "still no", "nope", "final"], profile=SPECIFIC)
    reply, _ = await run(ReActAgent("a", model), output=Aged)
    with pytest.raises(StructuredOutputValidationError, match=r"age: Input should be greater"):
        _ = reply.output


async def test_rule3_give_up_detail_is_cut_and_masks_secrets() -> None:
    from agentflow._secrets import register_secret

    secret = "sk-test-" + "Q7x" * 8
    register_secret(secret)

    class Wide(BaseModel):
        token: str
        values: list[int]

        @field_validator("token")
        @classmethod
        def no_keys(cls, v: str) -> str:
            raise ValueError(f"looks like a key: {v}")

    wide = orjson.dumps({"token": secret, "values": ["x"] * 400}).decode()
    reply, _ = await run(ReActAgent("a", ScriptedModel([wide] * 4, profile=SPECIFIC)),
                         output=Wide)
    with pytest.raises(StructuredOutputValidationError) as info:
        _ = reply.output
    message = str(info.value)
    assert secret not in message and "looks like a key: ***" in message
    assert len(message) < 2300 and message.rstrip().endswith("more lines)")


async def test_rule3_give_up_after_max_forcing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentflow")
    model = ScriptedModel(["no", "still no", "nope", "final prose"], profile=SPECIFIC)
    agent = ReActAgent("giver", model)
    reply, events = await run(agent)
    assert len(model.requests) == 4  # 1 + 3 forced retries
    assert events[-1].stop_reason == "output_failed" and events[-1].output is None
    with pytest.raises(StructuredOutputError) as info:
        _ = reply.output
    assert info.value.raw_text == "final prose" and info.value.attempts == 4
    record = " ".join(r.getMessage() for r in caplog.records)
    assert "gave_up" in record and GR in record and "retries=3" in record
    assert "giver" in record and agent.id in record


async def test_rule3_max_forcing_is_configurable() -> None:
    model = ScriptedModel(["no", "no"], profile=SPECIFIC)
    reply, _ = await run(ReActAgent("a", model, output=OutputConfig(max_forcing=1)))
    assert len(model.requests) == 2
    with pytest.raises(StructuredOutputError):
        _ = reply.output


# ----------------------------------------------------------------------------- rule 4


async def test_rule4_validation_error_lists_every_field_and_retries() -> None:
    model = ScriptedModel([gr({"name": 5}), gr()], profile=SPECIFIC)
    reply, events = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "email" in result.output and "name" in result.output
    assert [e.reason for e in of_type(events, OutputRetry)] == ["validation"]
    assert events[-1].validation_retries == 1


async def test_rule4_budget_is_cumulative_for_the_call() -> None:
    state = AgentState()
    # two invalid outputs, a business tool round in between, a third invalid: budget 2 is spent
    model = ScriptedModel(
        [gr({}), Reply(tool_calls=[Call("lookup", {"q": "a"})]), gr({}), gr({}), gr()],
        profile=SPECIFIC,
    )
    agent = ReActAgent("a", model, tools=[lookup])
    reply, events = await run(agent, state=state)
    assert len(model.requests) == 4
    with pytest.raises(StructuredOutputValidationError) as info:
        _ = reply.output
    assert info.value.errors and events[-1].stop_reason == "output_failed"
    assert events[-1].validation_retries == 2
    # every tool call in memory has its result
    assert_calls_answered(state.memory)


async def test_rule4_lax_coercion_and_stringified_arrays() -> None:
    class Scores(BaseModel):
        count: int
        items: list[str]

    model = ScriptedModel([gr({"count": "42", "items": '["a", "b"]'})], profile=SPECIFIC)
    reply, events = await run(ReActAgent("a", model), output=Scores)
    assert reply.output == Scores(count=42, items=["a", "b"])
    assert of_type(events, OutputRetry) == []


async def test_rule4_on_invalid_raise_and_callable() -> None:
    state = AgentState()
    model = ScriptedModel([gr({"name": 1})], profile=SPECIFIC)
    agent = ReActAgent("a", model, output=OutputConfig(on_invalid="raise"))
    with pytest.raises(StructuredOutputValidationError):
        await agent.call("x", Contact, state=state)
    assert state.memory == []  # nothing committed

    model = ScriptedModel([gr({"name": 1}), gr()], profile=SPECIFIC)
    cfg = OutputConfig(on_invalid=lambda exc: f"FIX IT: {len(exc.errors())} errors")
    await run(ReActAgent("a", model, output=cfg))
    assert model.requests[1].messages[-1].tool_results[0].output == "FIX IT: 2 errors"


async def test_rule4_output_validators_ask_for_retry_in_the_same_budget() -> None:
    def corporate(c: Contact) -> Contact:
        if not c.email.endswith("@corp.io"):
            raise ModelRetry("email must be a corp.io address")
        return c

    good = {"name": "Ann", "email": "ann@corp.io"}
    model = ScriptedModel([gr(), gr(good)], profile=SPECIFIC)
    reply, events = await run(ReActAgent("a", model, output=OutputConfig(validators=(corporate,))))
    assert reply.output.email == "ann@corp.io"
    assert "corp.io" in model.requests[1].messages[-1].tool_results[0].output
    assert events[-1].validation_retries == 1


# ----------------------------------------------------------------------------- rule 5


def two_outputs() -> Reply:
    return Reply(tool_calls=[Call(GR, OK), Call(GR, {"name": "Bob", "email": "b@x"})])


async def test_rule5_multiple_outputs_retry_answers_every_call() -> None:
    model = ScriptedModel([two_outputs(), gr()], profile=SPECIFIC)
    reply, events = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    results = model.requests[1].messages[-1].tool_results
    assert len(results) == 2 and all(r.is_error and "exactly once" in r.output for r in results)
    assert [e.reason for e in of_type(events, OutputRetry)] == ["multiple"]


async def test_rule5_multiple_outputs_raise_and_callable() -> None:
    agent = ReActAgent("a", ScriptedModel([two_outputs()], profile=SPECIFIC),
                       output=OutputConfig(on_multiple="raise"))
    with pytest.raises(MultipleStructuredOutputsError) as info:
        await agent.call("x", Contact)
    assert info.value.count == 2

    def last(calls: Any) -> ToolUseBlock:
        return calls[-1]

    model = ScriptedModel([two_outputs()], profile=SPECIFIC)
    reply, _ = await run(ReActAgent("a", model, output=OutputConfig(on_multiple=last)))
    assert reply.output.name == "Bob" and len(model.requests) == 1


async def test_rule5_other_tools_in_the_same_reply_run_before_acceptance() -> None:
    state = AgentState()
    ran: list[str] = []

    def record(q: str) -> str:
        ran.append(q)
        return "ok"

    model = ScriptedModel(
        [Reply(tool_calls=[Call(GR, OK), Call("record", {"q": "side effect"})])],
        profile=SPECIFIC,
    )
    agent = ReActAgent("a", model, tools=[record])
    reply, _ = await run(agent, state=state)
    assert ran == ["side effect"] and reply.output == Contact(**OK)
    assert len(model.requests) == 1
    assert_calls_answered(state.memory)


# ----------------------------------------------------------------------------- rule 7


def assert_calls_answered(memory: list[Msg]) -> None:
    calls = {c.id for m in memory for c in m.tool_uses}
    results = {r.tool_use_id for m in memory for r in m.tool_results}
    assert calls == results


async def test_rule7_compression_on_success() -> None:
    state = AgentState()
    model = ScriptedModel(
        ["prose", Reply(tool_calls=[Call("lookup", {"q": "Ann"})]), gr({"name": 1}), gr()],
        profile=AUTO_ONLY,
    )
    agent = ReActAgent("a", model, tools=[lookup])
    await run(agent, state=state)
    memory = state.memory
    kinds = [(m.role, m.metadata.get(STRUCTURED_OUTPUT_REMINDER_TYPE)) for m in memory]
    assert kinds[0] == ("system", "enter")  # enter reminder stays
    assert reminders(memory, "prompt") == []  # transient reminders gone
    assert not any(c.name == GR for m in memory for c in m.tool_uses)
    assert not any(r.name == GR for m in memory for r in m.tool_results)
    assert not any(m.text == "prose" for m in memory)  # the failed attempt is gone
    assert any(c.name == "lookup" for m in memory for c in m.tool_uses)  # business tools stay
    assert_calls_answered(memory)
    final = memory[-1]
    assert final.role == "assistant" and final.metadata[STRUCTURED_OUTPUT] is True
    assert final.structured_data(Contact) == Contact(**OK)
    # round trip keeps the structured data readable
    restored = AgentState.from_json(state.to_json())
    assert restored.memory[-1].structured_data(Contact) == Contact(**OK)


async def test_rule7_compression_on_give_up_and_next_call_is_clean() -> None:
    state = AgentState()
    model = ScriptedModel(["a", "b", gr({"bad": 1}), "d", "plain answer"], profile=AUTO_ONLY)
    agent = ReActAgent("a", model, output=OutputConfig(max_forcing=2))
    reply, _ = await run(agent, state=state)
    with pytest.raises(StructuredOutputError):
        _ = reply.output
    memory = state.memory
    assert reminders(memory, "prompt") == []
    assert not any(c.name == GR for m in memory for c in m.tool_uses)
    assert_calls_answered(memory)
    assert memory[-1].text == "d"  # the last answer stays as the call's answer
    await agent.call("next", state=state)
    last = model.requests[-1]
    assert reminders(last.messages, "prompt") == [] and last.options.tool_choice is None
    assert GR not in last.tool_names


# ----------------------------------------------------------------------------- truncation


async def test_truncated_output_is_a_truncation_error_not_a_retry() -> None:
    state = AgentState()
    cut = Reply(tool_calls=[Call(GR, '{"name": "Ann", "ema')], finish_reason="length")
    model = ScriptedModel([cut], profile=SPECIFIC)
    agent = ReActAgent("a", model)
    reply, events = await run(agent, state=state)
    with pytest.raises(OutputTruncatedError) as info:
        _ = reply.output
    assert info.value.usage is not None and info.value.usage.requests == 1
    assert of_type(events, OutputRetry) == [] and len(model.requests) == 1
    assert_calls_answered(state.memory)


async def test_truncated_native_text() -> None:
    model = ScriptedModel([Reply(text='{"name": "An', finish_reason="length")], profile=NATIVE)
    reply, _ = await run(ReActAgent("a", model))
    with pytest.raises(OutputTruncatedError):
        _ = reply.output


@pytest.mark.parametrize("text", [
    '{"name": "Ann", "email": "ann@x.io"}' + "\n" * 400,   # GPT-4.1's newline padding
    '```json\n{"name": "Ann", "email": "ann@x.io"}\n',      # the closing fence never came
    '{"name": "Ann", "email": "ann@x.io"}',                   # the end token never came
])
@pytest.mark.parametrize("profile", [NATIVE, NO_TOOLS, SPECIFIC], ids=["native", "prompt", "tool"])
async def test_a_value_closed_before_the_token_limit_is_whole(text: str,
                                                               profile: ModelProfile) -> None:
    model = ScriptedModel([Reply(text=text, finish_reason="length")], profile=profile)
    reply, events = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK) and len(model.requests) == 1
    assert of_type(events, OutputRetry) == []


@pytest.mark.parametrize("padding", ["\n" * 400, " \n\t" * 100, ""])
async def test_output_call_arguments_closed_before_the_token_limit_are_whole(
        padding: str) -> None:
    """GPT-4.1 pads tool-call arguments with newlines up to max_tokens after the
    object closed: the call lost nothing and is the output (no retry)."""
    call = Call(GR, '{"name": "Ann", "email": "ann@x.io"}' + padding)
    model = ScriptedModel([Reply(tool_calls=[call], finish_reason="length", chunk_size=7)],
                          profile=SPECIFIC)
    reply, events = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK) and len(model.requests) == 1
    assert of_type(events, OutputRetry) == []


@pytest.mark.parametrize("arguments", ['{"name": "Ann", "email": "ann@x', "",
                                       '{"name": "Ann", "email": "ann@x.io"} {"na'])
async def test_output_call_arguments_cut_inside_are_still_a_truncation(arguments: str) -> None:
    ok = Call(GR, '{"name": "Ann", "email": "ann@x.io"}')
    for calls in ([Call(GR, arguments)], [ok, Call(GR, arguments)]):
        model = ScriptedModel([Reply(tool_calls=calls, finish_reason="length")],
                              profile=SPECIFIC)
        reply, _ = await run(ReActAgent("a", model))
        with pytest.raises(OutputTruncatedError):
            _ = reply.output


@pytest.mark.parametrize("text", ['{"name": "Ann", "email": "ann@x', '{"name": "Ann"} and',
                                  "12", '```json\n{"name": "Ann", "em'])
async def test_text_cut_inside_its_value_is_still_a_truncation(text: str) -> None:
    model = ScriptedModel([Reply(text=text, finish_reason="length")], profile=NATIVE)
    reply, _ = await run(ReActAgent("a", model))
    with pytest.raises(OutputTruncatedError):
        _ = reply.output


# ----------------------------------------------------------------------------- native & prompt


async def test_native_strategy_sends_response_format_in_dialect() -> None:
    model = ScriptedModel(['{"name": "Ann", "email": "ann@x.io"}'], profile=NATIVE)
    reply, _ = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    rf = model.requests[0].options.response_format
    assert rf is not None and rf.type == "json_schema" and rf.strict
    assert rf.schema["additionalProperties"] is False and rf.name == "Contact"
    assert GR not in model.requests[0].tool_names


async def test_native_requests_of_one_agent_share_one_options_copy() -> None:
    # the response format is one object per type and dialect, so the options
    # carrying it are copied once, not per call
    model = ScriptedModel(['{"name": "Ann", "email": "ann@x.io"}'] * 3, profile=NATIVE)
    agent = ReActAgent("a", model)
    for _ in range(3):
        reply, _ = await run(agent)
        assert reply.output == Contact(**OK)
    first = model.requests[0].options
    assert first.response_format is not None and first.response_format.name == "Contact"
    assert all(r.options is first for r in model.requests)
    assert agent.options.response_format is None  # the agent's own options are untouched


async def test_native_validation_retry_uses_a_transient_user_message() -> None:
    state = AgentState()
    model = ScriptedModel(['{"name": "Ann"}', '{"name": "Ann", "email": "ann@x.io"}'],
                          profile=NATIVE)
    agent = ReActAgent("a", model)
    reply, events = await run(agent, state=state)
    assert reply.output == Contact(**OK)
    feedback = model.requests[1].messages[-1]
    assert feedback.role == "user" and "email" in feedback.text
    assert feedback.metadata[CACHE_CONTROL] is False
    assert [m.role for m in state.memory] == ["user", "assistant"]
    assert [e.reason for e in of_type(events, OutputRetry)] == ["validation"]


async def test_prompt_strategy_puts_schema_and_the_word_json_in_the_request() -> None:
    model = ScriptedModel(['```json\n{"name": "Ann", "email": "ann@x.io"}\n```'],
                          profile=NO_TOOLS)
    reply, _ = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    system = [m.text for m in model.requests[0].messages if m.role == "system"]
    assert any("JSON" in t and '"email"' in t for t in system)
    assert model.requests[0].tools == ()


async def test_json_object_native_adds_schema_instruction() -> None:
    profile = ModelProfile(native_output="json_object")
    model = ScriptedModel(['{"name": "Ann", "email": "ann@x.io"}'], profile=profile)
    await run(ReActAgent("a", model))
    request = model.requests[0]
    assert request.options.response_format is not None
    assert request.options.response_format.type == "json_object"
    assert any("JSON" in m.text for m in request.messages if m.role == "system")


@pytest.mark.parametrize("strategy", [ToolStrategy(), NativeStrategy(), PromptStrategy()])
async def test_strategy_override_per_call(strategy: Any) -> None:
    replies = {"tool": gr(), "native": '{"name":"Ann","email":"ann@x.io"}',
               "prompt": '{"name":"Ann","email":"ann@x.io"}'}
    model = ScriptedModel([replies[strategy.kind]], profile=NATIVE)
    reply, _ = await run(ReActAgent("a", model), strategy=strategy)
    assert reply.output == Contact(**OK)
    assert (GR in model.requests[0].tool_names) == (strategy.kind == "tool")


@pytest.mark.parametrize("name", ["tool", "native", "prompt", "auto"])
async def test_strategy_by_name(name: str) -> None:
    text = '{"name":"Ann","email":"ann@x.io"}'
    model = ScriptedModel([gr() if name == "tool" else text], profile=NATIVE)
    reply, _ = await run(ReActAgent("a", model), strategy=name)
    assert reply.output == Contact(**OK)
    assert (GR in model.requests[0].tool_names) == (name == "tool")


async def test_an_unknown_strategy_is_a_usage_error_before_any_request() -> None:
    from agentflow import UsageError

    model = ScriptedModel([gr()], profile=NATIVE)
    with pytest.raises(UsageError, match="strategy='tools' is not an output strategy"):
        await ReActAgent("a", model).call("go", Contact, strategy="tools")  # type: ignore
    assert model.requests == []


# ----------------------------------------------------------------------------- degradation


async def test_runtime_degradation_native_to_tool_is_remembered() -> None:
    refusal = UnsupportedFeatureError("json_schema unavailable", feature="native_output")
    model = ScriptedModel([Reply(error=refusal), gr(), gr()], profile=NATIVE)
    agent = ReActAgent("a", model)
    reply, events = await run(agent)
    assert reply.output == Contact(**OK)
    assert [e.reason for e in of_type(events, OutputRetry)] == ["degradation"]
    assert model.requests[1].options.response_format is None
    assert GR in model.requests[1].tool_names
    await run(agent, state=AgentState())  # remembered: straight to the tool path
    assert model.requests[2].options.response_format is None
    assert GR in model.requests[2].tool_names


async def test_runtime_degradation_tools_to_prompt() -> None:
    refusal = UnsupportedFeatureError("model does not support tools", feature="tools")
    model = ScriptedModel([Reply(error=refusal), '{"name":"Ann","email":"ann@x.io"}'])
    reply, _ = await run(ReActAgent("a", model, tools=[lookup]))
    assert reply.output == Contact(**OK)
    assert model.requests[1].tools == ()


async def test_runtime_refusal_of_forced_tool_choice_falls_back_to_reminder() -> None:
    refusal = UnsupportedFeatureError("Thinking mode does not support this tool_choice",
                                      feature="tool_choice")
    model = ScriptedModel(["prose", Reply(error=refusal), gr(), "prose", gr()],
                          profile=SPECIFIC)
    agent = ReActAgent("a", model)
    reply, _ = await run(agent)
    assert reply.output == Contact(**OK)
    assert model.requests[1].options.tool_choice == ToolChoice.specific(GR)
    assert model.requests[2].options.tool_choice is None
    assert reminders(model.requests[2].messages, "prompt")
    await run(agent, state=AgentState())  # remembered for this model
    assert model.requests[4].options.tool_choice is None


PROSE = "The weather in Paris is sunny, about 21 degrees."


async def test_native_prose_reply_degrades_to_the_tool_strategy_for_that_call() -> None:
    state = AgentState()
    # case C04: a vendor (or gateway) ignored the response format and the
    # model answered in prose: the call steps down to the tool strategy once,
    # visible as an OutputRetry, within output_retries; not remembered
    model = ScriptedModel([PROSE, gr(), '{"name":"Ann","email":"ann@x.io"}'],
                          profile=NATIVE.with_(tool_choice_modes=frozenset({"auto", "specific"})))
    agent = ReActAgent("a", model)
    reply, events = await run(agent, state=state)
    assert reply.output == Contact(**OK)
    retries = of_type(events, OutputRetry)
    assert [(e.reason, e.attempt) for e in retries] == [("degradation", 1)]
    assert "no JSON" in retries[0].message
    second = model.requests[1]
    assert second.options.response_format is None and GR in second.tool_names
    assert second.options.tool_choice == ToolChoice.specific(GR)
    assert second.messages[-1].role == "user"  # never ends on the assistant's turn
    assert all(PROSE not in m.text for m in state.memory)  # the failed attempt is gone
    # nothing in the stored conversation names the output tool (C29): the next call is native
    assert reminders(state.memory, "enter") == [] and not state.so_tool_active
    assert [m.role for m in state.memory] == ["user", "assistant"]
    await run(agent, state=AgentState())  # the next call tries the native format again
    assert model.requests[2].options.response_format is not None
    assert GR not in model.requests[2].tool_names


@pytest.mark.parametrize("prose", [PROSE, "It is {sunny} in Paris.", "",
                                   "<think>The user wants JSON.</think>Paris: sunny."])
async def test_native_prose_fallback_uses_a_reminder_where_tool_choice_is_not_enforced(
        prose: str) -> None:
    model = ScriptedModel([prose, gr()],
                          profile=NATIVE.with_(tool_choice_modes=frozenset({"auto"})))
    reply, _ = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    assert model.requests[1].options.tool_choice is None
    assert reminders(model.requests[1].messages, "prompt")


async def test_native_prose_fallback_happens_once_and_spends_the_output_budget() -> None:
    model = ScriptedModel([PROSE] * 6, profile=NATIVE)
    agent = ReActAgent("a", model, output=OutputConfig(output_retries=2, max_forcing=3))
    reply, events = await run(agent)
    with pytest.raises(StructuredOutputError):
        _ = reply.output
    # the fallback and the forcing after it share output_retries: no extra requests
    assert [e.reason for e in of_type(events, OutputRetry)] == ["degradation", "forcing"]
    assert len(model.requests) == 3
    assert model.requests[2].options.response_format is None  # never back to native


async def test_native_prose_without_budget_or_tools_is_an_invalid_output() -> None:
    model = ScriptedModel([PROSE], profile=NATIVE)
    agent = ReActAgent("a", model, output=OutputConfig(output_retries=0))
    reply, events = await run(agent)
    with pytest.raises(StructuredOutputError):
        _ = reply.output
    assert of_type(events, OutputRetry) == [] and len(model.requests) == 1
    no_tools = NATIVE.with_(supports_tools=False)
    model = ScriptedModel([PROSE, '{"name":"Ann","email":"ann@x.io"}'], profile=no_tools)
    reply, events = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    assert [e.reason for e in of_type(events, OutputRetry)] == ["validation"]
    assert model.requests[1].options.response_format is not None


async def test_native_reply_with_invalid_json_is_not_degraded() -> None:
    model = ScriptedModel(['{"name": "Ann"}', '{"name":"Ann","email":"ann@x.io"}'],
                          profile=NATIVE)
    reply, events = await run(ReActAgent("a", model))
    assert reply.output == Contact(**OK)
    assert [e.reason for e in of_type(events, OutputRetry)] == ["validation"]
    assert GR not in model.requests[1].tool_names


async def test_content_filter_ends_the_call_without_retries() -> None:
    model = ScriptedModel([Reply(text="", finish_reason="content_filter")], profile=SPECIFIC)
    reply, events = await run(ReActAgent("a", model))
    with pytest.raises(StructuredOutputError) as info:
        _ = reply.output
    assert info.value.reason == "refused" and len(model.requests) == 1
    assert events[-1].stop_reason == "output_failed"


async def test_tools_refused_on_native_path_drops_tools_and_stays_native() -> None:
    refusal = UnsupportedFeatureError("model does not support tools", feature="tools")
    model = ScriptedModel([Reply(error=refusal), '{"name":"Ann","email":"ann@x.io"}'],
                          profile=NATIVE)
    reply, _ = await run(ReActAgent("a", model, tools=[lookup]))
    assert reply.output == Contact(**OK)
    assert model.requests[1].tools == ()
    assert model.requests[1].options.response_format is not None


async def test_unrelated_provider_errors_propagate_and_state_is_unchanged() -> None:
    state = AgentState()
    from agentflow import BadRequestError

    model = ScriptedModel([Reply(error=BadRequestError("nope"))], profile=SPECIFIC)
    agent = ReActAgent("a", model)
    with pytest.raises(BadRequestError):
        await agent.call("x", Contact, state=state)
    assert state.memory == [] and not state.so_tool_active


# ----------------------------------------------------------------------------- streaming


async def test_partial_output_while_arguments_stream() -> None:
    model = ScriptedModel([gr(chunk_size=4)], profile=SPECIFIC)
    _, events = await run(ReActAgent("a", model))
    partials = [e.data for e in of_type(events, OutputPartial)]
    assert len(partials) >= 3
    for before, after in itertools.pairwise(partials):
        assert before.keys() <= after.keys()  # never a regression of fields already seen
    assert partials[-1] == OK
    chunks = -(-len(orjson.dumps(OK)) // 4)
    assert len(partials) <= chunks  # at most one per chunk


async def test_partial_output_for_native_text() -> None:
    text = '{"name": "Ann", "email": "ann@x.io"}'
    model = ScriptedModel([Reply(text=text, chunk_size=5)], profile=NATIVE)
    _, events = await run(ReActAgent("a", model))
    partials = [e.data for e in of_type(events, OutputPartial)]
    assert partials[0] == {"name": "An"} or "name" in partials[0]
    assert partials[-1] == OK


# ----------------------------------------------------------------------------- output types


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


@pytest.mark.parametrize(
    ("output", "args", "expected"),
    [
        (list[Contact], {"result": [OK]}, [Contact(**OK)]),
        (Literal["low", "high"], {"result": "high"}, "high"),
        (int, {"result": "7"}, 7),
        (Point, {"x": 1, "y": "2"}, Point(1, 2)),
        (Tree, {"name": "r", "children": [{"name": "c"}]}, Tree(name="r",
                                                              children=[Tree(name="c")])),
        (dict[str, int], {"result": {"a": 1}}, {"a": 1}),
    ],
)
async def test_output_types(output: Any, args: Any, expected: Any) -> None:
    model = ScriptedModel([gr(args)], profile=SPECIFIC)
    reply, _ = await run(ReActAgent("a", model), output=output)
    assert reply.output == expected
    assert reply.structured_data(output) == expected


async def test_schema_error_before_any_request() -> None:
    from collections.abc import Callable

    from agentflow import SchemaError

    class Hooked(BaseModel):
        hook: Callable[[], int]  # no JSON Schema for a callable

    gemini = ModelProfile(schema_dialect="gemini")
    model = ScriptedModel([gr()], profile=gemini)
    with pytest.raises(SchemaError, match="Hooked"):
        await ReActAgent("a", model).call("x", Hooked)
    assert model.requests == []
    # a tree is no schema error on Gemini: it goes as JSON Schema ($defs/$ref)
    model = ScriptedModel([gr({"name": "r", "children": [{"name": "c"}]})], profile=gemini)
    reply = await ReActAgent("a", model).call("x", Tree)
    assert reply.output == Tree(name="r", children=[Tree(name="c")])


async def test_prepare_remembers_only_a_type_that_passed() -> None:
    # prepare remembers the type it passed for the agent's last call: a bad
    # type is refused on every call, before any request, and a good one after it
    from typing import Annotated

    from agentflow import Grounded, SchemaError

    class Bad(BaseModel):
        n: Annotated[int, Grounded()]  # a marker on a non-string field

    model = ScriptedModel([gr(), gr()], profile=SPECIFIC)
    agent = ReActAgent("a", model)
    assert (await agent.call("x", Contact)).output == Contact(**OK)
    for _ in range(2):
        with pytest.raises(SchemaError):
            await agent.call("x", Bad)
    assert (await agent.call("x", Contact)).output == Contact(**OK)
    assert len(model.requests) == 2


async def test_fresh_output_types_are_not_kept_alive_by_caches() -> None:
    """Thousands of calls, each with a fresh ``create_model`` type: the caches
    keyed by type or schema stay bounded and the types can be collected."""
    import gc
    import weakref

    from pydantic import create_model

    from agentflow.output.schema import SPEC_CACHE_SIZE
    from agentflow.testing import FunctionModel

    model = FunctionModel(lambda request: '{"a": 1}')
    agent = ReActAgent("t", model)
    alive: list[weakref.ref[type]] = []
    for i in range(2000):
        fresh = create_model(f"Fresh{i}", a=(int, ...))
        reply = await agent.call("x", fresh)
        assert reply.output.a == 1
        alive.append(weakref.ref(fresh))
        del fresh, reply
        model.requests.clear()
    gc.collect()
    still = sum(ref() is not None for ref in alive)
    assert still <= SPEC_CACHE_SIZE + 1, still


@pytest.mark.parametrize("deltas_read", [True, False])
async def test_partial_outputs_only_when_someone_reads_deltas(deltas_read: bool) -> None:
    """stream() works out partial outputs; call() (nobody reads deltas) does not."""
    from agentflow._logging import get_logger
    from agentflow.execution import CallExecution
    from agentflow.middleware.structured_output import StructuredOutputMiddleware
    from agentflow.model import TextDelta, ToolCallDelta
    from agentflow.reply import ReplyBuilder

    middleware = StructuredOutputMiddleware()
    for profile, chunk in ((SPECIFIC, ToolCallDelta(0, "c1", GR, '{"name": "Ann", "em')),
                           (NATIVE, TextDelta('{"name": "Ann", "em'))):
        ex = CallExecution(model=ScriptedModel(profile=profile), state=AgentState(),
                           agent_name="a", agent_id="i", base_log=get_logger(),
                           output_type=Contact, deltas_read=deltas_read)
        ex.extra["has_tools"] = False
        await middleware.on_call_start(ex)
        reply = ReplyBuilder()
        reply.add(chunk)
        event = middleware.on_chunk(ex, chunk, reply)
        if deltas_read:
            assert isinstance(event, OutputPartial) and event.data == {"name": "Ann"}
        else:
            assert event is None
