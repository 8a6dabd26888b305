"""The text grounded values must come from is exactly the caller's input
messages of the call (``CallExecution.inputs``): all of them, on every
strategy, never a message the framework added (the ENTER reminder, a nudge
or reminder after a prose reply, a re-ask), whatever the order middleware runs
in; and every span lies inside that text. A call without a new message
grounds on the inputs its state recorded (``AgentState.input_ids``)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.batch import extract_many
from agentflow.cli import main
from agentflow.errors import GroundingError, InvalidStateError
from agentflow.execution import CallExecution
from agentflow.messages import STRUCTURED_OUTPUT_REMINDER, Msg, ReminderType
from agentflow.middleware.base import Middleware
from agentflow.model import ModelProfile
from agentflow.output.reminders import force_reminder, nudge, persistent_reminder
from agentflow.output.strategies import StrategyName
from agentflow.state import AgentState
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.glm import GLMFake


class Person(BaseModel):
    name: str | None = None
    role: str | None = None


DOC = "Eve Stone is the head of finance."
RIGHT = {"name": "Eve Stone", "role": "head of finance"}
PROSE = "Let me think about it."

STRATEGIES: list[StrategyName] = ["native", "tool", "prompt"]
PROFILES = {
    # the vendor enforces tool_choice=specific: a forced retry with a user nudge
    "forcing": ModelProfile(native_output="json_schema"),
    # it does not (GLM, MiniMax, DeepSeek/DashScope thinking): a reminder instead
    "no-forcing": ModelProfile(native_output="json_schema",
                               tool_choice_modes=frozenset({"auto", "none"})),
}


def answer(request: RecordedRequest, value: dict[str, Any]) -> Reply:
    """``value`` the way the request asks for it: the output tool's call when
    it is offered, else the reply text."""
    if "generate_response" in request.tool_names:
        return Reply(tool_calls=[Call("generate_response", value)])
    return Reply(text=orjson.dumps(value).decode())


def prose_then(*values: dict[str, Any], profile: ModelProfile | None = None) -> FunctionModel:
    """Prose first (no JSON: a nudge, reminder or re-ask follows), then each
    of ``values`` in turn (the last one again when they run out)."""
    def reply(request: RecordedRequest) -> Reply:
        n = len(model.requests) - 1
        return Reply(text=PROSE) if n == 0 else answer(request, values[min(n, len(values)) - 1])
    model = FunctionModel(reply, profile=profile)
    return model


def assert_spans_inside(spans: Any, output: BaseModel, source: str) -> None:
    assert spans, "no span: nothing was grounded"
    for path, places in spans.items():
        for start, end in places:
            assert 0 <= start <= end <= len(source), (path, start, end, len(source))
            assert source[start:end] == getattr(output, path)


def framework_text(request: RecordedRequest) -> str:
    """The text of the request's last message, which the framework added
    (asserted): a reminder, nudge or re-ask, or the output tool's error result."""
    last = request.messages[-1]
    if last.role == "tool":
        assert all(r.name == "generate_response" for r in last.tool_results), last
        return "\n".join(str(r.output) for r in last.tool_results)
    assert last.metadata.get(STRUCTURED_OUTPUT_REMINDER), last
    return last.text


# ------------------------------------------------ (1) a right answer after a prose reply


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_a_right_answer_after_a_prose_reply_is_grounded_on_the_document(
    strategy: StrategyName, profile: str,
) -> None:
    model = prose_then(RIGHT, profile=PROFILES[profile])
    reply = await ReActAgent("a", model).call(DOC, Person, ground=True, strategy=strategy)
    assert reply.output == Person(**RIGHT)
    assert_spans_inside(reply.spans, reply.output, DOC)
    assert len(model.requests) == 2
    framework_text(model.requests[1])  # the answer came after the framework's message


@pytest.mark.parametrize("profile", PROFILES)
async def test_extract_many_accepts_a_right_answer_after_a_prose_reply(profile: str) -> None:
    # no native output: extract_many binds the tool strategy
    model = prose_then(RIGHT, profile=PROFILES[profile].with_(native_output=None))
    [result] = [r async for r in extract_many(model, [("d", DOC)], Person)]
    assert "generate_response" in model.requests[0].tool_names
    assert result.error is None and result.output == Person(**RIGHT)
    assert_spans_inside(result.spans, result.output, DOC)


