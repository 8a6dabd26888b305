"""``Usage``: the tokens one model request (or a sum of them) took, and
``estimate_tokens``, a conservative count of a text's tokens. A leaf of the
package: errors, chunks and records all carry ``Usage``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentflow._slots_init import slot_init

__all__ = ["Usage", "estimate_tokens"]


@slot_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one or more requests. Units: tokens.

    ``input_tokens`` counts every prompt token (cached ones included);
    ``cached_tokens`` the part served from a prompt cache; ``reasoning_tokens``
    the part of ``output_tokens`` spent thinking. ``requests`` counts model
    requests summed into this value.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


def estimate_tokens(text: str) -> int:
    """A conservative token count: one token per 3 ASCII characters (rounded
    up) plus one per other code point.

    Byte-pair tokenizers of current models average about 4 characters of
    English (3 of code or numbers) per token and 1-2 CJK characters per token,
    so this overestimates ordinary text and leaves room rather than overflow.
    """
    non_ascii = sum(1 for ch in text if ord(ch) > 127) if not text.isascii() else 0
    return math.ceil((len(text) - non_ascii) / 3) + non_ascii
