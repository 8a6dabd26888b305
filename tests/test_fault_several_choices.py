"""Vendor fault: a reply with several choices, read as one.

A server that answers more than one completion (``n`` > 1 set by a proxy or
a default) streams their deltas interleaved, each chunk carrying index 0's
or index 1's delta in turn, each choice opened by an empty role delta
(Azure OpenAI, BerriAI/litellm#3276; openai/openai-python#3709 for choices
out of order), and may list ``choices`` out of order in a whole reply.
Every chunk's first choice was read: two completions were spliced into
one, and a structured output was a value neither had written (``{"id": 9,
"title": "login"}`` from ``{"id": 7, "title": "login"}`` and ``{"id": 9,
"title": "other"}``), reported ok. The reply now reads one choice, index 0's
(else the first one seen), and ignores the others once they repeat; a
server that numbers every chunk anew (TGI before 1.4.4,
huggingface/text-generation-inference#1648) is still read whole.

Served by the OpenAI fake, streamed and whole, through the public API."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from agentflow import Complete, NativeStrategy, OutputConfig, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class Ticket(BaseModel):
    id: int
    title: str


class TwoChoices(OpenAIFake):
    """Answers two completions: index 0 and index 1, interleaved in a stream,
    index 1 listed first in a whole reply."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        out = super().render_json(reply, body)
        first = out["choices"][0]
        other = {**first, "index": 1, "message": {**first["message"],
                                                    "content": reply.extra["other"]}}
        out["choices"] = [other, first]
        return out

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
            return b"data: " + orjson.dumps({
                "id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1,
                "model": body.get("model"), "choices": [
                    {"index": index, "delta": delta, "finish_reason": finish}]}) + b"\n\n"
        ours, other = reply.text, reply.extra["other"]
        half, cut = ours.index('"title"'), other.index('"title"')
        return [chunk(0, {"role": "assistant", "content": ""}),
                chunk(1, {"role": "assistant", "content": ""}),
                chunk(0, {"content": ours[:half]}), chunk(1, {"content": other[:cut]}),
                chunk(0, {"content": ours[half:]}), chunk(1, {"content": other[cut:]}),
                chunk(1, {}, "stop"), chunk(0, {}, "stop"), b"data: [DONE]\n\n"]


class TwoChoicesNoOpener(TwoChoices):
    """As ``TwoChoices``, but each completion's first chunk carries its first
    text with the role (no empty opener), as servers other than OpenAI send."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = super().render_events(reply, body)
        del frames[:2]  # the two role-only openers
        return frames


async def _ticket(stream: bool, server: type[OpenAIFake] = TwoChoices) -> tuple[Ticket, int]:
    async with server() as fake:
        fake.add(FakeReply(text='{"id": 7, "title": "login"}',
                           extra={"other": '{"id": 9, "title": "other"}'}))
        async with OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            agent = ReActAgent("t", model, output=OutputConfig(strategy=NativeStrategy()))
            events = [e async for e in agent.stream("the ticket", Ticket)]
        done = events[-1]
        assert isinstance(done, Complete)
        return done.output, len(fake.requests)


async def test_interleaved_choices_in_a_stream_are_not_spliced() -> None:
    assert await _ticket(stream=True) == (Ticket(id=7, title="login"), 1)


async def test_a_second_completions_first_text_is_not_spliced() -> None:
    """Its first chunk (index 1, above every index seen) is another completion's
    in a ``chat.completion.chunk`` stream, not the reply's next token."""
    assert await _ticket(stream=True, server=TwoChoicesNoOpener) == (Ticket(id=7, title="login"), 1)


async def test_the_first_choice_of_a_whole_reply_is_read() -> None:
    assert await _ticket(stream=False) == (Ticket(id=7, title="login"), 1)


class TokenNumbered(OpenAIFake):
    """Old TGI: each chunk's choice ``index`` counts the chunks (1, 2, 3...)."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = []
        for n, piece in enumerate(["Par", "is", "."], start=1):
            frames.append(b"data: " + orjson.dumps({
                "id": "", "object": "text_completion", "created": 1, "model": "tgi",
                "choices": [{"index": n, "delta": {"role": "assistant", "content": piece},
                             "finish_reason": "stop" if n == 3 else None}]}) + b"\n\n")
        return [*frames, b"data: [DONE]\n\n"]


async def test_chunks_numbered_by_token_are_one_choice() -> None:
    async with TokenNumbered() as fake:
        fake.add(FakeReply(text="unused"))
        async with OpenAIChatModel("tgi", base_url=fake.url, api_key="k", stream=True,
                                   settings=FAST) as model:
            events = [e async for e in ReActAgent("t", model).stream("Capital of France?")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Paris."
