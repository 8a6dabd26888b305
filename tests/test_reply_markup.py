"""Whole-reply tool-call forms (providers/_reply_markup.py) and GLM-4-0414's
untagged form (providers/glm.py): ``name\\n{JSON}`` as the whole reply text is a
call of an offered tool, streamed, whole and on a generic server; anything
else stays text, unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from agentflow import ReActAgent, Tool
from agentflow.messages import Msg
from agentflow.model import FinishChunk, ModelChunk, TextDelta, ToolCallDelta
from agentflow.providers import HttpSettings
from agentflow.providers._markup import MarkupFilter, resolve_markups
from agentflow.providers.glm import parse_glm4_0414_calls
from agentflow.providers.registry import get_model
from agentflow.reply import generate
from tests.fakes.base import FakeCall, FakeReply
from tests.fakes.glm import GLMFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import close_models, tracked

FAST = HttpSettings(backoff_initial=0.01, max_retries=1, read_timeout=5)
booked: list[tuple[str, int]] = []


def book(city: str, nights: int) -> str:
    """Book a hotel.

    Args:
        city: where.
        nights: how many nights.
    """
    booked.append((city, nights))
    return f"booked {city}"


def get_time() -> str:
    """The time now."""
    return "12:00"


BOOK = Tool.from_function(book).spec
TIME = Tool.from_function(get_time).spec


def glm4_0414(name: str, args: dict[str, Any]) -> str:
    """A call as GLM-4-0414's chat template renders it after ``<|assistant|>``."""
    return f"{name}\n{orjson.dumps(args, option=orjson.OPT_INDENT_2).decode()}"


@pytest.fixture
async def cleanup() -> AsyncIterator[None]:
    yield
    await close_models()


def run_filter(text: str, size: int, tools: list[Any] | None = None,
               extra: list[ModelChunk] | None = None) -> list[ModelChunk]:
    f = MarkupFilter(resolve_markups(["glm", "glm-4-0414"]), [BOOK, TIME] if tools is None
                     else tools)
    out: list[ModelChunk] = []
    for i in range(0, len(text), size):
        out += f.feed([TextDelta(text[i:i + size])])
    out += f.feed([*(extra or []), FinishChunk("stop")])
    return out + f.close()


def text_of(chunks: list[ModelChunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextDelta))


def calls_of(chunks: list[ModelChunk]) -> list[tuple[str, Any]]:
    return [(c.name, orjson.loads(c.arguments)) for c in chunks
            if isinstance(c, ToolCallDelta) and c.name]


@pytest.mark.parametrize("size", [1, 4, 1000])
@pytest.mark.parametrize("text", [
    glm4_0414("book", {"city": "Paris", "nights": 2}),
    "\n" + glm4_0414("book", {"city": "Paris", "nights": 2}) + "\n",
    'book\n{"city": "Paris", "nights": 2}<|observation|>',
    '<|assistant|>book\n{"city": "Paris", "nights": 2}',
    'book \n\n  {"city": "Paris",\n "nights": 2}',
])
def test_the_whole_reply_is_one_call(text: str, size: int) -> None:
    out = run_filter(text, size)
    assert calls_of(out) == [("book", {"city": "Paris", "nights": 2})]
    assert text_of(out) == ""
    assert [c.reason for c in out if isinstance(c, FinishChunk)] == ["tool_calls"]


@pytest.mark.parametrize("separator", ["<|assistant|>", "\n", ""])
def test_parallel_calls_as_further_turns(separator: str) -> None:
    text = (glm4_0414("book", {"city": "A", "nights": 1}) + separator
            + glm4_0414("get_time", {}) + "<|observation|>")
    assert calls_of(run_filter(text, 3)) == [("book", {"city": "A", "nights": 1}),
                                             ("get_time", {})]


