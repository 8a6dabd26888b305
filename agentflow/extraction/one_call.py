"""One model call of a document: its user message, the call, its result.

Every stage of the extraction pipeline (``agentflow.extraction.pipeline``)
reads a document, a chunk or a recall pass through ``extract_one``: the
call's failure becomes the input's typed error, never an exception, and a
``CancelledError`` nobody cancelling the run asked for becomes a
``StrayCancelError`` record (``stray_error``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from agentflow._commit import stray_cancel
from agentflow.agent import ReActAgent
from agentflow.batch_types import ExtractInput, ExtractResult
from agentflow.documents.deferred import resolve_media
from agentflow.errors import ProviderError, StrayCancelError, StructuredOutputError
from agentflow.extraction.recall import TAKEN_KEY
from agentflow.grounding import Grounded
from agentflow.grounding.output_checks import LOCATED_KEY
from agentflow.loop import call_complete
from agentflow.messages import FIELD_PROBS, Msg
from agentflow.model import Usage
from agentflow.output.examples import Example

__all__ = ["extract_one", "stray_error"]


def _message(item: ExtractInput, taken: frozenset[tuple[int, int]] = frozenset(),
             located: Mapping[str, str] | None = None) -> Msg:
    """The user message of ``item``: its media (deferred ones read now), then its
    text (when it has any); ``taken``: spans an earlier pass took as list
    items (``agentflow.extraction.recall``); ``located``: the values learned
    rules read for fields in the whole document this chunk is part of
    (``agentflow.extraction.chunk_reads``)."""
    metadata: dict[str, Any] | None = {TAKEN_KEY: sorted(taken)} if taken else None
    if located:
        metadata = {**(metadata or {}), LOCATED_KEY: dict(located)}
    if not item.media:
        return Msg("user", item.text, None, metadata)  # (Msg.user, without its frame)
    media = resolve_media(item.media)
    return Msg("user", [*media, item.text] if item.text.strip() else media, None, metadata)


async def extract_one(
    agent: ReActAgent, index: int, item: ExtractInput, output: Any,
    ground: bool | Grounded | None = None, examples: tuple[Example, ...] | None = None,
    taken: frozenset[tuple[int, int]] = frozenset(), located: Mapping[str, str] | None = None,
) -> ExtractResult:
    """The result of one call of ``agent`` reading ``item`` (input position
    ``index``) for ``output``; never raises for a failing call: its error is
    in the result."""
    start = time.perf_counter()
    usage = Usage()
    spans: dict[str, list[tuple[int, int]]] = {}
    try:
        # the call's Complete also when the output could not be had (its usage counts);
        # nobody reads a document's deltas: whole replies where the vendor gives them
        # (no SSE parsing, no partial output per chunk; GenerateOptions.stream)
        # (``agent._complete(..., deltas=False)``'s body, with no coroutine of its own)
        complete = await call_complete(agent, _message(item, taken, located), output, None, None,
                                       ground, examples)
        usage = complete.usage
        value = complete.message.output  # raises StructuredOutputError when there is none
        spans = dict(complete.spans)
        error: Exception | None = None
        probs = complete.message.metadata.get(FIELD_PROBS)
    except Exception as exc:  # every failure becomes this input's result
        value, error, probs = None, exc, None
        if isinstance(exc, StrayCancelError) and isinstance(exc.__cause__, asyncio.CancelledError):
            error = stray_error(item.id, exc.__cause__)  # the call's: named by its input
        if isinstance(exc, StructuredOutputError | ProviderError) and exc.usage is not None:
            usage = exc.usage  # raised mid-call (on_invalid="raise", a vendor error...): it counts
    except asyncio.CancelledError as exc:
        if not stray_cancel(exc):  # the run is being cancelled: let it
            raise
        value, error, probs = None, stray_error(item.id, exc), None
    return ExtractResult(
        index, item.id, value, error, usage, usage.requests, time.perf_counter() - start, spans,
        token_probs=dict(probs) if probs else {})


def stray_error(input_id: str, cancel: asyncio.CancelledError) -> StrayCancelError:
    """The record error of input ``input_id`` whose work ended with
    ``cancel``, a ``CancelledError`` nobody cancelling the run asked for
    (``agentflow._commit.stray_cancel``); ``cancel`` is its cause."""
    said = f": {cancel}" if str(cancel) else ""
    error = StrayCancelError(
        f"input {input_id!r}: its call raised a CancelledError{said} while the run was not "
        "being cancelled (raised by code inside the call: the model client, a tool, "
        "middleware, a library's own cancel scope or timeout); this input has no output, "
        "the others carry on")
    error.__cause__ = cancel
    return error

