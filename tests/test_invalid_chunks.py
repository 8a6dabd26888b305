"""A user-written ``ChatModel`` whose stream yields something that is not a
``ModelChunk`` fails with ``InvalidChunkError`` naming the model and what it
yielded, wherever its chunks are folded (``call()``, ``stream()``,
``generate``, a ``whole_reply`` adding to the builder), never a raw
``AttributeError`` nor a chunk silently dropped."""

from __future__ import annotations

import pickle
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from agentflow import InvalidChunkError, InvalidModelError, ReActAgent
from agentflow.messages import Msg
from agentflow.model import FinishChunk, GenerateOptions, ModelProfile, TextDelta, ToolSpec
from agentflow.reply import ReplyBuilder, generate


@dataclass
class Weird:
    """A chunk-like object with a type tag no chunk has."""

    type: str = "image"


class YieldsThis:
    """A model whose stream yields ``item`` between two real chunks."""

    profile = ModelProfile()
    model_name = "my-model"

    def __init__(self, item: Any) -> None:
        self.item = item
        self.closed = False

    async def stream(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                     options: GenerateOptions) -> AsyncIterator[Any]:
        try:
            yield TextDelta("a")
            yield self.item
            yield FinishChunk("stop")
        finally:
            self.closed = True


class AddsThis(YieldsThis):
    """The same model, with a whole-reply path that adds ``item`` to the builder."""

    async def whole_reply(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                          options: GenerateOptions, reply: ReplyBuilder) -> None:
        reply.add(self.item)


ITEMS = [("hello", "'hello' (a str)"), ({"type": "text", "text": "x"}, "(a dict)"),
         (None, "None (a NoneType)"), (Weird(), "(a tests.test_invalid_chunks.Weird)")]


def _check(info: pytest.ExceptionInfo[InvalidChunkError], shown: str) -> None:
    error = info.value
    assert isinstance(error, InvalidModelError) and error.model == "my-model"
    assert shown in error.yielded and shown in str(error) and "'my-model'" in str(error)
    assert "not a ModelChunk" in str(error)


@pytest.mark.parametrize(("item", "shown"), ITEMS)
async def test_call_and_stream_name_the_model_and_what_it_yielded(item: Any, shown: str) -> None:
    model = YieldsThis(item)
    with pytest.raises(InvalidChunkError) as info:
        await ReActAgent("a", model).call("hi")
    _check(info, shown)
    assert model.closed
    with pytest.raises(InvalidChunkError) as info:
        async for _ in ReActAgent("a", model).stream("hi"):
            pass
    _check(info, shown)


@pytest.mark.parametrize(("item", "shown"), ITEMS)
async def test_generate_and_whole_reply_name_it_too(item: Any, shown: str) -> None:
    with pytest.raises(InvalidChunkError) as info:
        await generate(YieldsThis(item), [Msg.user("hi")])
    _check(info, shown)
    with pytest.raises(InvalidChunkError) as info:
        await ReActAgent("a", AddsThis(item)).call("hi")
    _check(info, shown)


def test_a_long_yield_is_cut_and_the_error_pickles() -> None:
    builder = ReplyBuilder("my-model")
    with pytest.raises(InvalidChunkError) as info:
        builder.add("x" * 10_000)  # type: ignore[arg-type]
    assert len(str(info.value)) < 400 and "..." in info.value.yielded
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.model, copy.yielded, str(copy)) == ("my-model", info.value.yielded,
                                                     str(info.value))
