"""How much of a document fits one request: token counting and the chunk budget.

Token counts come from the best source the model offers: a model object with
an ``async count_tokens(text) -> int`` method (the embedded llama.cpp server
asks its own tokenizer; the OpenAI adapter uses ``tiktoken`` when installed)
is asked; otherwise, or when that fails, ``estimate_tokens`` gives a
conservative figure. The core never asks which vendor it talks to.

A chunk's text budget, in tokens::

    context_window - reserved_output - prompt_overhead - MARGIN_TOKENS

where ``context_window`` and ``reserved_output`` (``max_output_tokens``,
at most half the window) come from the model's ``ModelProfile``
(``ASSUMED_CONTEXT_WINDOW`` / ``ASSUMED_MAX_OUTPUT_TOKENS`` when the profile
does not know), and ``prompt_overhead`` counts the instructions and the
output's JSON Schema. Characters per token are measured on a sample of the
document (its first ``SAMPLE_CHARS`` characters; a text of no more UTF-8
bytes than the budget's tokens surely fits and is not counted: a tokenizer
writes at most one token a byte), so a chunk is made of
characters (``chunk_chars``) without tokenizing the whole document; chunks
keep ``SAFETY`` (90%) of the measured size, for text denser than the sample.

Map over items (``Chunking(items="entries")``): chunks are also capped at
``items_per_chunk`` units (the ``Chunking``'s, else the profile's: a weak
model reads one item far better than many), and a document is then always
read chunk by chunk, even one that would fit the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentflow._arguments import check_choice, check_int, check_optional, wrong_value
from agentflow._logging import get_logger
from agentflow._slots_init import slot_init
from agentflow.errors import UsageError
from agentflow.extraction.chunking import ITEM_UNITS, ItemUnit
from agentflow.usage import estimate_tokens

__all__ = [
    "ASSUMED_CONTEXT_WINDOW",
    "ASSUMED_MAX_OUTPUT_TOKENS",
    "DEFAULT_CHUNKING",
    "SAFETY",
    "Budget",
    "Chunking",
    "FitCheck",
    "TokenCounter",
    "count_tokens",
    "estimate_tokens",
    "plan_budget",
]

ASSUMED_CONTEXT_WINDOW = 8192
"""Tokens assumed when the profile does not know the window (most current
models have far more; an 8K window is the floor of mainstream ones)."""
ASSUMED_MAX_OUTPUT_TOKENS = 2048
"""Reply tokens reserved when the profile does not know the model's cap."""
MARGIN_TOKENS = 64
"""Tokens left for the chat template's role markers and the like."""
SAMPLE_CHARS = 20_000
"""Characters of the document's start on which characters per token are measured."""
SAFETY = 0.9
"""The share of the measured size a chunk keeps."""

_log = get_logger("agentflow.extraction")


@runtime_checkable
class TokenCounter(Protocol):
    """A model that can count tokens of text as it would bill them."""

    async def count_tokens(self, text: str) -> int: ...


async def count_tokens(model: Any, text: str) -> int:
    """Tokens of ``text`` for ``model``: its own ``count_tokens`` when it has
    one and it works, else ``estimate_tokens`` (a failure is logged, never raised).

    Raises:
        UsageError: the model itself cannot be used (``InvalidModelError``: a
            missing weights file, a missing extra): the same error its first
            request would raise, without a fallback warning before it.
    """
    if isinstance(model, TokenCounter):
        try:
            return int(await model.count_tokens(text))
        except UsageError:
            raise
        except Exception as exc:  # a tokenizer endpoint down, a library without data...
            _log.warning("token_count_fallback", error=f"{type(exc).__name__}: {exc}")
    return estimate_tokens(text)


