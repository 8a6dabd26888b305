"""What one delta of an OpenAI-style stream adds to the text so far (used by
``_openai_chunks.ChunkParser``): the text of one streamed call's arguments or
of a reply channel so far (``SoFar``), ``new_text`` (a channel's text streamed
cumulatively or restated whole, read once), and ``content_parts`` (reasoning
and text of ``content`` given as a list of parts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

__all__ = ["SoFar", "content_parts", "new_text", "whole_json"]


class SoFar:
    """The text of one streamed call's arguments, or of one reply channel, so
    far (its fragments)."""

    __slots__ = ("cumulative", "parts", "size")

    def __init__(self, first: str) -> None:
        self.parts = [first]
        self.size = len(first)
        self.cumulative = False
        """Whether the server sends the whole text so far in each fragment."""

    def text(self) -> str:
        """The text so far (joined once)."""
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0]


def whole_json(text: str) -> bool:
    """Whether ``text`` is already one whole JSON value."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def content_parts(parts: Sequence[Any]) -> tuple[str, str]:
    """The thinking and the text of ``content`` given as a list of parts.

    A ``thinking`` part holds the reasoning, as a string or as a list of text
    parts (Mistral's Magistral models: ``{"type": "thinking", "thinking":
    [{"type": "text", "text": ...}]}``, in whole replies and in every stream
    delta; vercel/ai#8072, BerriAI/litellm#16272): it is thinking, never
    dropped. Every other part gives its ``text``."""
    thought: list[str] = []
    text: list[str] = []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "thinking":
            inner = part.get("thinking")
            if isinstance(inner, str):
                thought.append(inner)
            elif isinstance(inner, list):
                thought += [str(p.get("text") or "") for p in inner if isinstance(p, Mapping)]
        else:
            text.append(str(part.get("text", "")))
    return "".join(thought), "".join(text)


def new_text(so_far: dict[str, SoFar], channel: str, piece: str, ending: bool = False,
             known: bool | None = None) -> str:
    """What ``piece`` adds to the ``channel`` text in ``so_far`` (updated);
    ``ending``: its payload carries the finish reason; ``known``: the
    endpoint's ``ModelProfile.cumulative_stream_deltas`` (``False``: every
    piece is new text, read as it comes, no guess; ``True``: every piece is
    the whole text so far, from the first; ``None``: guessed, as follows).

    Some OpenAI-compatible paths stream ``content`` and ``reasoning_content``
    *cumulatively*, each delta the whole text so far (DashScope's Coding Plan
    endpoints, QwenLM/qwen-code#3896): read as deltas, the reply repeated
    itself ("Paris Paris is the caParis is...") and its JSON was no JSON. A
    delta longer than the text so far that starts with it marks the stream
    cumulative; from then on only what a delta adds is read. A repeat (at
    least half the text so far) adds nothing; any other delta is a delta, so a
    short one that happens to be the text's start ("Y" after "Yes! ") is kept.

    A delta that is the whole text so far again restates it and adds nothing:
    two words or more anywhere (OCI's Cohere models restate the streamed
    sentence on the chunk that carries the tool calls, BerriAI/litellm#39965),
    any text in the terminal chunk (Rapid-MLX with
    ``--enable-auto-tool-choice``, raullenchai/Rapid-MLX#1709; RAGFlow,
    infiniflow/ragflow#15286). A text so far of two characters or fewer is too
    short to tell a cumulative stream from deltas ("ab", then "abc": read as
    it came). Until a stream is marked cumulative, only a delta at least as
    long as the text so far is compared: an incremental stream pays no join."""
    seen = so_far.get(channel)
    if seen is None:
        seen = so_far[channel] = SoFar(piece)
        seen.cumulative = known is True
        return piece
    if known is False:
        seen.parts.append(piece)
        seen.size += len(piece)
        return piece
    if len(piece) > seen.size and (seen.cumulative or len(seen.text().strip()) > 2):
        text = seen.text()
        if piece.startswith(text):
            seen.cumulative = True
            seen.parts, seen.size = [piece], len(piece)
            return piece[len(text):]
    elif seen.cumulative and 2 * len(piece) >= seen.size and seen.text().startswith(piece):
        return ""  # the whole text again, or most of it
    elif (len(piece) == seen.size and (ending or len(piece.split()) > 1)
          and piece == seen.text()):
        return ""  # the whole text restated
    seen.parts.append(piece)
    seen.size += len(piece)
    return piece
