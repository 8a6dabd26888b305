"""In-band tool-call markup (providers/_markup.py and each vendor's format;
issue 12, rule 2): tool calls written into the reply text become real tool
calls, streamed and whole, on the vendor's adapter and on the generic
OpenAI-compatible one; broken or unknown markup stays text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, Tool
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, TextDelta
from agentflow.providers import HttpSettings
from agentflow.providers._markup import MarkupFilter, resolve_markups
from agentflow.providers.registry import get_model
from agentflow.reply import generate
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.dashscope import DashScopeFake
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.glm import GLMFake
from tests.fakes.minimax import MiniMaxFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import close_models, tracked

FAST = HttpSettings(backoff_initial=0.01, max_retries=1, read_timeout=5)
calls: list[tuple[str, int, list[str], bool | None]] = []


def book(city: str, nights: int, guests: list[str], pets: bool | None = None) -> str:
    """Book a hotel.

    Args:
        city: where.
        nights: how many nights.
        guests: guest names.
        pets: pets allowed.
    """
    calls.append((city, nights, guests, pets))
    return f"booked {city}"


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def minimax(name: str, args: dict[str, Any]) -> str:
    params = "".join(f'<parameter name="{k}">{text_of(v)}</parameter>\n'
                     for k, v in args.items())
    return f'<minimax:tool_call>\n<invoke name="{name}">\n{params}</invoke>\n</minimax:tool_call>'


def minimax_unquoted(name: str, args: dict[str, Any]) -> str:
    params = "".join(f"<parameter name={k}>{text_of(v)}</parameter>\n" for k, v in args.items())
    return f"<minimax:tool_call>\n<invoke name='{name}'>\n{params}</invoke>\n</minimax:tool_call>"


def minimax_m1(name: str, args: dict[str, Any]) -> str:
    """MiniMax-M1: JSON lines in ``<tool_calls>`` (vLLM's minimax tool parser)."""
    line = orjson.dumps({"name": name, "arguments": args}).decode()
    return f"<tool_calls>\n{line}\n</tool_calls>"


def hermes(name: str, args: dict[str, Any]) -> str:
    return f"<tool_call>\n{orjson.dumps({'name': name, 'arguments': args}).decode()}\n</tool_call>"


def qwen_xml(name: str, args: dict[str, Any]) -> str:
    params = "".join(f"<parameter={k}>\n{v if isinstance(v, str) else orjson.dumps(v).decode()}"
                     f"\n</parameter>\n" for k, v in args.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def qwen_bare(name: str, args: dict[str, Any]) -> str:
    """Qwen3-Coder without its ``<tool_call>`` wrapper."""
    return qwen_xml(name, args).removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")


def qwen_unclosed(name: str, args: dict[str, Any]) -> str:
    """Qwen3-Coder leaving out ``</parameter>`` (vLLM's qwen3_coder parser tolerates it)."""
    return qwen_xml(name, args).replace("\n</parameter>", "")


def llama_function(name: str, args: dict[str, Any]) -> str:
    """Llama 3.1's custom tool-call form."""
    return f"<function={name}>{orjson.dumps(args).decode()}</function>"


def glm(name: str, args: dict[str, Any]) -> str:
    pairs = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>"
                    f"{v if isinstance(v, str) else orjson.dumps(v).decode()}</arg_value>\n"
                    for k, v in args.items())
    return f"<tool_call>{name}\n{pairs}</tool_call>"


def glm_compact(name: str, args: dict[str, Any]) -> str:
    """GLM-4.7 / GLM-5's template: no newlines between the name and the pairs."""
    pairs = "".join(f"<arg_key>{k}</arg_key><arg_value>"
                    f"{v if isinstance(v, str) else orjson.dumps(v).decode()}</arg_value>"
                    for k, v in args.items())
    return f"<tool_call>{name}{pairs}</tool_call>"


def deepseek_v3(name: str, args: dict[str, Any]) -> str:
    return ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
            f"{name}\n```json\n{orjson.dumps(args).decode()}\n```<｜tool▁call▁end｜>"
            "<｜tool▁calls▁end｜>")


def deepseek_v31(name: str, args: dict[str, Any]) -> str:
    return ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
            f"{name}<｜tool▁sep｜>{orjson.dumps(args).decode()}<｜tool▁call▁end｜>"
            "<｜tool▁calls▁end｜>")