@dataclass(frozen=True, slots=True)
class Chunking:
    """How long documents are split (``extract_many(chunking=...)``).

    Attributes:
        max_tokens: text tokens per chunk at most (``None``: what fits the
            model's context window; smaller chunks help small models' recall).
        max_chars: characters per chunk at most (``None``: no extra cap).
        overlap: characters each chunk repeats from the previous one
            (``None``: a tenth of the chunk), so items cut at a boundary are
            seen whole once. With ``items`` only a unit longer than a chunk
            is split with overlap; whole units never overlap.
        items: map over items: the name of the output model's top-level list
            field whose items this document is a run of (``"entries"`` of a
            changelog history). Chunks are then made of whole units where an
            item may begin (``item_unit``), at most ``items_per_chunk`` of
            them, and each chunk's list may hold at most as many items as
            the chunk holds units (a small model cannot loop on one item
            until its reply is cut); the chunks' items are merged by the
            field's declared rule (``Merge.by_key``). ``None``: chunks are
            sized by the window and split at natural boundaries.
        item_unit: with ``items``: ``"block"`` (an item begins at a top-level
            block: an unindented line after a blank line) or ``"line"`` (an
            item may begin on any line: one record per line).
        items_per_chunk: with ``items``: units per chunk at most (``None``:
            the model profile's ``items_per_chunk``, else what fits).
    """

    max_tokens: int | None = None
    max_chars: int | None = None
    overlap: int | None = None
    items: str | None = None
    item_unit: ItemUnit = "block"
    items_per_chunk: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_tokens", "max_chars", "items_per_chunk"):
            check_int(f"Chunking.{name}", getattr(self, name), 1, optional=True)
        check_int("Chunking.overlap", self.overlap, 0, optional=True)
        check_optional("Chunking.items", self.items, str, "a str")
        if self.items is not None and not self.items.isidentifier():
            raise wrong_value("Chunking.items", "the name of a top-level list field", self.items)
        check_choice("Chunking.item_unit", self.item_unit, ITEM_UNITS)


DEFAULT_CHUNKING = Chunking()
"""Chunks sized by the model's profile, a tenth of a chunk overlapping."""


@slot_init
@dataclass(frozen=True, slots=True)
class Budget:
    """What ``plan_budget`` decided for one document.

    Attributes:
        fits: the whole document fits one request (no chunking).
        chunk_tokens: text tokens per chunk.
        chunk_chars: characters per chunk.
        overlap: characters of overlap between chunks.
        chars_per_token: measured on the document's sample.
        units_per_chunk: map over items: units per chunk at most (``None``: no cap).
    """

    fits: bool
    chunk_tokens: int
    chunk_chars: int
    overlap: int
    chars_per_token: float
    units_per_chunk: int | None = None


async def plan_budget(
    model: Any, text: str, overhead_tokens: int, chunking: Chunking = DEFAULT_CHUNKING
) -> Budget:
    """The chunk budget of ``text`` for ``model`` (see the module docstring).

    Args:
        model: the ``ChatModel`` (its ``profile`` and, if any, ``count_tokens``).
        text: the document.
        overhead_tokens: tokens of the prompt besides the text (instructions, schema).
        chunking: the caller's limits.

    Raises:
        UsageError: the instructions and schema leave no room for text in the
            model's context window.
    """
    profile = getattr(model, "profile", None)
    window, reserve, room = _room(profile, overhead_tokens)
    if room < 16:
        raise UsageError(
            f"the instructions and output schema take {overhead_tokens} tokens of a "
            f"{window}-token context window ({reserve} reserved for the reply): no room for "
            f"text; shorten them or use a model with a larger window")
    chunk_tokens = min(room, chunking.max_tokens or room)
    units = _units(profile, chunking)
    if _surely_fits(text, chunking.max_chars, chunk_tokens):  # nothing to count
        chars = max(1, int(chunk_tokens * 3 * SAFETY))
        chars = min(chars, chunking.max_chars or chars)
        overlap = chunking.overlap if chunking.overlap is not None else chars // 10
        return Budget(units is None, chunk_tokens, chars, min(overlap, chars - 1), 3.0, units)
    sample = text[:SAMPLE_CHARS]
    sample_tokens = max(1, await count_tokens(model, sample))
    ratio = max(len(sample), 1) / sample_tokens
    total = sample_tokens if len(text) <= SAMPLE_CHARS else math.ceil(len(text) / ratio)
    chunk_chars = max(1, int(chunk_tokens * ratio * SAFETY))
    if chunking.max_chars is not None:
        chunk_chars = min(chunk_chars, chunking.max_chars)
    fits = total <= chunk_tokens and len(text) <= chunk_chars / SAFETY
    if chunking.max_chars is not None:
        fits = fits and len(text) <= chunking.max_chars
    overlap = chunking.overlap if chunking.overlap is not None else chunk_chars // 10
    return Budget(fits and units is None, chunk_tokens, chunk_chars,
                  min(overlap, chunk_chars - 1), ratio, units)


