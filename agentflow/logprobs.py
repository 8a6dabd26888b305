"""``TokenLogprob``: one reply token with its log-probability (re-exported by
``agentflow.model``; kept in a module of its own so that ``agentflow.messages``,
which stores a reply's tokens, reads them without importing the model layer)."""

from __future__ import annotations

import builtins
from typing import NamedTuple

__all__ = ["TokenLogprob"]


class TokenLogprob(NamedTuple):
    """One token of the reply as the model wrote it: its text, its natural
    log-probability (``<= 0``; the model's distribution before any grammar
    held the token) and its UTF-8 bytes where the vendor gives them (a token
    may hold part of a character: its ``text`` is then not the bytes').

    A named tuple, not a dataclass: one is made for every token of every
    reply that carries log-probabilities, and a tuple is made in C
    (``tuple.__new__(TokenLogprob, (token, logprob, data))``) without a
    Python ``__init__`` (measured under cachegrind: reading a reply's 33
    tokens into dataclasses took about a tenth of an extraction's
    instructions per document in ``benchmarks/bench_scale.py``).
    Immutable, compared and hashed as a tuple."""

    token: str
    logprob: float
    bytes: builtins.bytes | None = None