def dsml(name: str, args: dict[str, Any], wrapper: str = "function_calls",
         bar: str = "｜") -> str:
    """DeepSeek V3.2's DSML (V4: ``tool_calls``), as its encoding_dsv32.py writes it."""
    params = "".join(
        f'<{bar}DSML{bar}parameter name="{k}" string="{str(isinstance(v, str)).lower()}">'
        f"{text_of(v)}</{bar}DSML{bar}parameter>\n" for k, v in args.items())
    return (f"<{bar}DSML{bar}{wrapper}>\n<{bar}DSML{bar}invoke name=\"{name}\">\n{params}"
            f"</{bar}DSML{bar}invoke>\n</{bar}DSML{bar}{wrapper}>")


def dsml_v4(name: str, args: dict[str, Any]) -> str:
    return dsml(name, args, "tool_calls")


def dsml_ascii(name: str, args: dict[str, Any]) -> str:
    return dsml(name, args, bar="|")


WRITERS = {"minimax": minimax, "minimax-unquoted": minimax_unquoted, "minimax-m1": minimax_m1,
           "hermes": hermes, "qwen-bare": qwen_bare, "llama-function": llama_function,
           "qwen-unclosed": qwen_unclosed,
           "qwen-xml": qwen_xml, "glm": glm, "glm-compact": glm_compact,
           "deepseek-v3": deepseek_v3, "deepseek-v3.1": deepseek_v31,
           "deepseek-v3.2-dsml": dsml, "deepseek-v4-dsml": dsml_v4,
           "deepseek-dsml-ascii": dsml_ascii}
VENDORS = {  # format -> (vendor, model, fake)
    "minimax": ("minimax", "MiniMax-M2", MiniMaxFake),
    "minimax-unquoted": ("minimax", "MiniMax-M2.5", MiniMaxFake),
    "minimax-m1": ("minimax", "MiniMax-M1", MiniMaxFake),
    "hermes": ("dashscope", "qwen-plus", DashScopeFake),
    "qwen-xml": ("dashscope", "qwen3-coder-plus", DashScopeFake),
    "qwen-bare": ("dashscope", "qwen3-coder-plus", DashScopeFake),
    "qwen-unclosed": ("dashscope", "qwen3-coder-flash", DashScopeFake),
    "llama-function": ("dashscope", "qwen-plus", DashScopeFake),
    "glm": ("glm", "glm-4.5", GLMFake),
    "glm-compact": ("glm", "glm-4.7", GLMFake),
    "deepseek-v3": ("deepseek", "deepseek-chat", DeepSeekFake),
    "deepseek-v3.1": ("deepseek", "deepseek-chat", DeepSeekFake),
    "deepseek-v3.2-dsml": ("deepseek", "deepseek-chat", DeepSeekFake),
    "deepseek-v4-dsml": ("deepseek", "deepseek-v4-flash", DeepSeekFake),
    "deepseek-dsml-ascii": ("deepseek", "deepseek-reasoner", DeepSeekFake),
}
GENERIC_MODELS = {"minimax": "MiniMax-M2-GGUF", "minimax-unquoted": "MiniMax-M2.5",
                  "minimax-m1": "MiniMaxAI/MiniMax-M1-80k", "qwen-bare": "Qwen3-Coder-30B-A3B",
                  "llama-function": "Meta-Llama-3.1-8B-Instruct",
                  "qwen-unclosed": "Qwen/Qwen3-Coder-480B-A35B-Instruct",
                  "hermes": "Qwen2.5-7B-Instruct",
                  "qwen-xml": "Qwen3-Coder-30B", "glm": "GLM-4.5-Air",
                  "glm-compact": "GLM-4.7-Flash",
                  "deepseek-v3": "DeepSeek-V3", "deepseek-v3.1": "deepseek-v3.1",
                  "deepseek-v3.2-dsml": "deepseek-ai/DeepSeek-V3.2",
                  "deepseek-v4-dsml": "DeepSeek-V4-Flash", "deepseek-dsml-ascii": "deepseek-v3.2"}
ARGS = [
    ({"city": "Paris", "nights": 2, "guests": ["Ann", "Bo"]}, ("Paris", 2, ["Ann", "Bo"], None)),
    ({"city": "42", "nights": "3", "guests": ["x"], "pets": True}, ("42", 3, ["x"], True)),
]


