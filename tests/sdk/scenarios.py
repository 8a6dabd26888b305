"""The logical requests and replies the SDK conformance suite runs on every
vendor (tests/test_sdk_conformance.py).

A ``Scenario`` is one logical request in agentflow's own terms (messages,
tools, options); each vendor's adapter turns it into a body, and each SDK
witness (tests/sdk/witnesses.py) turns the same scenario into an SDK call.
A ``Result`` is what a reply meant: text, thinking, tool calls, usage and the
vendor's raw finish reason, read either by our adapter (``read_ours``) or by
the vendor's SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from pydantic import BaseModel

from agentflow.content import DocumentBlock, ImageBlock
from agentflow.messages import Msg, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentflow.model import (
    ChatModel,
    FinishChunk,
    GenerateOptions,
    ModelProfile,
    ResponseFormat,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    UsageChunk,
)
from agentflow.output.schema import OutputSpec
from tests import media
from tests.fakes.anthropic import signature_of
from tests.fakes.base import FakeCall, FakeReply

__all__ = ["MEDIA_SCENARIOS", "REPLIES", "SCENARIOS", "Result", "Scenario", "read_ours",
           "read_scenario",
           "scenario_applies"]


class Address(BaseModel):
    street: str
    city: str


class Contact(BaseModel):
    """A person to contact."""

    name: str
    email: str | None = None
    kind: Literal["person", "company"] = "person"
    addresses: list[Address] = []


SYSTEM = "You look people up. Be brief."
LOOKUP = ToolSpec("lookup", "Look a person up by name.", {
    "type": "object", "properties": {"query": {"type": "string", "description": "a name"}},
    "required": ["query"], "additionalProperties": False})
WEATHER = ToolSpec("weather", "The weather in a city.", {
    "type": "object", "properties": {"city": {"type": "string"},
                                     "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city", "unit"], "additionalProperties": False})
TOOLS = (LOOKUP, WEATHER)

HISTORY = (
    Msg.system(SYSTEM),
    Msg.user("Find Ann and Bob."),
    Msg("assistant", [ToolUseBlock("call_1", "lookup", {"query": "Ann"}),
                      ToolUseBlock("call_2", "lookup", {"query": "Bob"})]),
    Msg("tool", [ToolResultBlock("call_1", "Ann: ann@example.org", name="lookup"),
                 ToolResultBlock("call_2", "no such person", is_error=True, name="lookup")]),
)


THOUGHT = "Two lookups: Ann, then Bob."
HISTORY_THINKING = (
    HISTORY[0], HISTORY[1],
    Msg("assistant", [ThinkingBlock(THOUGHT, signature=signature_of(THOUGHT)),
                      *HISTORY[2].content]),
    HISTORY[3],
)
"""The tool loop with the assistant's reasoning in it (signed the way the
Anthropic fake signs, so it verifies; other vendors ignore the signature)."""


@dataclass(frozen=True)
class Scenario:
    """One logical request: ``needs`` names the profile capability it needs
    (``"native"``, ``"thinking"``, a tool-choice mode, an input modality) or ``""``."""

    id: str
    messages: tuple[Msg, ...]
    tools: tuple[ToolSpec, ...] = ()
    options: GenerateOptions = field(default_factory=GenerateOptions)
    needs: str = ""
    native: bool = False

    def for_profile(self, profile: ModelProfile) -> GenerateOptions:
        """The options, with the native schema in the profile's dialect."""
        if not self.native:
            return self.options
        spec = OutputSpec.of(Contact)
        schema = spec.schema_for(profile.schema_dialect)
        fmt = ResponseFormat("json_schema", schema.schema, spec.name, schema.strict,
                             spec.description)
        return GenerateOptions(response_format=fmt, **_opts(self.options))


def _opts(options: GenerateOptions) -> dict[str, Any]:
    return {"thinking": options.thinking, "max_tokens": options.max_tokens}


