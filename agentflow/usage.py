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
    ``cached_tokens`` the part served from a prompt cache (cache reads);
    ``cache_write_tokens`` the part written to one (cache writes, which
    vendors that report them bill above plain input; each adapter says which
    field it reads them from); ``reasoning_tokens``
    the part of ``output_tokens`` spent thinking. ``requests`` counts model
    requests summed into this value.

    ``unreported`` counts the requests among them whose usage the vendor did
    not report (a stream without a usage chunk: a server that ignores
    ``stream_options.include_usage``, a vendor that reports usage on some
    requests only, a count of zero prompt tokens). Their tokens are unknown,
    not zero: the counts hold the known part only, ``known`` is ``False`` and
    ``describe()`` says so ("tokens unknown", never "0 tokens"). Sums keep
    both parts (known counts add up, unreported requests add up).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    unreported: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
            self.unreported + other.unreported,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens (the known part: see ``known``)."""
        return self.input_tokens + self.output_tokens

    @property
    def known(self) -> bool:
        """Whether every request summed here reported its usage."""
        return self.unreported == 0

    def request(self) -> Usage:
        """This usage as one request's: ``requests=1``, and ``unreported=1``
        when it reports no prompt tokens (every request has a prompt, so a
        count of zero, or no usage chunk at all, is an unknown count)."""
        return Usage(self.input_tokens, self.output_tokens, self.cached_tokens,
                     self.reasoning_tokens, 1, 0 if self.input_tokens else 1,
                     self.cache_write_tokens)

    def describe(self) -> str:
        """``"1234 tokens"``; ``"tokens unknown (3 requests unreported)"`` when
        no request reported usage; ``"1234 tokens + unknown (2 of 9 requests
        unreported)"`` when some did not."""
        if not self.unreported:
            return f"{self.total_tokens} tokens"
        if self.unreported >= self.requests and not self.total_tokens:
            some = "request" if self.unreported == 1 else "requests"
            return f"tokens unknown ({self.unreported} {some} unreported)"
        return (f"{self.total_tokens} tokens + unknown ({self.unreported} of "
                f"{max(self.requests, self.unreported)} requests unreported)")


def estimate_tokens(text: str) -> int:
    """A conservative token count: one token per 3 ASCII characters (rounded
    up) plus one per other code point.

    Byte-pair tokenizers of current models average about 4 characters of
    English (3 of code or numbers) per token and 1-2 CJK characters per token,
    so this overestimates ordinary text and leaves room rather than overflow.
    """
    non_ascii = sum(1 for ch in text if ord(ch) > 127) if not text.isascii() else 0
    return math.ceil((len(text) - non_ascii) / 3) + non_ascii