@pytest.fixture
async def cleanup() -> AsyncIterator[None]:
    yield
    await close_models()


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("args", "expected"), ARGS)
@pytest.mark.parametrize("fmt", list(WRITERS))
async def test_vendor_adapter_reads_its_markup(fmt: str, args: dict[str, Any], expected: Any,
                                               stream: bool, cleanup: None) -> None:
    vendor, model_name, fake_class = VENDORS[fmt]
    text = f"I will book it now.\n{WRITERS[fmt](name='book', args=args)}"
    calls.clear()
    async with fake_class() as fake:
        fake.add(FakeReply(text=text, chunk_size=5), FakeReply(text="Booked."))
        model = tracked(get_model(f"{vendor}:{model_name}", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await ReActAgent("t", model, tools=[book]).call("book a hotel")
    assert reply.text == "Booked."
    assert calls == [expected]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("fmt", list(WRITERS))
async def test_generic_server_picks_markups_from_the_model_name(fmt: str, stream: bool,
                                                                cleanup: None) -> None:
    args, expected = ARGS[0]
    calls.clear()
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=WRITERS[fmt]("book", args), chunk_size=3), FakeReply(text="ok"))
        model = tracked(get_model(f"openai:{GENERIC_MODELS[fmt]}", api_key="k",
                                  base_url=fake.url, settings=FAST, stream=stream))
        reply = await ReActAgent("t", model, tools=[book]).call("book")
    assert reply.text == "ok" and calls == [expected]


async def test_markups_are_offered_explicitly_and_the_text_is_cleaned(cleanup: None) -> None:
    args, _ = ARGS[1]
    async with OpenAIFake() as fake:
        text = f"Sure.{minimax('book', args)} Done soon."
        fake.add(FakeReply(text=text, chunk_size=4))
        model = tracked(get_model("openai:my-finetune", api_key="k", base_url=fake.url,
                                  settings=FAST, tool_markups=["minimax"]))
        reply = await generate(model, [Msg.user("book")], [Tool.from_function(book).spec])
    assert reply.message.text == "Sure. Done soon."
    assert [(c.name, dict(c.input)) for c in reply.message.tool_uses] == [
        ("book", {"city": "42", "nights": 3, "guests": ["x"], "pets": True})]
    assert reply.finish_reason == "tool_calls"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("fmt", [f for f in WRITERS if not VENDORS[f][1].startswith("qwen3-coder")])