def _room(profile: Any, overhead_tokens: int) -> tuple[int, int, int]:
    """``(window, tokens reserved for the reply, tokens left for text)`` of a
    request to a model of ``profile`` whose prompt takes ``overhead_tokens``
    besides the text."""
    window = getattr(profile, "context_window", None) or ASSUMED_CONTEXT_WINDOW
    reserve = getattr(profile, "max_output_tokens", None) or ASSUMED_MAX_OUTPUT_TOKENS
    reserve = min(reserve, window // 2)
    return window, reserve, window - reserve - overhead_tokens - MARGIN_TOKENS


def _units(profile: Any, chunking: Chunking) -> int | None:
    """Units per chunk at most when mapping over items (``None``: no cap, or no map)."""
    if chunking.items is None:
        return None
    units: int | None = chunking.items_per_chunk or getattr(profile, "items_per_chunk", None)
    return units


def _surely_fits(text: str, max_chars: int | None, chunk_tokens: int) -> bool:
    """Whether ``text`` surely fits a chunk of ``chunk_tokens`` tokens (and
    ``max_chars`` characters): no more UTF-8 bytes than tokens (a tokenizer
    writes at most a token a byte; ``estimate_tokens``' 3 characters a token is
    no bound: base64 or hex takes 1.5, and a mail's attachment then filled the
    window, leaving its reply 83 tokens). A lone surrogate counts as its three
    bytes (a strict encode raised, and the run ended)."""
    return ((max_chars is None or len(text) <= max_chars)
            and len(text.encode("utf-8", "surrogatepass")) <= chunk_tokens)


class FitCheck:
    """Whether a document is read in one request without asking ``plan_budget``
    (a coroutine and a ``Budget`` per document): one run's ``chunking``, whose
    limits are worked out once per model profile and prompt overhead. ``True``
    only where ``plan_budget`` would surely say ``fits``; ``False`` means
    "ask ``plan_budget``" (which also raises when there is no room for text)."""

    __slots__ = ("_chunking", "_limits")

    def __init__(self, chunking: Chunking) -> None:
        self._chunking = chunking
        self._limits: tuple[Any, int, int | None] | None = None
        """``(profile, overhead, tokens a surely fitting text may have at most:
        None when none may be read in one request without plan_budget)``."""

    def fits(self, model: Any, text: str, overhead_tokens: int) -> bool:
        """Whether ``text`` surely fits one request of ``model`` (see the class)."""
        profile = getattr(model, "profile", None)
        limits = self._limits
        if limits is None or limits[0] is not profile or limits[1] != overhead_tokens:
            chunking = self._chunking
            room = _room(profile, overhead_tokens)[2]
            tokens = (None if room < 16 or _units(profile, chunking) is not None
                      else min(room, chunking.max_tokens or room))
            limits = self._limits = (profile, overhead_tokens, tokens)
        tokens = limits[2]
        return tokens is not None and _surely_fits(text, self._chunking.max_chars, tokens)