async def test_cli_extract_accepts_a_right_answer_after_a_prose_reply(tmp_path: Path) -> None:
    # the GLM adapter cannot force the output tool: a prose reply, a reminder, then the call
    (tmp_path / "schema.py").write_text(
        "from pydantic import BaseModel\n"
        "class Named(BaseModel):\n    name: str | None = None\n")
    doc = tmp_path / "doc.txt"
    doc.write_text("Ann Lee signed the form.\n")
    out = tmp_path / "out.jsonl"
    async with GLMFake() as fake:
        fake.add(FakeReply(text="The person is Ann Lee."),
                 *[FakeReply(tool_calls=[FakeCall("generate_response", {"name": "Ann Lee"})])] * 3)
        status = await anyio.to_thread.run_sync(main, [
            "extract", "--schema", f"{tmp_path / 'schema.py'}:Named", "--input", str(doc),
            "--model", "glm:glm-4.6", "--base-url", fake.url, "--api-key", "k-123456789",
            "--out", str(out)])
        assert len(fake.requests) == 2
    assert status == 0
    [record] = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert record["ok"] and record["output"] == {"name": "Ann Lee"}
    text = doc.read_text()
    offset = record.get("source_offset", 0)
    for [(start, end)] in record["spans"].values():
        assert 0 <= offset + start <= offset + end <= len(text)
        assert text[offset + start:offset + end] == "Ann Lee"


# ------------------------------------- (2) a value only in the framework's text is refused


def copied_from_framework(request: RecordedRequest) -> dict[str, Any]:
    """Two words of the framework's last message that the document does not hold."""
    words = framework_text(request).split()
    for a, b in itertools.pairwise(words):
        if f"{a} {b}" not in DOC:
            return {"name": f"{a} {b}", "role": None}
    raise AssertionError(words)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_a_value_copied_from_the_frameworks_message_is_refused(
    strategy: StrategyName, profile: str,
) -> None:
    stolen: list[str] = []

    def reply(request: RecordedRequest) -> Reply:
        if len(model.requests) == 1:
            return Reply(text=PROSE)
        value = copied_from_framework(request)
        stolen.append(value["name"])
        return answer(request, value)

    model = FunctionModel(reply, profile=PROFILES[profile])
    reply_msg = await ReActAgent("a", model).call(DOC, Person, ground=True, strategy=strategy)
    with pytest.raises(GroundingError) as info:
        _ = reply_msg.output  # never ok: each value was found only in the framework's text
    assert stolen and info.value.unfound
    assert all(value not in DOC for _, value in info.value.unfound)
    assert f"{stolen[0]!r} is not found in the document" in str(model.requests[2].messages)


REMINDER_WORDS = {  # the opening words of each text the engine adds
    "nudge": nudge().text.split("`")[0].strip(),
    "reminder": force_reminder().text.split("`")[0].strip(),
    "enter": persistent_reminder(ReminderType.ENTER).text.split(".")[0],
}


@pytest.mark.parametrize("words", REMINDER_WORDS)
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_the_engines_texts_are_no_source(strategy: StrategyName, words: str) -> None:
    # after a prose reply, a value from a text the engine adds: refused, then the right one taken
    model = prose_then({"name": REMINDER_WORDS[words], "role": "tool"}, RIGHT)
    reply = await ReActAgent("a", model).call(DOC, Person, ground=True, strategy=strategy)
    assert reply.output == Person(**RIGHT)
    assert_spans_inside(reply.spans, reply.output, DOC)
    assert len(model.requests) == 3
    assert f"{REMINDER_WORDS[words]!r} is not found in the document" in framework_text(
        model.requests[2])


# ------------------------------------------------------ (3) every input message, every strategy

INPUTS = ["Name: Eve Stone", "Role: head of finance"]
JOINED = "\n\n".join(INPUTS)


