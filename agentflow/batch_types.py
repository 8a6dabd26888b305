"""What ``extract_many`` (``agentflow.batch``) takes and gives: an input (id,
text, media), its result (output or typed error, spans, usage, chunks,
truncation), and the forms an input may be given in."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from agentflow.extraction.chunked import ChunkReport, Truncation
from agentflow.extraction.merge import Conflict
from agentflow.model import Usage

__all__ = ["ExtractInput", "ExtractResult", "InputLike"]


@dataclass(frozen=True, slots=True)
class ExtractInput:
    """One input: an id (unique within the batch), its text, and ``media``: image
    or document blocks (``agentflow.content``) sent before the text in the same
    user message (a PDF the model reads itself). An input with media is sent
    whole, never chunked; its text may then be empty. A
    ``agentflow.deferred.DeferredDocument`` among the media is read from disk
    only when this input is sent."""

    id: str
    text: str
    media: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class ExtractResult:
    """The outcome of one input.

    Attributes:
        index: position of the input in the batch (from 0).
        id: the input's id.
        output: the validated output, or ``None``.
        error: the exception (a ``StructuredOutputError``, a ``ProviderError``...)
            when there is no output.
        usage: tokens and model requests spent on this input.
        attempts: model requests made for this input.
        duration: wall-clock seconds from start to end of this input's call.
        spans: field path -> ``[(start, end)]`` character offsets of each
            grounded value in the input text (``agentflow.extraction.grounding``).
        chunks: how a long document was read (``None``: in one request).
        truncated: set when ``max_chars`` cut the document.
        conflicts: fields on which a long document's chunks disagreed.
    """

    index: int
    id: str
    output: Any
    error: Exception | None
    usage: Usage
    attempts: int
    duration: float
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    chunks: ChunkReport | None = None
    truncated: Truncation | None = None
    conflicts: tuple[Conflict, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether a validated output was produced."""
        return self.error is None


InputLike = str | ExtractInput | tuple[str, str]


def _as_input(index: int, item: InputLike) -> ExtractInput:
    if isinstance(item, ExtractInput):
        return item
    if isinstance(item, str):
        return ExtractInput(str(index), item)
    if isinstance(item, tuple) and len(item) == 2:
        return ExtractInput(str(item[0]), str(item[1]))
    raise TypeError(
        f"input {index} is a {type(item).__name__}; expected str, (id, text) or ExtractInput"
    )


async def _aiter(inputs: Iterable[InputLike] | AsyncIterable[InputLike]) -> AsyncIterator[
    InputLike
]:
    if isinstance(inputs, AsyncIterable):
        async for item in inputs:
            yield item
    else:
        for item in inputs:
            yield item
