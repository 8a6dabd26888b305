"""The whole-reply path of the ``ChatModel`` contract (``whole_reply``,
``agentflow.model``): the OpenAI-style adapter's (a plain reply read at once,
``providers/_openai_plain.py``; any other through the chunk path) leaves what
folding ``stream``'s chunks leaves, errors included; the loop uses it when
nobody reads the chunks, and reads ``ReplyBuilder.received`` of a failed one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from agentflow import ReActAgent
from agentflow.errors import ServerError
from agentflow.messages import TOKEN_LOGPROBS, Msg
from agentflow.model import (
    FinishChunk,
    GenerateOptions,
    ModelChunk,
    ModelProfile,
    TextDelta,
    ToolSpec,
    Usage,
    UsageChunk,
)
from agentflow.providers._openai_plain import plain_reply
from agentflow.providers._openai_sending import _reads
from agentflow.providers.local import LocalModel
from agentflow.providers.minimax import MiniMaxChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import ReplyBuilder, fold_stream
from tests.fakes.base import FakeReply
from tests.fakes.minimax import MiniMaxFake, base_error
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
LOGPROBS = {"content": [{"token": "Hi", "logprob": -0.25, "bytes": [72, 105], "top_logprobs": []},
                        {"token": "!", "logprob": -0.5, "bytes": [33], "top_logprobs": []}]}


def reply(message: Any, finish: Any = "stop", **extra: Any) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
    if "logprobs" in extra:
        choice["logprobs"] = extra.pop("logprobs")
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini-2024",
            "choices": [choice], **extra}


PLAIN = {
    "text": reply({"role": "assistant", "content": "Hi!"}, usage=USAGE),
    "logprobs": reply({"role": "assistant", "content": "Hi!", "refusal": None},
                      usage=USAGE, logprobs=LOGPROBS),
    "no-usage": reply({"role": "assistant", "content": "Hi!"}),
    "zero-usage": reply({"role": "assistant", "content": "Hi!"},
                        usage={"prompt_tokens": 0, "completion_tokens": 0}),
    "length": reply({"role": "assistant", "content": "Hi"}, "length", usage=USAGE),
    "tool-calls-label": reply({"role": "assistant", "content": "Hi"}, "tool_calls"),
    "unknown-finish": reply({"role": "assistant", "content": "Hi"}, "eos_token"),
    "empty-text-stop": reply({"role": "assistant", "content": ""}, usage=USAGE),
    "null-text-stop": reply({"role": "assistant", "content": None}),
    "no-finish": reply({"role": "assistant", "content": "Hi"}, None),
    "no-model-id": {"choices": [{"message": {"content": "Hi"}, "finish_reason": "stop"}]},
    "null-keys": reply({"role": "assistant", "content": "Hi", "tool_calls": None,
                        "function_call": None, "refusal": None, "annotations": []},
                       system_fingerprint="fp_1", created=1),
}
OTHER = {
    "tool-call": reply({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "f", "arguments": '{"a": 1}'}}]}, "tool_calls"),
    "reasoning": reply({"role": "assistant", "content": "Hi", "reasoning_content": "hmm"}),
    "refusal": reply({"role": "assistant", "content": None, "refusal": "no"}),
    "content-parts": reply({"role": "assistant", "content": [{"type": "text", "text": "Hi"}]}),
    "two-choices": {"choices": [{"index": 1, "message": {"content": "B"}, "finish_reason": "stop"},
                                {"index": 0, "message": {"content": "A"},
                                 "finish_reason": "stop"}]},
    "groq-usage": reply({"content": "Hi"}, x_groq={"usage": USAGE}),
    "null-finish": reply({"content": "Hi"}, "null"),
    "int-finish": reply({"content": "Hi"}, 3),
    "bad-usage": reply({"content": "Hi"}, usage={"prompt_tokens": "many"}),
    "no-answer": reply({"content": ""}, None, usage=USAGE),
    "empty": {},
    "error-in-body": {"error": {"message": "upstream failed", "code": 502}},
    "message-str": {"choices": [{"message": "hi", "finish_reason": "stop"}]},
    "text-int": reply({"content": 5}),
    "null-reasoning": reply({"content": "Hi", "reasoning_content": None}),
    "choice-error": {"choices": [{"message": {"content": "Hi"}, "finish_reason": "error",
                                  "error": {"code": 502, "message": "upstream"}}]},
    "choice-usage": {"choices": [{"message": {"content": "Hi"}, "finish_reason": "stop",
                                  "usage": USAGE}]},
    "truncated": reply({"content": "Hi"}, truncated=True),
    "object-error": {"object": "error", "message": "boom", "choices": []},
}


class RawFake(OpenAIFake):
    """Answers ``extra["json"]`` as it is."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        return reply.extra["json"]