@pytest.mark.parametrize("text", [
    'lookup\n{"city": "Paris"}',                       # not an offered tool
    'book\n{"city": "Paris"} and then some prose',     # more than the call
    "book\nThe hotel is booked for two nights.",       # the name, then prose
    'book\n["Paris", 2]',                              # arguments not an object
    'book\n{"city": "Paris", "nights": }',             # not JSON
    'book\n{"city": "Paris"',                          # cut
    'I will call book\n{"city": "Paris"}',             # prose before the name
    'book {"city": "Paris"}',                          # no line break
    "book",                                            # the name alone
    "bo",                                              # a prefix of a name
    "",
    "\n\n",
])
@pytest.mark.parametrize("size", [1, 5, 1000])
def test_anything_else_stays_text_unchanged(text: str, size: int) -> None:
    out = run_filter(text, size)
    assert text_of(out) == text and not calls_of(out)
    assert [c.reason for c in out if isinstance(c, FinishChunk)] == ["stop"]


THOUGHT = "<think>\nThe user wants Paris, 2 nights. I will call book.\n</think>\n"


@pytest.mark.parametrize("size", [1, 4, 1000])
@pytest.mark.parametrize("head", [THOUGHT, THOUGHT.removeprefix("<think>"), "\n" + THOUGHT],
                         ids=["tagged", "opened-in-prompt", "leading-newline"])
def test_reasoning_before_the_call_glm_z1(head: str, size: int) -> None:
    """GLM-Z1 (reasoning GLM-4-0414) served without a reasoning parser writes
    its reasoning first: the call after ``</think>`` is read, the reasoning is
    passed on as written."""
    out = run_filter(head + glm4_0414("book", {"city": "Paris", "nights": 2}), size)
    assert calls_of(out) == [("book", {"city": "Paris", "nights": 2})]
    assert text_of(out) == head.rstrip()  # the whitespace before the call is the call's
    assert [c.reason for c in out if isinstance(c, FinishChunk)] == ["tool_calls"]


@pytest.mark.parametrize("size", [1, 6, 1000])
@pytest.mark.parametrize("text", [
    THOUGHT + "Paris is booked for two nights.",                  # an answer after reasoning
    THOUGHT + 'book\n{"city": "Paris"} and prose',               # more than the call
    THOUGHT + "</think>\n" + 'book\n{"city": "Paris", "nights": 2} x',
    "<think>\nstill thinking, cut",                               # reasoning never closed
])
def test_reasoning_then_anything_else_stays_text(text: str, size: int) -> None:
    out = run_filter(text, size)
    assert text_of(out) == text and not calls_of(out)


def test_a_second_reasoning_end_does_not_restart_the_head() -> None:
    text = THOUGHT + "ok</think>\n" + glm4_0414("book", {"city": "A", "nights": 1})
    out = run_filter(text, 3)
    assert text_of(out) == text and not calls_of(out)


def test_nothing_is_looked_for_without_tools() -> None:
    text = glm4_0414("book", {"city": "Paris", "nights": 2})
    out = run_filter(text, 2, tools=[])
    assert text_of(out) == text and not calls_of(out)
    assert not MarkupFilter(resolve_markups(["glm-4-0414"])).active


def test_prose_is_passed_on_as_soon_as_it_cannot_be_a_call() -> None:
    f = MarkupFilter(resolve_markups(["glm-4-0414"]), [BOOK, TIME])
    assert f.feed([TextDelta("bo")]) == []  # may still be `book`
    assert text_of(f.feed([TextDelta("ok, ")])) == "book, "  # `book,` is no tool's name
    f = MarkupFilter(resolve_markups(["glm-4-0414"]), [BOOK, TIME])
    assert text_of(f.feed([TextDelta("The weather")])) == "The weather"
    f = MarkupFilter(resolve_markups(["glm-4-0414"]), [BOOK, TIME])
    assert f.feed([TextDelta("book\n")]) == []
    assert text_of(f.feed([TextDelta("Done.")])) == "book\nDone."
    assert text_of(f.feed([TextDelta(" More.")])) == " More."  # no hold after that