_ASK = (Msg.system(SYSTEM), Msg.user("Where is Ann? Use the tools."))

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("text", (Msg.system(SYSTEM), Msg.user("Say hello.")),
             options=GenerateOptions(max_tokens=512, temperature=0.0)),
    Scenario("tools", _ASK, TOOLS),
    Scenario("choice-auto", _ASK, TOOLS, GenerateOptions(tool_choice=ToolChoice.AUTO),
             needs="auto"),
    Scenario("choice-none", _ASK, TOOLS, GenerateOptions(tool_choice=ToolChoice.NONE),
             needs="none"),
    Scenario("choice-required", _ASK, TOOLS,
             GenerateOptions(tool_choice=ToolChoice.REQUIRED, thinking=False),
             needs="required"),
    Scenario("choice-specific", _ASK, TOOLS,
             GenerateOptions(tool_choice=ToolChoice.specific("lookup"), thinking=False),
             needs="specific"),
    Scenario("native", (Msg.system(SYSTEM), Msg.user("Extract: Ann, ann@example.org")),
             needs="native", native=True),
    Scenario("multi-turn", HISTORY, TOOLS),
    Scenario("multi-turn-thinking", HISTORY_THINKING, TOOLS, GenerateOptions(thinking=True),
             needs="thinking"),
    Scenario("thinking-on", _ASK, TOOLS, GenerateOptions(thinking=True), needs="thinking"),
    Scenario("thinking-off", _ASK, TOOLS, GenerateOptions(thinking=False)),
    Scenario("image", (Msg.system(SYSTEM), Msg.user(
        ["What is in this picture?", ImageBlock.from_bytes(media.png(4, 3)),
         ImageBlock.from_bytes(media.JPEG)])), needs="image"),
    Scenario("pdf", (Msg.system(SYSTEM), Msg.user(
        ["Summarize this document.",
         DocumentBlock.from_bytes(media.pdf(pages=2), filename="report.pdf")])), needs="pdf"),
)
MEDIA_SCENARIOS = ("image", "pdf")


def scenario_applies(scenario: Scenario, profile: ModelProfile) -> bool:
    """Whether the profile can run ``scenario`` (other ones are refused by
    the adapter before sending, tested elsewhere)."""
    need = scenario.needs
    if need in ("image", "pdf"):
        return need in profile.input_modalities
    if need == "native":
        return profile.native_output == "json_schema"
    if need == "thinking":
        return profile.supports_thinking
    if need in ("auto", "none", "required", "specific"):
        choice = scenario.options.tool_choice
        return choice is not None and profile.allows_tool_choice(choice, scenario.options)
    return True


# ----------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Result:
    """What a reply meant. ``tool_calls``: ``(name, arguments)`` pairs;
    ``usage``: (input, output) tokens; ``finish``: the vendor's raw value."""

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    usage: tuple[int, int] = (0, 0)
    finish: str = ""


REPLIES: dict[str, FakeReply] = {
    "thinking-text": FakeReply(text="Ann lives in Paris.", thinking="The user asks about Ann.",
                               usage=(21, 9)),
    "two-tool-calls": FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"}, "call_a"),
                                            FakeCall("weather", {"city": "Paris", "unit": "c"},
                                                     "call_b")],
                                usage=(30, 14)),
}
"""The replies every fake renders for every SDK (the error case is the
vendor's own 400, see the test module)."""


def read_scenario(thinking: bool) -> Scenario:
    """The request whose reply both sides read: one user turn, thinking asked
    for when the model has it (vendors send thoughts only when asked)."""
    return Scenario("read", (Msg.user("hi"),), options=GenerateOptions(thinking=thinking or None))


async def read_ours(model: ChatModel, scenario: Scenario) -> Result:
    """Our adapter's reading of one reply to ``scenario``."""
    text, thinking, finish = [], [], ""
    calls: dict[int, dict[str, Any]] = {}
    usage = (0, 0)
    async for chunk in model.stream(scenario.messages, scenario.tools,
                                    scenario.for_profile(model.profile)):
        if isinstance(chunk, TextDelta):
            text.append(chunk.text)
        elif isinstance(chunk, ThinkingDelta):
            thinking.append(chunk.text)
        elif isinstance(chunk, ToolCallDelta):
            call = calls.setdefault(chunk.index, {"name": "", "args": "", "obj": None})
            call["name"] = chunk.name or call["name"]
            raw = chunk.arguments
            call["args"] += raw.decode() if isinstance(raw, bytes) else raw
            if chunk.arguments_obj is not None:
                call["obj"] = dict(chunk.arguments_obj)
        elif isinstance(chunk, UsageChunk):
            usage = (chunk.usage.input_tokens, chunk.usage.output_tokens)
        elif isinstance(chunk, FinishChunk):
            finish = chunk.raw
    tool_calls = tuple(
        (c["name"], c["obj"] if c["obj"] is not None else orjson.loads(c["args"] or "{}"))
        for _, c in sorted(calls.items()))
    return Result("".join(text), "".join(thinking), tool_calls, usage, finish)


def tool_result_texts(messages: Sequence[Msg]) -> list[str]:
    """The tool outputs of a conversation, in order."""
    return [b.output for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
