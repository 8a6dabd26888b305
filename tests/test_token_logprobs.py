"""Token log-probabilities as a confidence signal (issue 30, item 4): the
OpenAI adapter asks for them when a request sets ``logprobs`` (``logprobs:
true, top_logprobs``) and reads ``choices[].logprobs.content[]`` from whole
replies and stream chunks alike (against the protocol-faithful fake); the
structured-output path maps them onto the output's fields, and extraction
weighs them into each field's confidence."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from agentflow import ReActAgent
from agentflow.batch import extract_many
from agentflow.extraction.confidence import DOUBT_BELOW, DOUBTED, GROUNDED, HELD, REVIEW_BELOW
from agentflow.grounding import Grounded
from agentflow.messages import TOKEN_LOGPROBS, Msg
from agentflow.model import GenerateOptions, TokenLogprob
from agentflow.output.token_confidence import field_probabilities, value_spans
from agentflow.providers._openai_chunks import token_logprobs
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate
from agentflow.state import AgentState
from tests.fakes.base import FakeReply
from tests.fakes.openai import DEFAULT_LOGPROB, OpenAIFake, fake_tokens


def _model(fake: OpenAIFake, name: str = "gpt-4o-mini", stream: bool = True) -> OpenAIChatModel:
    return OpenAIChatModel(name, base_url=fake.url, api_key="k", stream=stream)


@pytest.mark.parametrize("stream", [True, False])
async def test_the_adapter_asks_for_and_reads_each_tokens_logprob(stream: bool) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply("Paris is nice", extra={"token_logprobs": {"nice": -2.5}}),
                 FakeReply("Paris is nice"))
        model = _model(fake, stream=stream)
        reply = await generate(model, [Msg.user("hi")], (), GenerateOptions(logprobs=True))
        plain = await generate(model, [Msg.user("hi")], ())
    asked, unasked = fake.requests[0].body, fake.requests[1].body
    assert asked["logprobs"] is True and asked["top_logprobs"] == 1
    assert "logprobs" not in unasked and "top_logprobs" not in unasked
    tokens = reply.message.metadata[TOKEN_LOGPROBS]
    assert [t.token for t in tokens] == fake_tokens("Paris is nice")
    assert [t.logprob for t in tokens] == [DEFAULT_LOGPROB] * 4 + [-2.5]
    assert tokens[0].bytes == b"Paris"
    assert reply.message.text == "Paris is nice" and TOKEN_LOGPROBS not in plain.message.metadata


async def test_a_model_that_refuses_logprobs_is_never_asked() -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply("ok"))
        await generate(_model(fake, "o3"), [Msg.user("hi")], (), GenerateOptions(logprobs=True))
    assert "logprobs" not in fake.requests[0].body  # reasoning models refuse the field


def _tokens(pieces: list[tuple[str, float]]) -> list[TokenLogprob]:
    return [TokenLogprob(text, logprob) for text, logprob in pieces]


def test_tokens_map_onto_the_content_of_each_field() -> None:
    text = '{"name": "Ada Lovelace", "tags": ["x", "yz"], "age": 36, "city": null}'
    spans = value_spans(text)
    assert [text[s:e] for s, e in spans["name"]] == ["Ada Lovelace"]
    assert [text[s:e] for s, e in spans["tags"]] == ["x", "yz"]
    assert [text[s:e] for s, e in spans["age"] + spans["city"]] == ["36", "null"]
    tokens = _tokens([('{"', -3.0), ("name", -2.0), ('":', -1.0), (' "', -4.0), ("Ada", -0.1),
                      (" Lov", -0.2), ("elace", -0.01), ('",', -5.0), (' "tags": ["', -1.0),
                      ("x", -0.3), ('", "', -6.0), ("y", -0.05), ("z", -1.5), ('"], "age": ', -2.0),
                      ("36", -0.4), (', "city": ', -2.0), ("null", -0.7), ("}", -9.0)])
    probs = field_probabilities(tokens)
    # quotes, commas and keys are the grammar's: only the tokens that wrote content count
    assert probs == pytest.approx({"name": math.exp(-0.2), "tags": math.exp(-1.5),
                                   "age": math.exp(-0.4), "city": math.exp(-0.7)})
    assert field_probabilities([]) == {} and field_probabilities(_tokens([("no", 0.0)])) == {}


@pytest.mark.parametrize(("text", "expected"), [
    # escapes in keys and values: keys read as JSON reads them, spans over the raw text
    ('{"a\\"b": "x\\"y", "\\u00e9": "\\n"}', {'a"b': ['x\\"y'], "\u00e9": ["\\n"]}),
    # numbers as json reads them, and the literals Python's decoder accepts
    ('{"n": -1.5e+3, "z": 0, "t": true, "f": false, "x": NaN, "i": -Infinity, "e": ""}',
     {"n": ["-1.5e+3"], "z": ["0"], "t": ["true"], "f": ["false"], "x": ["NaN"],
      "i": ["-Infinity"], "e": ['""']}),
    # whitespace of any JSON kind around members; nested values after scalar ones
    ('{ "a" :\t"x" ,\n "b": [1, {"c": "d"}], "e": {"f": null} }',
     {"a": ["x"], "b": ["1", "d"], "e": ["null"]}),
    # a reply cut short: the members read whole before the cut
    ('{"a": "x", "b": 12, "c": "unfini', {"a": ["x"], "b": ["12"]}),
    # a bad escape or a raw control character ends the reading, as json's scanner does
    ('{"a": "x", "b": "bad \\q", "c": "y"}', {"a": ["x"]}),
    ('{"a": "x", "b": "tab\there", "c": "y"}', {"a": ["x"]}),
    ('{"a\\q": "x", "b": "y"}', {}),
])
def test_value_spans_read_members_as_json_does(text: str, expected: dict[str, list[str]]) -> None:
    spans = value_spans(text)
    assert {key: [text[s:e] for s, e in found] for key, found in spans.items()} == expected


class Contact(BaseModel):
    name: str | None = Field(None, description="full name")
    email: str | None = Field(None, description="e-mail address")


TEXT = "Hi, I'm Ada Lovelace. Reach me at ada@example.org today."


async def test_a_value_the_model_was_unsure_of_is_doubted() -> None:
    answer = json.dumps({"name": "Ada Lovelace", "email": "ada@example.org"})
    unsure = math.log(DOUBT_BELOW / 2)
    async with OpenAIFake() as fake:
        fake.add(FakeReply(answer), FakeReply(answer, extra={"token_logprobs": {"org": unsure}}))
        model = _model(fake)
        results = [r async for r in extract_many(model, [TEXT, TEXT], Contact, concurrency=1)]
    assert all(r.body.get("logprobs") is True for r in fake.requests)  # extraction asks
    sure, doubted = results
    assert sure.ok and doubted.ok
    assert sure.token_probs["email"] == pytest.approx(math.exp(DEFAULT_LOGPROB))
    assert doubted.token_probs["email"] == pytest.approx(DOUBT_BELOW / 2)
    # no rule pins these values: grounded, they need review; the unsure one ranks lower
    assert sure.confidence["email"] == GROUNDED < REVIEW_BELOW
    assert doubted.confidence["email"] == DOUBTED < GROUNDED
    assert "email" in doubted.needs_review and doubted.confidence["name"] == GROUNDED


async def test_a_stored_conversation_keeps_the_field_figures_not_the_tokens() -> None:
    answer = json.dumps({"name": "Ada Lovelace", "email": "ada@example.org"})
    async with OpenAIFake() as fake:
        fake.add(FakeReply(answer))
        agent = ReActAgent("x", _model(fake), options=GenerateOptions(logprobs=True))
        state = AgentState()
        reply = await agent.call(TEXT, Contact, state=state)
    assert set(reply.metadata["field_probs"]) == {"name", "email"}
    assert state.memory and all(TOKEN_LOGPROBS not in m.metadata for m in state.memory)


class Pinned(BaseModel):
    email: Annotated[str | None, Grounded(whole_tokens=True, longest=True)] = Field(
        None, pattern=r"^[^@\s]+@[^@\s]+\.[a-z]+$")


async def test_a_value_a_rule_pins_down_is_sure_however_unlikely_its_tokens() -> None:
    answer = json.dumps({"email": "ada@example.org"})
    async with OpenAIFake() as fake:
        fake.add(FakeReply(answer, extra={"token_logprobs": {"org": -9.0}}))
        (result,) = [r async for r in extract_many(_model(fake), [TEXT], Pinned)]
    assert result.token_probs["email"] < DOUBT_BELOW
    assert result.confidence["email"] == HELD and result.needs_review == ()


_A = {"token": "a", "logprob": -0.5, "bytes": [97]}


@pytest.mark.parametrize(("content", "expected"), [
    ([_A, {"token": "é", "logprob": -1.0, "bytes": [195, 169]}],
     [("a", -0.5, b"a"), ("é", -1.0, b"\xc3\xa9")]),
    ([{**_A, "logprob": -1}], [("a", -1.0, b"a")]),  # an integer logprob: read as a float
    ([{**_A, "logprob": True}], []),  # a boolean is no logprob: the entry is skipped
    ([{**_A, "bytes": [300]}], [("a", -0.5, None)]),  # not byte values: left out
    ([{"token": "a", "logprob": -0.5}], [("a", -0.5, None)]),  # no bytes given
    ([{**_A, "bytes": None}], [("a", -0.5, None)]),
    (["x", _A], [("a", -0.5, b"a")]),  # an entry that is no object: skipped
    ([{**_A, "token": 3}], []),  # a token that is no text: skipped
    ([], []),
])
def test_each_token_entry_is_read_or_skipped_alike(
        content: list[Any], expected: list[tuple[str, float, bytes | None]]) -> None:
    # well-formed replies are read in one C pass, others entry by entry: the same tokens
    tokens = token_logprobs({"content": content})
    assert [tuple(t) for t in tokens] == expected
    assert all(isinstance(t, TokenLogprob) and type(t.logprob) is float for t in tokens)


async def test_a_state_holding_a_reply_s_logprobs_saves_and_loads_alike() -> None:
    # a plain call keeps its reply's tokens in memory; the state's JSON carries them
    async with OpenAIFake() as fake:
        fake.add(FakeReply("Paris is nice"))
        agent = ReActAgent("x", _model(fake), options=GenerateOptions(logprobs=True))
        state = AgentState()
        await agent.call("hi", state=state)
    tokens = next(m.metadata[TOKEN_LOGPROBS] for m in state.memory if TOKEN_LOGPROBS in m.metadata)
    saved = json.loads(state.to_json())
    stored = next(m["metadata"][TOKEN_LOGPROBS] for m in saved["memory"]
                  if TOKEN_LOGPROBS in m["metadata"])
    assert stored[0] == {"token": "Paris", "logprob": tokens[0].logprob, "bytes": list(b"Paris")}
    again = AgentState.from_json(state.to_json())
    assert again == state
    assert all(isinstance(t, TokenLogprob) for m in again.memory
               for t in m.metadata.get(TOKEN_LOGPROBS, ()))
