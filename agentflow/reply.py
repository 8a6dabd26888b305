"""Replies from chunks: the reply builder, ``fold_stream`` and ``generate``
(a whole reply from ``ChatModel.stream``).

The agent loop and every non-streaming caller fold a model's ``ModelChunk``s
with ``ReplyBuilder``; tool-call fragments, interleaved across parallel calls
and split at any byte, become whole ``ToolUseBlock``s in ``ToolCallAssembler``
(``agentflow.tool_call_assembler``, re-exported here).
A model with the contract's whole-reply path (``ChatModel``'s optional
``whole_reply``) folds its reply into the builder itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from agentflow._secrets import mask_secrets
from agentflow.content import check_inputs
from agentflow.errors import InvalidChunkError
from agentflow.messages import (
    ANSWER_FROM_REASONING,
    CLOSED_TOOL_CALLS,
    TOKEN_LOGPROBS,
    Msg,
    TextBlock,
    ThinkingBlock,
    clean_text,
)
from agentflow.model import (
    ChatModel,
    FinishReason,
    GenerateOptions,
    ModelChunk,
    TokenLogprob,
    TokenLogprobs,
    ToolSpec,
    Usage,
)
from agentflow.model_options import check_options
from agentflow.tool_call_assembler import ToolCallAssembler, parse_arguments

__all__ = ["ModelResponse", "ReplyBuilder", "ToolCallAssembler", "fold_stream", "generate",
           "parse_arguments"]

_NO_USAGE = Usage()


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A whole reply: the assistant message, why it stopped, and its usage."""

    message: Msg
    finish_reason: FinishReason
    usage: Usage


class ReplyBuilder:
    """Folds a stream of ``ModelChunk``s into an assistant ``Msg``, the finish
    reason and the usage. Used by the agent loop and by ``generate``;
    ``model``: the ``model_name`` of the model whose chunks it folds (named
    by ``InvalidChunkError``)."""

    __slots__ = (
        "_finished",
        "_logprobs",
        "_signature",
        "_text",
        "_thinking",
        "_thinking_data",
        "finish_detail",
        "finish_reason",
        "model",
        "response_id",
        "response_model",
        "tools",
        "usage",
    )

    def __init__(self, model: str = "") -> None:
        self.model = model
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._signature: str | None = None
        self._thinking_data: dict[str, Any] = {}
        self._logprobs: list[Sequence[TokenLogprob]] = []
        """The ``logprobs`` of each text chunk that had some (joined once, in ``build``)."""
        self.tools = ToolCallAssembler()
        self.finish_reason: FinishReason = "stop"
        self.finish_detail = ""
        """The finish chunk's ``detail`` (the vendor's words on why it stopped)."""
        self.response_model: str | None = None
        self.response_id: str | None = None
        self.usage = _NO_USAGE  # immutable: shared until a usage chunk comes
        self._finished = False

    def add(self, chunk: ModelChunk) -> None:
        """Fold one chunk in (dispatched on its ``type`` tag: no ``isinstance``
        chain per chunk).

        Raises:
            InvalidChunkError: ``chunk`` is not a ``ModelChunk`` (no known ``type``).
        """
        if not hasattr(chunk, "type"):  # a str, a dict, None...
            raise _invalid_chunk(self.model, chunk)
        if chunk.type == "text":
            self._text.append(chunk.text)
            if chunk.logprobs:
                self._logprobs.append(chunk.logprobs)
        elif chunk.type == "tool_call":
            self.tools.add(chunk)
        elif chunk.type == "thinking":
            if chunk.text:
                self._thinking.append(chunk.text)
            if chunk.signature:
                self._signature = chunk.signature
            if chunk.provider_data:
                self._thinking_data.update(chunk.provider_data)
        elif chunk.type == "usage":
            self.usage = chunk.usage
        elif chunk.type == "finish":
            self._finished = True
            self.finish_reason = chunk.reason
            self.finish_detail = chunk.detail
            self.response_model = chunk.response_model or self.response_model
            self.response_id = chunk.response_id or self.response_id
        else:
            raise _invalid_chunk(self.model, chunk)

    def add_text(self, text: str, logprobs: Sequence[TokenLogprob] = ()) -> None:
        """Fold in a piece of text as ``add(TextDelta(text, logprobs=logprobs))``
        does, with no chunk made (a model's ``whole_reply`` reading a whole reply)."""
        self._text.append(text)
        if logprobs:
            self._logprobs.append(logprobs)

    @property
    def received(self) -> bool:
        """Whether anything of the reply was folded in yet (text, thinking, a
        tool call, usage or a finish): what the loop reads of a request that
        failed in a model's ``whole_reply`` (a reply that broke part-way)."""
        return bool(self._text or self._thinking or self._signature or self._thinking_data
                    or self.tools or self.usage is not _NO_USAGE or self._finished)

    @property
    def text(self) -> str:
        """The reply text so far."""
        parts = self._text
        if len(parts) > 1:  # read once per chunk while streaming: keep it joined
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    def build(self, taken: Callable[[], Collection[str]] | None = None) -> Msg:
        """The assistant message: thinking, then text, then tool calls (their
        ids unique within the reply, and not among ``taken()``: the ids of the
        conversation's earlier calls, ``ToolCallAssembler.finish``).

        A reply that ended normally (``stop``) with no text and no tool call
        but reasoning text (a server that put the whole answer in its
        reasoning channel) gets that reasoning as its text too, flagged
        ``ANSWER_FROM_REASONING`` in its metadata: read as an answer, never
        as "no answer" followed by forced retries that fail the same way.
        Signed thinking (Anthropic's thinking blocks: the vendor's own thinking
        channel, never a misrouted answer) is not: such a reply is empty
        (``agentflow.middleware.empty_reply``). A reply labelled ``tool_calls``
        whose entries all turn out empty (no name, no arguments: no call) has
        ``finish_reason`` ``stop`` once built."""
        text = clean_text(self.text)
        reason = self.finish_reason
        closed: list[str] | None = [] if reason == "length" else None
        calls = self.tools.finish(closed, reason == "tool_calls" or reason == "stop", taken)
        if reason == "tool_calls" and not calls:  # its entries were empty: no call
            self.finish_reason = reason = "stop"
        thinking = self._thinking or self._signature or self._thinking_data
        if not thinking and not calls:  # the common reply: its text only, if any
            if self._logprobs and text:
                return Msg("assistant", text,
                           metadata={TOKEN_LOGPROBS: TokenLogprobs.joined(self._logprobs)})
            return Msg("assistant", text if text else ())
        blocks: list[Any] = []
        if thinking:
            blocks.append(
                ThinkingBlock(
                    clean_text("".join(self._thinking)), self._signature, self._thinking_data
                )
            )
        if text:
            blocks.append(TextBlock(text))
        elif not calls and reason == "stop" and self._thinking and not self._signature:
            answer = blocks[0].thinking.strip()
            if answer:  # the only answer is in the reasoning channel: given, and said so
                blocks.append(TextBlock(answer))
                return Msg("assistant", blocks, metadata={ANSWER_FROM_REASONING: True})
        blocks.extend(calls)
        if closed:  # cut at the token limit, yet these calls' arguments had closed
            return Msg("assistant", blocks, metadata={CLOSED_TOOL_CALLS: closed})
        return Msg("assistant", blocks)


