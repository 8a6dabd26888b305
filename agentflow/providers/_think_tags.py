"""Reasoning written inline in reply text as ``<think>...</think>``, split out.

Reasoning models served by a generic OpenAI-compatible server *without* a
reasoning parser (vLLM without ``--reasoning-parser``, llama.cpp with
``--reasoning-format none``, LM Studio, gateways) write their reasoning into
``content``, and MiniMax M2 does so on its own API. ``ThinkTagParser`` is a
``ChunkParser`` that turns the text between the tags into ``ThinkingDelta``s
and the rest into ``TextDelta``s, streamed and whole, a tag cut anywhere
across chunks. Which models need it is profile data
(``ModelProfile.inline_thinking``): ``inline_thinking_for_model`` gives the
mode the name rules (``INLINE_THINKING_MODELS``) pick for a model on a host
that is not its vendor's.

Modes (``agentflow.model.InlineThinking``):

* ``"tags"``: the model writes both tags (Qwen3 hybrid, GLM-4.5+, Phi-4-reasoning,
  MiniMax M2). Text outside them streams at once (only a possible partial tag
  at a chunk's end is held).
* ``"opened"``: the chat template ends the prompt with ``<think>\\n``, so the
  reply starts inside the reasoning and shows only ``</think>`` (DeepSeek-R1
  since its 2025-01 template update and its distills, QwQ-32B,
  Qwen3-*-Thinking-2507: their model cards say the output "contains only
  ``</think>``"). Text before a first ``</think>`` is held until it arrives
  (then it was reasoning) or the reply ends (then it was text: a reply that
  never reasoned, such as grammar-constrained JSON; but a reply cut by its
  length limit was still reasoning). A reply that starts with ``<think>`` is
  read as in ``"tags"``.

A block opened and never closed in a reply that says nothing else (a model
that forgot ``</think>`` before answering) also gives, as text, what follows
its first ``{``/``[``: the answer it wrote inside (the rule of
``agentflow.output.thinking.strip_thinking``, so structured output still finds it).

When the server splits reasoning itself (a ``reasoning_content``/``reasoning``
field arrives), the text is passed on untouched from then on.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any, ClassVar

from agentflow.model import FinishChunk, InlineThinking, ModelChunk, TextDelta, ThinkingDelta
from agentflow.providers._openai_chunks import ChunkParser

__all__ = [
    "CLOSE_TAG",
    "INLINE_THINKING_MODELS",
    "OPEN_TAG",
    "OpenedThinkTagParser",
    "ThinkTagParser",
    "inline_thinking_for_model",
    "think_tag_parser",
]

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"

INLINE_THINKING_MODELS: tuple[tuple[str, InlineThinking], ...] = (
    ("*deepseek-r1*", "opened"),      # R1 / R1-0528 / R1-Distill-*: template adds <think>\n
    ("*qwq*", "opened"),              # QwQ-32B: template adds <think>\n
    ("*qwen3*thinking*", "opened"),   # Qwen3-*-Thinking-2507: "output contains only </think>"
    ("*glm-z1*", "opened"),           # GLM-Z1-*-0414: always reasons
    ("*qwen3*", "tags"),              # Qwen3 hybrid: writes <think> itself (empty when off)
    ("*glm-4.[5-9]*", "tags"),        # GLM-4.5/4.6/4.7: hybrid, writes <think> itself
    ("*phi-4*reasoning*", "tags"),    # Phi-4-reasoning(-plus): <think>...</think> then answer
    ("*minimax-m2*", "tags"),         # MiniMax M2.x: always writes <think>...</think>
)
"""Model-name globs (lower case, first match wins) -> how a generic server
hosting that model leaves its reasoning in text. Sources: each model's
Hugging Face card and ``chat_template`` (tokenizer_config.json)."""


def inline_thinking_for_model(model: str) -> InlineThinking | None:
    """The mode ``INLINE_THINKING_MODELS`` gives ``model`` (any routing prefix
    such as ``"deepseek-ai/"`` is part of the name the globs see), else ``None``."""
    lowered = model.lower()
    for pattern, mode in INLINE_THINKING_MODELS:
        if fnmatchcase(lowered, pattern):
            return mode
    return None


def _partial_tag(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that starts ``tag``."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


class ThinkTagParser(ChunkParser):
    """``ChunkParser`` splitting ``<think>...</think>`` out of the content
    (mode ``"tags"``; ``OpenedThinkTagParser``: ``"opened"``).

    Class attributes: ``opened`` (the reply starts inside the reasoning),
    ``yields_to_field`` (a ``reasoning_content``/``reasoning`` field turns
    the splitting off: the server already splits), ``recovers_unclosed``
    (an answer written inside a never-closed block is also given as text).
    """

    __slots__ = ("_cut", "_held", "_inside", "_plain", "_said", "_start", "_thought", "_trim")

    opened: ClassVar[bool] = False
    yields_to_field: ClassVar[bool] = True
    recovers_unclosed: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self._held = ""
        self._inside = False
        self._trim = False
        self._plain = False
        self._cut = False
        self._said = False
        self._thought: list[str] = []
        self._start = self.opened
        """Opened mode before the reply showed whether it reasons."""

    def delta(self, delta: Mapping[str, Any], out: list[ModelChunk]) -> None:
        """As ``ChunkParser.delta``; a reasoning field first turns splitting off."""
        if (self.yields_to_field and not self._plain
                and (delta.get("reasoning_content") or delta.get("reasoning"))):
            self._plain = True
            self._flush_text(out)
        super().delta(delta, out)

    def text(self, content: str, out: list[ModelChunk]) -> None:
        """Split ``<think>...</think>`` out of the content, tags cut anywhere."""
        if self._plain:
            out.append(TextDelta(content))
            return
        text = self._held + content
        self._held = ""
        if self._start:
            head = text.lstrip()
            if head.startswith(OPEN_TAG) or (len(head) < len(OPEN_TAG)
                                             and OPEN_TAG.startswith(head)):
                if len(head) < len(OPEN_TAG):
                    self._held = text  # maybe "<think>" still coming
                    return
                self._start = False  # the model opened it itself: "tags"
            else:
                at = text.find(CLOSE_TAG, max(0, len(text) - len(content) - len(CLOSE_TAG)))
                if at < 0:
                    self._held = text  # reasoning or plain text: the end tells
                    return
                self._start = False
                self._inside = True
                self._trim = True  # the template's "<think>\n": the newline goes
                self._emit(text[:at], out)
                text = text[at + len(CLOSE_TAG):]
                self._inside = False
                self._trim = True
        while text:
            tag = CLOSE_TAG if self._inside else OPEN_TAG
            at = text.find(tag)
            if at < 0:
                keep = _partial_tag(text, tag)
                self._emit(text[: len(text) - keep], out)
                self._held = text[len(text) - keep:]
                return
            self._emit(text[:at], out)
            text = text[at + len(tag):]
            self._inside = not self._inside
            self._trim = True
            if self._inside:
                self._thought.clear()

    def _emit(self, piece: str, out: list[ModelChunk]) -> None:
        if self._trim:
            piece = piece.lstrip("\n") if self._inside else piece.lstrip()
            if not piece:
                return
            self._trim = False
        if piece:
            if self._inside:
                out.append(ThinkingDelta(piece))
                if self.recovers_unclosed and not self._said:
                    self._thought.append(piece)
            else:
                self._said = True
                out.append(TextDelta(piece))

    def _flush_text(self, out: list[ModelChunk]) -> None:
        """Held text of a reply that never closed the reasoning, as text."""
        if self._held:
            held, self._held = self._held, ""
            if self._start:
                self._start = False
                self._said = True
                out.append(TextDelta(held))
            else:
                self._emit(held, out)

    def finish(self, raw: str, native: Any = None) -> FinishChunk:
        """As ``ChunkParser.finish``; notes a reply cut by its length limit."""
        chunk = super().finish(raw, native)
        self._cut = chunk.reason == "length"
        return chunk

    def close(self) -> list[ModelChunk]:
        """What is held back: a partial tag that never completed, or (opened
        mode) a reply that never showed ``</think>``: reasoning when the
        length limit cut it, else text; then, for a reply that said nothing
        but a block never closed, its answer from the first ``{``/``[``."""
        out: list[ModelChunk] = []
        if self._start and self._held and self._cut:
            self._start = False
            self._inside = True
            self._trim = True
        self._flush_text(out)
        if self._inside and self._thought and not self._said and not self._cut:
            thought = "".join(self._thought)
            starts = [p for p in (thought.find("{"), thought.find("[")) if p >= 0]
            if starts:  # the answer written inside a block never closed
                out.append(TextDelta(thought[min(starts):]))
        return out


class OpenedThinkTagParser(ThinkTagParser):
    """``ThinkTagParser`` for mode ``"opened"`` (the reply starts inside the reasoning)."""

    __slots__ = ()

    opened: ClassVar[bool] = True


def think_tag_parser(base: type[ChunkParser], mode: InlineThinking | None) -> type[ChunkParser]:
    """The parser class for a model whose profile says ``mode``: ``base`` when
    ``mode`` is ``None`` or ``base`` splits tags itself (a ``ThinkTagParser``,
    such as MiniMax's) or is a vendor's own parser (kept: its quirks win);
    else ``ThinkTagParser`` or ``OpenedThinkTagParser``."""
    if mode is None or base is not ChunkParser:
        return base
    return OpenedThinkTagParser if mode == "opened" else ThinkTagParser
