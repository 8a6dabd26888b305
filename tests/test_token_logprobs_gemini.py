"""Gemini token log-probabilities (issue 30, item 4): the adapter asks for
them where the model gives them (``generationConfig.responseLogprobs`` +
``logprobs``) and reads ``candidates[].logprobsResult.chosenCandidates[]``
from whole replies and every stream event (against the protocol-faithful
fake: google-genai ``types.LogprobsResult``); a model that refuses them is
never asked, or is asked again without; extraction lowers a field's
confidence from them as it does from OpenAI's."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agentflow.batch import extract_many
from agentflow.errors import BadRequestError
from agentflow.extraction.confidence import DOUBT_BELOW, DOUBTED, GROUNDED
from agentflow.messages import TOKEN_LOGPROBS, Msg
from agentflow.model import GenerateOptions, TextDelta
from agentflow.providers._gemini_reply import ReplyReader
from agentflow.providers.gemini import GeminiChatModel
from agentflow.reply import generate
from tests.fakes.base import DEFAULT_LOGPROB, FakeReply, fake_tokens
from tests.fakes.gemini import GeminiFake, gemini_error

GIVES, REFUSES = "gemini-2.0-flash", "gemini-2.5-pro"


def _model(fake: GeminiFake, name: str = GIVES, stream: bool = True,
           **kwargs: Any) -> GeminiChatModel:
    return GeminiChatModel(name, base_url=fake.url, api_key="k", stream=stream, **kwargs)


def _config(fake: GeminiFake, i: int) -> dict[str, Any]:
    config: dict[str, Any] = fake.requests[i].body.get("generationConfig") or {}
    return config


@pytest.mark.parametrize("stream", [True, False])
async def test_the_adapter_asks_for_and_reads_each_tokens_logprob(stream: bool) -> None:
    text = "Paris is nice in spring"
    async with GeminiFake() as fake:
        fake.add(FakeReply(text, extra={"token_logprobs": {"nice": -2.5}}), FakeReply(text))
        model = _model(fake, stream=stream)
        reply = await generate(model, [Msg.user("hi")], (), GenerateOptions(logprobs=True))
        plain = await generate(model, [Msg.user("hi")], ())
    asked, unasked = _config(fake, 0), _config(fake, 1)
    assert asked["responseLogprobs"] is True and asked["logprobs"] == 1
    assert "responseLogprobs" not in unasked and "logprobs" not in unasked
    tokens = reply.message.metadata[TOKEN_LOGPROBS]
    assert [t.token for t in tokens] == fake_tokens(text)
    assert [t.logprob for t in tokens] == [
        -2.5 if t == "nice" else DEFAULT_LOGPROB for t in fake_tokens(text)]
    assert reply.message.text == text and TOKEN_LOGPROBS not in plain.message.metadata


async def test_stream_events_each_carry_their_own_tokens() -> None:
    """The fake splits the reply over several events (8 characters each), each
    with the ``logprobsResult`` of its text: the chunks carry them in order."""
    text = "Paris is nice in spring"
    async with GeminiFake() as fake:
        fake.add(FakeReply(text))
        chunks = [c async for c in _model(fake).stream([Msg.user("hi")], (),
                                                       GenerateOptions(logprobs=True))]
    deltas = [c for c in chunks if isinstance(c, TextDelta)]
    assert len(deltas) > 2
    assert all("".join(t.token for t in d.logprobs) == d.text for d in deltas)


def test_tokens_that_do_not_spell_the_text_are_not_trusted() -> None:
    """From an event whose tokens do not spell its text (a malformed entry,
    another text's tokens), none is attached: the tokens given spell a prefix."""
    def event(text: str, chosen: list[dict[str, Any]] | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
        if chosen is not None:
            candidate["logprobsResult"] = {"chosenCandidates": chosen}
        return {"candidates": [candidate]}

    reader = ReplyReader()
    first = list(reader.feed(event("ab", [{"token": "a", "logProbability": -1.0},
                                          {"token": "b", "logProbability": -0.5}])))
    wrong = list(reader.feed(event("cd", [{"token": "x", "logProbability": -0.1}])))
    after = list(reader.feed(event("ef", [{"token": "ef", "logProbability": -0.2}])))
    assert [t.logprob for t in first[0].logprobs] == [-1.0, -0.5]  # type: ignore[union-attr]
    assert wrong[0].logprobs == () and after[0].logprobs == ()  # type: ignore[union-attr]
    malformed = ReplyReader()
    (delta,) = malformed.feed(event("ab", [{"token": "ab"}]))  # no logProbability
    assert delta.logprobs == ()  # type: ignore[union-attr]
    thoughts = ReplyReader()
    both = {"candidates": [{"content": {"parts": [{"text": "hmm", "thought": True},
                                                  {"text": "ok"}]},
                            "logprobsResult": {"chosenCandidates": [
                                {"token": "ok", "logProbability": -0.3}]}}]}
    out = list(thoughts.feed(both))
    assert next(d.logprobs for d in out if isinstance(d, TextDelta))[0].logprob == -0.3


async def test_a_model_that_refuses_logprobs_is_never_asked() -> None:
    async with GeminiFake() as fake:
        fake.add(FakeReply("ok"))
        model = _model(fake, REFUSES)
        assert not model.profile.token_logprobs
        reply = await generate(model, [Msg.user("hi")], (), GenerateOptions(logprobs=True))
    assert "responseLogprobs" not in _config(fake, 0) and reply.message.text == "ok"


@pytest.mark.parametrize("stream", [True, False])
async def test_a_refusal_is_answered_by_the_request_without_logprobs(stream: bool) -> None:
    """A model the profile table thinks gives them but refuses them (a key or
    version without them): sent again without, and this instance asks no more."""
    async with GeminiFake() as fake:
        fake.logprobs_models = ()
        fake.add(FakeReply("first"), FakeReply("second"))
        model = _model(fake, stream=stream)
        one = await generate(model, [Msg.user("hi")], (), GenerateOptions(logprobs=True))
        two = await generate(model, [Msg.user("hi")], (), GenerateOptions(logprobs=True))
    assert len(fake.requests) == 3  # the refused one, then the two answered
    assert [_config(fake, i).get("responseLogprobs") for i in range(3)] == [True, None, None]
    assert (one.message.text, two.message.text) == ("first", "second")
    assert not model.profile.token_logprobs


async def test_another_bad_request_is_not_taken_for_a_logprobs_refusal() -> None:
    async with GeminiFake() as fake:
        fake.add(gemini_error(400, "Request contains an invalid argument."))
        model = _model(fake)
        with pytest.raises(BadRequestError):
            await generate(model, [Msg.user("hi")], (), GenerateOptions(logprobs=True))
    assert len(fake.requests) == 1 and model.profile.token_logprobs


class Contact(BaseModel):
    name: str | None = Field(None, description="full name")
    email: str | None = Field(None, description="e-mail address")


TEXT = "Hi, I'm Ada Lovelace. Reach me at ada@example.org today."


@pytest.mark.parametrize("stream", [True, False])
async def test_a_value_the_model_was_unsure_of_is_doubted(stream: bool) -> None:
    answer = json.dumps({"name": "Ada Lovelace", "email": "ada@example.org"})
    unsure = math.log(DOUBT_BELOW / 2)
    async with GeminiFake() as fake:
        fake.add(FakeReply(answer), FakeReply(answer, extra={"token_logprobs": {"org": unsure}}))
        model = _model(fake, stream=stream)
        results = [r async for r in extract_many(model, [TEXT, TEXT], Contact, concurrency=1)]
    assert all(_config(fake, i).get("responseLogprobs") is True for i in range(2))
    sure, doubted = results
    assert sure.ok and doubted.ok
    assert sure.token_probs["email"] == pytest.approx(math.exp(DEFAULT_LOGPROB))
    assert doubted.token_probs["email"] == pytest.approx(DOUBT_BELOW / 2)
    assert sure.confidence["email"] == GROUNDED
    assert doubted.confidence["email"] == DOUBTED < GROUNDED
    assert "email" in doubted.needs_review and doubted.confidence["name"] == GROUNDED


def test_a_batch_item_never_asks_for_them() -> None:
    """A refusal would fail every item of a vendor batch, which cannot be sent
    again item by item: batch items leave them out, live requests ask."""
    model = GeminiChatModel(GIVES, api_key="k")
    item = model.batch_request("a", [Msg.user("hi")], (), GenerateOptions(logprobs=True))
    assert "responseLogprobs" not in (item.body.get("generationConfig") or {})
    _, live = model.build_request([Msg.user("hi")], (), GenerateOptions(logprobs=True),
                                  stream=False)
    assert live["generationConfig"]["responseLogprobs"] is True