@pytest.mark.parametrize("first", ["answer", "prose"])
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_every_input_message_is_the_source_on_every_strategy(
    strategy: StrategyName, profile: str, first: str,
) -> None:
    model = prose_then(RIGHT, profile=PROFILES[profile]) if first == "prose" else FunctionModel(
        lambda request: answer(request, RIGHT), profile=PROFILES[profile])
    reply = await ReActAgent("a", model).call(INPUTS, Person, ground=True, strategy=strategy)
    assert reply.output == Person(**RIGHT)
    assert reply.spans == {"name": [(6, 15)], "role": [(23, 38)]}
    assert_spans_inside(reply.spans, reply.output, JOINED)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_an_earlier_calls_input_is_no_source(strategy: StrategyName) -> None:
    state = AgentState()
    model = FunctionModel(lambda request: "Noted.")
    agent = ReActAgent("a", model)
    await agent.call("Name: Old Person", state=state)
    model.function = lambda request: answer(request, {"name": "Old Person"})
    reply = await agent.call(DOC, Person, state=state, ground=True, strategy=strategy)
    with pytest.raises(GroundingError, match="'Old Person' is not found in the document"):
        _ = reply.output


class AddsContext(Middleware):
    """Puts a user message of its own into memory at call start."""

    async def on_call_start(self, ex: CallExecution) -> None:
        ex.memory.append(Msg.user("Name: Old Person"))


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_a_message_middleware_adds_at_call_start_is_no_source(
    strategy: StrategyName, first: bool,
) -> None:
    model = FunctionModel(lambda request: answer(
        request, {"name": "Old Person"} if len(model.requests) == 1 else RIGHT))
    agent = ReActAgent("a", model)
    if first:  # its on_call_start runs before the engine's, else after
        agent.middleware.insert(0, AddsContext())
    else:
        agent.middleware.append(AddsContext())
    reply = await agent.call(DOC, Person, ground=True, strategy=strategy)
    assert reply.output == Person(**RIGHT)
    assert_spans_inside(reply.spans, reply.output, DOC)
    assert "'Old Person' is not found in the document" in framework_text(model.requests[1])


# ------------------------------------------------ a call that continues the conversation


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_a_call_without_a_message_grounds_on_the_inputs_its_state_recorded(
    strategy: StrategyName,
) -> None:
    model = FunctionModel(lambda request: "Noted.")
    agent = ReActAgent("a", model)
    state = AgentState()
    await agent.call([*INPUTS], state=state)  # a text call: the state records its inputs
    assert state.input_ids == tuple(m.id for m in state.memory[:2])
    state = AgentState.from_json(state.to_json())  # kept through a store
    model.function = lambda request: answer(request, RIGHT)
    reply = await agent.call(None, Person, state=state, ground=True, strategy=strategy)
    assert reply.output == Person(**RIGHT)
    assert reply.spans == {"name": [(6, 15)], "role": [(23, 38)]}


async def test_a_state_without_recorded_inputs_grounds_on_its_latest_user_messages() -> None:
    # a state saved before input ids were kept: the latest user messages the framework
    # did not add (the reminder after them is the engine's own)
    memory = [Msg.user("Name: Old Person"), Msg.assistant("Noted."), *map(Msg.user, INPUTS),
              Msg.assistant("Noted."), nudge()]
    data = AgentState(memory).to_dict()
    assert "input_ids" not in data
    state = AgentState.from_dict(data)
    reply = await ReActAgent("a", FunctionModel(lambda request: answer(request, RIGHT))).call(
        None, Person, state=state, ground=True, strategy="prompt")
    assert reply.spans == {"name": [(6, 15)], "role": [(23, 38)]}


def test_input_ids_round_trip_and_bad_ones_are_refused() -> None:
    state = AgentState([Msg.user("x", id="m1")], input_ids=["m1"])
    data = state.to_dict()
    assert data["input_ids"] == ["m1"]
    assert AgentState.from_dict(data) == state
    assert AgentState.from_json(state.to_json()).input_ids == ("m1",)
    assert state.copy().input_ids == ("m1",)
    for bad in ("m1", [1], {"m1": 1}):
        with pytest.raises(InvalidStateError, match="input_ids"):
            AgentState.from_dict({**data, "input_ids": bad})