async def test_a_call_written_in_the_reasoning_only_is_the_replys_call(
        fmt: str, stream: bool, cleanup: None) -> None:
    """Reasoning models (DeepSeek V3.2/V4 DSML, a vLLM reasoning parser that
    kept the call inside <think>) write the call in reasoning_content and no
    content: it is read as the tool call, not lost. (Qwen3-Coder, the
    vendor model of the XML formats, has no thinking mode.)"""
    vendor, model_name, fake_class = VENDORS[fmt]
    args, expected = ARGS[0]
    calls.clear()
    async with fake_class() as fake:
        fake.add(FakeReply(thinking=f"Book it.\n{WRITERS[fmt]('book', args)}", chunk_size=5),
                 FakeReply(text="Booked."))
        model = tracked(get_model(f"{vendor}:{model_name}", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        agent = ReActAgent("t", model, tools=[book], options=GenerateOptions(thinking=True))
        reply = await agent.call("book a hotel")
    assert reply.text == "Booked."
    assert calls == [expected]


async def test_reasoning_markup_is_not_a_second_call_when_the_answer_calls() -> None:
    from agentflow.model import FinishChunk, ThinkingDelta, ToolCallDelta

    block = dsml("book", {"city": "Paris"})
    for answer in ([TextDelta(hermes("book", {"city": "Oslo"}))],
                   [ToolCallDelta(0, id="c1", name="book", arguments='{"city": "Oslo"}')]):
        markup = MarkupFilter(resolve_markups(["deepseek-dsml", "hermes"]))
        out = markup.feed([ThinkingDelta("Plan: "), ThinkingDelta(block[:9]),
                           ThinkingDelta(block[9:]), *answer, FinishChunk("stop")])
        out += markup.close()
        named = [c.arguments for c in out if isinstance(c, ToolCallDelta)]
        assert named == ['{"city":"Oslo"}'] or named == ['{"city": "Oslo"}']
        thought = "".join(c.text for c in out if isinstance(c, ThinkingDelta))
        assert thought == "Plan: " + block  # given back to the reasoning, as written
    markup = MarkupFilter(resolve_markups(["deepseek-dsml"]))
    out = markup.feed([ThinkingDelta("Plan: " + block), FinishChunk("stop")])
    assert [c.name for c in out if isinstance(c, ToolCallDelta)] == ["book"]
    assert [c.reason for c in out if isinstance(c, FinishChunk)] == ["tool_calls"]
    assert "".join(c.text for c in out if isinstance(c, ThinkingDelta)) == "Plan: "


class Hotel(BaseModel):
    city: str
    nights: int


@pytest.mark.parametrize("fmt", ["minimax", "glm", "hermes", "deepseek-v4-dsml", "minimax-m1"])
async def test_the_output_tool_arrives_as_markup(fmt: str, cleanup: None) -> None:
    vendor, model_name, fake_class = VENDORS[fmt]
    async with fake_class() as fake:
        fake.add(FakeReply(text=WRITERS[fmt]("generate_response", {"city": "Oslo", "nights": 4}),
                           chunk_size=6))
        model = tracked(get_model(f"{vendor}:{model_name}", api_key="k", base_url=fake.url,
                                  settings=FAST))
        reply = await ReActAgent("t", model).call("extract", Hotel)
    assert reply.output == Hotel(city="Oslo", nights=4)


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "book", "arguments": {"city": "Paris"',              # never closed
    "<tool_call>this is not a call at all!</tool_call> then prose",          # unknown body
    "<function_call>book(city='Paris')</function_call>",                     # unknown markup
    "<minimax:tool_call><invoke nam='book'></invoke></minimax:tool_call>",   # broken invoke
    "Use <tool_call>...</tool_call> tags to call tools.",                    # prose about tags
    "<｜DSML｜function_calls>call book with Paris</｜DSML｜function_calls>",   # no invoke
    '<tool_calls>{"name": "book", "arguments": {}} and then</tool_calls>',  # not JSON lines
    "Call <function=book>with Paris please</function> now.",                # prose inside
    '<｜DSML｜function_calls><｜DSML｜invoke name="book"><｜DSML｜parameter name="n" '
    'string="false">{bad</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>',
])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_broken_or_unknown_markup_stays_text(text: str, stream: bool,
                                                   cleanup: None) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=3))
        model = tracked(get_model("openai:any-model", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream,
                                  tool_markups=["hermes", "minimax", "glm", "deepseek-dsml",
                                                "minimax-m1", "qwen-function"]))
        reply = await generate(model, [Msg.user("x")])
    assert reply.message.text == text and not reply.message.tool_uses


async def test_markup_after_real_tool_calls_stays_text(cleanup: None) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("book", {"city": "A", "nights": 1,
                                                         "guests": []})]))
        model = tracked(get_model("openai:qwen3-8b", api_key="k", base_url=fake.url,
                                  settings=FAST))
        reply = await generate(model, [Msg.user("x")])
    assert [c.name for c in reply.message.tool_uses] == ["book"]


def test_a_start_token_split_across_chunks() -> None:
    text = "ok " + hermes("book", {"city": "Rome"}) + " bye"
    for size in (1, 2, 7):
        f = MarkupFilter(resolve_markups(["hermes"]))
        out = []
        for i in range(0, len(text), size):
            out += f.feed([TextDelta(text[i:i + size])])
        out += f.close()
        assert "".join(c.text for c in out if isinstance(c, TextDelta)) == "ok  bye"
        assert [c.name for c in out if c.type == "tool_call"] == ["book"]


def test_unknown_markup_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool-call markup"):
        resolve_markups(["nope"])


def test_a_filter_with_nothing_to_look_for_passes_chunks_through_untouched() -> None:
    """No markup formats (OpenAI's own host, Anthropic...): the reply's chunk
    list is passed on as it is, with no per-chunk work."""
    from agentflow.model import FinishChunk

    chunks = [TextDelta('<tool_call>{"name": "x"}</tool_call>'), FinishChunk("stop", "stop")]
    idle = MarkupFilter(())
    assert not idle.active
    assert idle.feed(chunks) is chunks and idle.close() == []
    assert idle.feed(iter(chunks)) == chunks
    looking = MarkupFilter(resolve_markups(["hermes"]))
    assert [c.type for c in looking.feed(chunks) + looking.close()] == ["tool_call", "finish"]