def _invalid_chunk(model: str, chunk: object) -> InvalidChunkError:
    """The error of a model that gave ``chunk``, which is no ``ModelChunk``."""
    shown = mask_secrets(repr(chunk))
    if len(shown) > 120:
        shown = shown[:100] + "..." + shown[-15:]
    yielded = f"{shown} (a {type(chunk).__module__}.{type(chunk).__qualname__})" if type(
        chunk).__module__ != "builtins" else f"{shown} (a {type(chunk).__name__})"
    return InvalidChunkError(
        f"the model {model or '(unnamed)'!r} gave {yielded}, not a ModelChunk: a ChatModel's "
        "stream() yields (and its whole_reply adds) only agentflow.model chunks (TextDelta, "
        "ThinkingDelta, ToolCallDelta, UsageChunk, FinishChunk)", model=model, yielded=yielded)


async def fold_stream(chunks: AsyncIterator[ModelChunk], reply: ReplyBuilder) -> None:
    """Fold every chunk of ``chunks`` (a ``ChatModel.stream``) into ``reply``;
    ``chunks`` is closed however this ends (a model's ``whole_reply`` that
    reads its replies as a stream)."""
    try:
        async for chunk in chunks:
            reply.add(chunk)
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


async def generate(
    model: ChatModel,
    messages: Sequence[Msg],
    tools: Sequence[ToolSpec] = (),
    options: GenerateOptions | None = None,
) -> ModelResponse:
    """One non-streaming request, derived from ``model.stream``.

    Raises:
        UnsupportedInputError: an image or document block the model's profile
            does not accept (before the request).
        TypeError / ValueError: an option of the wrong type or out of range
            (``check_options``, before the request).
        ProviderError: as ``model.stream`` does.
    """
    if options is not None:
        check_options(options)
    check_inputs(messages, model.profile, model.model_name)
    builder = ReplyBuilder(model.model_name)
    async for chunk in model.stream(messages, tools, options or GenerateOptions()):
        builder.add(chunk)
    usage = builder.usage
    return ModelResponse(builder.build(), builder.finish_reason, usage.request())