def test_a_held_head_beside_real_tool_calls_is_text() -> None:
    real = ToolCallDelta(0, id="c1", name="get_time", arguments="{}")
    out = run_filter('book\n{"city": "Paris", "nights": 2}', 4, extra=[real])
    assert text_of(out) == 'book\n{"city": "Paris", "nights": 2}'
    assert calls_of(out) == [("get_time", {})]


def test_parse_names_what_it_refuses() -> None:
    names = frozenset({"book"})
    assert parse_glm4_0414_calls('book\n{"city": "A"}', names) is not None
    assert parse_glm4_0414_calls('book\n{"city": "A"}\nbook\n', names) is None
    assert parse_glm4_0414_calls("  <|observation|>  ", names) is None
    with pytest.raises(ValueError):
        parse_glm4_0414_calls('book\n{"city": A}', names)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("server", "vendor", "model_name"), [
    (GLMFake, "glm", "glm-4-32b-0414-128k"),
    (OpenAIFake, "openai", "THUDM/GLM-4-32B-0414"),
    (OpenAIFake, "openai", "glm-4-9b-0414"),
])
async def test_the_agent_runs_the_call(server: Any, vendor: str, model_name: str, stream: bool,
                                       cleanup: None) -> None:
    booked.clear()
    async with server() as fake:
        fake.add(FakeReply(text=glm4_0414("book", {"city": "Paris", "nights": "2"}),
                           chunk_size=3), FakeReply(text="Booked."))
        model = tracked(get_model(f"{vendor}:{model_name}", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await ReActAgent("t", model, tools=[book]).call("book Paris for 2 nights")
        sent = fake.requests[1].body["messages"]
    assert reply.text == "Booked." and booked == [("Paris", 2)]
    assert [m.get("role") for m in sent][-2:] == ["assistant", "tool"]
    assert not sent[-2].get("content")  # the call is replayed as a call, not as its text


class Hotel(BaseModel):
    city: str
    nights: int


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("server", "vendor", "model_name"), [
    (GLMFake, "glm", "glm-z1-air"),
    (OpenAIFake, "openai", "THUDM/GLM-Z1-32B-0414"),
])
async def test_glm_z1_output_call_after_reasoning(server: Any, vendor: str, model_name: str,
                                                  stream: bool, cleanup: None) -> None:
    text = THOUGHT + glm4_0414("generate_response", {"city": "Oslo", "nights": 4})
    async with server() as fake:
        fake.add(FakeReply(text=text, chunk_size=5))
        model = tracked(get_model(f"{vendor}:{model_name}", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await ReActAgent("t", model).call("extract", Hotel, strategy="tool")
    assert reply.output == Hotel(city="Oslo", nights=4) and len(fake.requests) == 1


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_the_output_tool_in_this_form(stream: bool, cleanup: None) -> None:
    async with GLMFake() as fake:
        fake.add(FakeReply(text=glm4_0414("generate_response", {"city": "Oslo", "nights": 4}),
                           chunk_size=5))
        model = tracked(get_model("glm:glm-4-flash-250414", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await ReActAgent("t", model).call("extract", Hotel)
    assert reply.output == Hotel(city="Oslo", nights=4)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_text_answer_naming_a_tool_is_kept(stream: bool, cleanup: None) -> None:
    text = "book\nis the tool I would use, but I need the city first."
    async with GLMFake() as fake:
        fake.add(FakeReply(text=text, chunk_size=3))
        model = tracked(get_model("glm:glm-4-plus", api_key="k", base_url=fake.url,
                                  settings=FAST, stream=stream))
        reply = await generate(model, [Msg.user("book")], [BOOK])
    assert reply.message.text == text and not reply.message.tool_uses


async def test_real_tool_calls_are_untouched(cleanup: None) -> None:
    async with GLMFake() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("book", {"city": "A", "nights": 1})]))
        model = tracked(get_model("glm:glm-4-plus", api_key="k", base_url=fake.url,
                                  settings=FAST))
        reply = await generate(model, [Msg.user("x")], [BOOK])
    assert [(c.name, dict(c.input)) for c in reply.message.tool_uses] == [
        ("book", {"city": "A", "nights": 1})]
