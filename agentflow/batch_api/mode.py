"""``extract_many``'s ``mode``: live requests, the vendor's batch API, or
``auto`` (batch when it pays).

The decision table (``resolve_mode``):

=====  =================  ======================  =========================
mode   ``BatchCapable``   inputs                  runs
=====  =================  ======================  =========================
live   any                any                     live
batch  yes                any                     batch
batch  no                 any                     ``BatchUnavailableError``
auto   yes                >= ``AUTO_MIN_INPUTS``  batch
auto   yes                fewer                   live
auto   no                 any                     live
=====  =================  ======================  =========================

``BatchUnavailableError`` is raised before any request.

``AUTO_MIN_INPUTS`` is 100: below it a batch's latency (minutes to hours)
buys little (the saving of a few requests); above it the half price matters.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Sized
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from agentflow._arguments import check_choice
from agentflow.agent import ReActAgent
from agentflow.batch_api.model import BatchModel
from agentflow.batch_api.protocol import BatchCapable
from agentflow.batch_api.runner import BatchRunner, BatchSettings
from agentflow.errors import BatchUnavailableError

__all__ = ["AUTO_MIN_INPUTS", "BatchRun", "Mode", "resolve_mode", "start_batch_mode"]

Mode = Literal["live", "batch", "auto"]
AUTO_MIN_INPUTS = 100
"""Inputs from which ``auto`` uses the batch API (see the module docstring)."""

T = TypeVar("T")


def resolve_mode(mode: str, capable: bool, count: int | None) -> bool:
    """Whether to run in batch (the module's decision table); ``count``: the
    number of inputs, or ``None`` when there are at least ``AUTO_MIN_INPUTS``.

    Raises:
        ArgumentValueError / ArgumentTypeError: an unknown ``mode``, or not a str.
        BatchUnavailableError: ``batch`` on a model without a batch API.
    """
    check_choice("mode", mode, ("live", "batch", "auto"))
    if mode == "batch" and not capable:
        raise BatchUnavailableError(
            "mode='batch' needs a model whose vendor has a batch API (OpenAI, Anthropic, "
            "Gemini); this one has none: use mode='live' or 'auto'")
    if mode == "auto":
        return capable and (count is None or count >= AUTO_MIN_INPUTS)
    return mode == "batch"


@dataclass
class BatchRun:
    """A batch-mode ``extract_many`` run: the agent on a ``BatchModel``, the
    inputs to keep in flight, and the runner to close at the end."""

    agent: ReActAgent
    concurrency: int
    runner: BatchRunner

    async def aclose(self) -> None:
        """Stop the runner (see ``BatchRunner.aclose``)."""
        await self.runner.aclose()


async def _peek(inputs: Iterable[T] | AsyncIterable[T], n: int) -> tuple[
        list[T], Iterable[T] | AsyncIterable[T]]:
    """Up to ``n`` first items, and an iterable of all items (those included)."""
    if isinstance(inputs, AsyncIterable):
        source = aiter(inputs)
        head: list[T] = []
        async for item in source:
            head.append(item)
            if len(head) >= n:
                break

        async def chained() -> AsyncIterator[T]:
            for item in head:
                yield item
            async for item in source:
                yield item
        return head, chained()
    iterator = iter(inputs)
    head = list(itertools.islice(iterator, n))
    return head, itertools.chain(head, iterator)


async def start_batch_mode(
    agent: ReActAgent, inputs: Iterable[Any] | AsyncIterable[Any], mode: str,
    settings: BatchSettings | None, concurrency: int,
) -> tuple[BatchRun | None, Iterable[Any] | AsyncIterable[Any]]:
    """The batch run for ``mode`` (``None``: run live), and the inputs (as
    given, or re-chained after ``auto`` counted the first of them).

    Raises:
        ValueError / BatchUnavailableError: as ``resolve_mode``.
    """
    capable = isinstance(agent.model, BatchCapable)
    count: int | None = None
    if mode == "auto" and capable:
        if isinstance(inputs, Sized):
            count = len(inputs)
        else:
            head, inputs = await _peek(inputs, AUTO_MIN_INPUTS)
            count = None if len(head) >= AUTO_MIN_INPUTS else len(head)
    if not resolve_mode(mode, capable, count):
        return None, inputs
    settings = settings or BatchSettings()
    model: Any = agent.model
    api = model.batch_api()
    vendor = str(getattr(model, "vendor", "") or "")
    runner = BatchRunner(api, settings, vendor=vendor)
    batch_agent = copy.copy(agent)
    batch_agent.model = BatchModel(model, runner, live_calls=concurrency)
    inflight = max(concurrency, min(settings.max_inflight, api.limits.max_requests))
    return BatchRun(batch_agent, inflight, runner), inputs
