"""``BatchModel``: the ``ChatModel`` wrapper that sends an input's first turn
into the run's ``BatchRunner`` and every later turn live (see
``agentflow.batch_api.runner``), and ``input_scope``, which tells it whose
request it is sending."""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import anyio

from agentflow._scopes import VarScope
from agentflow.batch_api.protocol import BatchCapable, BatchRequest
from agentflow.batch_api.runner import BatchRunner, custom_id_for
from agentflow.messages import Msg
from agentflow.model import (
    ChatModel,
    GenerateOptions,
    ModelChunk,
    ModelProfile,
    ToolSpec,
    UsageChunk,
)

__all__ = ["CURRENT_INPUT", "BatchModel", "input_scope"]

_current_input: contextvars.ContextVar[str] = contextvars.ContextVar(
    "agentflow_batch_input", default="")
CURRENT_INPUT = _current_input
"""The input the requests made now belong to (``input_scope`` sets it; a
scheduler's per-input task may set and reset it itself: no scope object)."""


def input_scope(input_id: str) -> AbstractContextManager[None]:
    """Mark the requests made inside as belonging to input ``input_id`` (the
    journal maps them back to it; ``extract_many`` sets it per input)."""
    return VarScope(_current_input, input_id)


def _first_turn(messages: Sequence[Msg]) -> bool:
    return not any(m.role == "assistant" for m in messages)


class BatchModel:
    """A ``ChatModel`` sending first turns through a ``BatchRunner`` (see the
    module docstring); everything else is the wrapped model's.

    Args:
        inner: a ``BatchCapable`` chat model.
        runner: the run's ``BatchRunner``.
        live_calls: at most this many live requests (re-asks) at once.
    """

    def __init__(self, inner: ChatModel, runner: BatchRunner, *, live_calls: int = 8) -> None:
        if not isinstance(inner, BatchCapable):
            raise TypeError(f"{type(inner).__name__} has no batch API")
        self.inner = inner
        self.runner = runner
        self._batch: BatchCapable = inner
        self._live = anyio.Semaphore(live_calls)

    @property
    def profile(self) -> ModelProfile:
        """The wrapped model's profile."""
        return self.inner.profile

    @property
    def model_name(self) -> str:
        """The wrapped model's name."""
        return self.inner.model_name

    def __repr__(self) -> str:
        return f"BatchModel({self.inner!r})"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # count_tokens, aclose...

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """A first turn (or any turn with ``batch_only``): the batch reply's
        chunks (continued live where the wrapped model's optional
        ``continue_batch_reply(chunks, messages, tools, options)`` gives a
        continuation: a turn the vendor paused); else the live reply's.

        Raises:
            BatchRequestError: the batch request has no reply.
            ProviderError: as the wrapped model's ``stream``, or a batch that
                could not be submitted or polled.
        """
        if self.runner.settings.batch_only or _first_turn(messages):
            input_id = _current_input.get()
            probe = self._batch.batch_request("-", messages, tools, options)
            cid = custom_id_for(input_id, probe.path, probe.body)
            request = BatchRequest(cid, probe.path, probe.body)
            reply = await self.runner.request(request, input_id)
            chunks = list(self._batch.parse_batch_reply(reply, tools))
            usages = [c.usage for c in chunks if isinstance(c, UsageChunk)]
            if usages:  # a later usage chunk replaces an earlier one
                self.runner.batch_usage = self.runner.batch_usage + usages[-1]
                if self.runner.settings.on_usage is not None:
                    self.runner.settings.on_usage(usages[-1])
            follow = getattr(self._batch, "continue_batch_reply", None)
            more = follow(chunks, messages, tools, options) if follow is not None else None
            if more is None:
                for chunk in chunks:
                    yield chunk
                return
            async with self._live:  # the batch reply's turn goes on live
                async for chunk in more:
                    yield chunk
            return
        async with self._live:
            async for chunk in self.inner.stream(messages, tools, options):
                yield chunk