@pytest.fixture
async def fake() -> AsyncIterator[RawFake]:
    async with RawFake() as server:
        yield server


def seen(builder: ReplyBuilder) -> tuple[Any, ...]:
    """What a folded reply leaves (its message without the random id)."""
    msg = builder.build()
    meta = dict(msg.metadata)
    if TOKEN_LOGPROBS in meta:
        meta[TOKEN_LOGPROBS] = list(meta[TOKEN_LOGPROBS])
    return (msg.role, msg.content, meta, builder.usage, builder.finish_reason,
            builder.response_model, builder.response_id)


async def both_ways(fake: RawFake, body: Any) -> tuple[Any, Any]:
    """The reply ``body`` folded by ``whole_reply`` and by folding ``stream``
    (each a ``seen`` tuple, or the error's type and message)."""
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST,
                            stream=False)
    out: list[Any] = []
    try:
        for whole in (True, False):
            fake.add(FakeReply(extra={"json": body}))
            builder = ReplyBuilder()
            try:
                if whole:
                    await model.whole_reply([Msg.user("hi")], [], GenerateOptions(), builder)
                else:
                    await fold_stream(model.stream([Msg.user("hi")], [], GenerateOptions()),
                                      builder)
                out.append(seen(builder))
            except Exception as exc:  # the same error both ways
                out.append((type(exc), str(exc), builder.received))
    finally:
        await model.aclose()
    return out[0], out[1]


@pytest.mark.parametrize("body", [*PLAIN.values(), *OTHER.values()],
                         ids=[*PLAIN, *OTHER])
async def test_whole_reply_leaves_what_the_chunks_leave(fake: RawFake, body: Any) -> None:
    whole, chunks = await both_ways(fake, body)
    assert whole == chunks


@pytest.mark.parametrize("body", PLAIN.values(), ids=list(PLAIN))
def test_plain_replies_are_read_at_once(body: Any) -> None:
    assert plain_reply(body) is not None


@pytest.mark.parametrize("body", OTHER.values(), ids=list(OTHER))
def test_other_replies_go_through_the_chunks(body: Any) -> None:
    assert plain_reply(body) is None


async def test_a_call_reads_the_whole_reply(fake: RawFake) -> None:
    fake.add(FakeReply(extra={"json": PLAIN["logprobs"]}))
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
    async with ReActAgent("a", model) as agent:
        msg = await agent.call("hi")
    assert msg.text == "Hi!" and len(msg.metadata[TOKEN_LOGPROBS]) == 2
    assert fake.requests[0].body.get("stream") is not True


class Broken:
    """A ``ChatModel`` whose whole reply breaks after its text (once), and whose
    stream says which path was taken."""

    def __init__(self) -> None:
        self.profile = ModelProfile()
        self.model_name = "broken"
        self.wholes = 0

    async def stream(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                     options: GenerateOptions) -> AsyncIterator[ModelChunk]:
        yield TextDelta("streamed")
        yield FinishChunk("stop", "stop")

    async def whole_reply(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                          options: GenerateOptions, reply: ReplyBuilder) -> None:
        self.wholes += 1
        reply.add_text("whole")
        if self.wholes == 1:
            cut = ServerError("cut", vendor="broken")
            cut.partial = True  # the reply broke part-way: a stream retry may send it again
            raise cut
        reply.add(UsageChunk(Usage(3, 2)))
        reply.add(FinishChunk("stop", "stop"))