@pytest.mark.parametrize("separator", ["\n", "", " "], ids=["lines", "glued", "space"])
async def test_several_hermes_calls_in_one_block(separator: str, cleanup: None) -> None:
    # Qwen models sometimes put parallel calls in one <tool_call> block.
    first = orjson.dumps({"name": "book", "arguments": {"city": "A", "nights": 1,
                                                        "guests": []}}).decode()
    second = orjson.dumps({"name": "book", "arguments": orjson.dumps(
        {"city": "B", "nights": 2, "guests": ["x"]}).decode()}).decode()
    calls.clear()
    async with DashScopeFake() as fake:
        fake.add(FakeReply(text=f"<tool_call>\n{first}{separator}{second}\n</tool_call>",
                           chunk_size=7), FakeReply(text="Booked both."))
        model = tracked(get_model("dashscope:qwen-plus", api_key="k", base_url=fake.url,
                                  settings=FAST))
        reply = await ReActAgent("t", model, tools=[book]).call("book two")
    assert reply.text == "Booked both."
    assert sorted(calls) == [("A", 1, [], None), ("B", 2, ["x"], None)]


@pytest.mark.parametrize("block", [
    '<tool_call>\n{"name": "book", "arguments": {"city": "A", "nights": 1, "guests": []}}}\n'
    "</tool_call>",                                                  # one brace too many
    '<tool_call>\n{"name": "book", "arguments": {"city": "A", "nights": 1, "guests": []}\n'
    "</tool_call>",                                                  # one brace too few
])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_hermes_block_with_a_brace_too_many_or_too_few(block: str, stream: bool,
                                                               cleanup: None) -> None:
    calls.clear()
    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=block, chunk_size=4), FakeReply(text="ok"))
        model = tracked(get_model("openai:Qwen2.5-72B-Instruct", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await ReActAgent("t", model, tools=[book]).call("book")
    assert reply.text == "ok" and calls == [("A", 1, [], None)]


def kimi(name: str, args: dict[str, Any], section: str = "tool_calls_section") -> str:
    """Kimi K2's section, as its chat template writes it (functions.NAME:INDEX)."""
    return (f"<|{section}_begin|>\n<|tool_call_begin|>functions.{name}:0"
            f"<|tool_call_argument_begin|>{orjson.dumps(args).decode()}<|tool_call_end|>\n"
            f"<|{section}_end|>")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("where", ["text", "thinking"])
@pytest.mark.parametrize("section", ["tool_calls_section", "tool_call_section"])
@pytest.mark.parametrize("model_name", ["Kimi-K2-Instruct", "moonshotai/Kimi-K2-Thinking"])
async def test_kimi_k2_sections_on_a_generic_server(model_name: str, section: str, where: str,
                                                    stream: bool, cleanup: None) -> None:
    """Kimi-K2-Thinking writes the section in its reasoning as often as in the text."""
    args, expected = ARGS[1]
    calls.clear()
    async with OpenAIFake() as fake:
        fake.add(FakeReply(**{where: "Booking." + kimi("book", args, section)}, chunk_size=3),
                 FakeReply(text="ok"))
        model = tracked(get_model(f"openai:{model_name}", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await ReActAgent("t", model, tools=[book]).call("book")
    assert reply.text == "ok" and calls == [expected]


def test_kimi_k2_section_parsing() -> None:
    from agentflow.providers.moonshot import parse_kimi_calls

    two = ('<|tool_call_begin|>functions.book:0<|tool_call_argument_begin|>{"city": "A"}'
           '<|tool_call_end|>\n<|tool_call_begin|> lookup:1 <|tool_call_argument_begin|>'
           "<|tool_call_end|><|tool_call_begin|>get_time<|tool_call_argument_begin|>{}"
           "<|tool_call_end|>")
    assert [(c.name, dict(c.arguments)) for c in parse_kimi_calls(two) or []] == [
        ("book", {"city": "A"}), ("lookup", {}), ("get_time", {})]
    assert parse_kimi_calls("no calls at all") is None
    assert parse_kimi_calls(two + " and some prose") is None
    assert parse_kimi_calls('<|tool_call_begin|>functions.book:0<|tool_call_argument_begin|>'
                            '["not", "an", "object"]<|tool_call_end|>') is None