async def test_the_loop_folds_whole_replies_for_call_only() -> None:
    model = Broken()
    agent = ReActAgent("a", model, stream_retries=1)
    complete = await agent._complete("hi", None, None, None, None, None, deltas=False)
    # the first whole reply broke after its text: discarded, sent again (a fresh reply)
    assert complete.message.text == "whole" and model.wholes == 2
    # a stream reader reads the chunks
    assert [e async for e in agent.stream("hi")][-1].message.text == "streamed"
    assert model.wholes == 2


def test_received_says_whether_anything_came() -> None:
    builder = ReplyBuilder()
    assert not builder.received
    builder.add(FinishChunk("stop", "stop"))
    assert builder.received
    texted = ReplyBuilder()
    texted.add_text("a")
    assert texted.received and texted.text == "a"


def test_how_each_openai_style_class_reads_a_whole_reply() -> None:
    assert _reads(OpenAIChatModel) == "plain"
    assert _reads(MiniMaxChatModel) == "chunks"  # its own payload_error (base_resp)
    assert _reads(LocalModel) == "stream"  # its own stream


@pytest.mark.parametrize("reply", [
    FakeReply(text="Hi!"),
    FakeReply(text="Hi <think>no</think>", thinking="hmm"),
], ids=["text", "thinking"])
async def test_minimax_whole_replies_go_through_its_readers(reply: FakeReply) -> None:
    async with MiniMaxFake(api_key="k") as server:
        model = MiniMaxChatModel("MiniMax-M2.7", api_key="k", base_url=server.url,
                                 stream=False, settings=FAST)
        try:
            seen_both = []
            for whole in (True, False):
                server.add(reply)
                builder = ReplyBuilder()
                if whole:
                    await model.whole_reply([Msg.user("hi")], [], GenerateOptions(), builder)
                else:
                    await fold_stream(model.stream([Msg.user("hi")], [], GenerateOptions()),
                                      builder)
                seen_both.append(seen(builder))
            assert seen_both[0] == seen_both[1]
            server.add(base_error(1008, "insufficient balance"))  # a 200 carrying an error
            with pytest.raises(Exception) as whole_error:
                await model.whole_reply([Msg.user("hi")], [], GenerateOptions(), ReplyBuilder())
            server.add(base_error(1008, "insufficient balance"))
            with pytest.raises(Exception) as chunk_error:
                await fold_stream(model.stream([Msg.user("hi")], [], GenerateOptions()),
                                  ReplyBuilder())
            assert (type(whole_error.value), str(whole_error.value)) == (
                type(chunk_error.value), str(chunk_error.value))
        finally:
            await model.aclose()


class Forwarding:
    """A wrapper that forwards what it lacks to the model it wraps (as
    ``BatchModel`` does) and streams its own way."""

    def __init__(self, inner: OpenAIChatModel) -> None:
        self.inner = inner
        self.streams = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def stream(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                     options: GenerateOptions) -> AsyncIterator[ModelChunk]:
        self.streams += 1
        yield TextDelta("wrapped")
        yield FinishChunk("stop", "stop")


async def test_a_forwarding_wrapper_is_read_through_its_own_stream(fake: RawFake) -> None:
    inner = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=FAST)
    wrapper = Forwarding(inner)
    try:
        msg = await ReActAgent("a", wrapper).call("hi")  # type: ignore[arg-type]
    finally:
        await inner.aclose()
    assert msg.text == "wrapped" and wrapper.streams == 1 and fake.requests == []
