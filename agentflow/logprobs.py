"""``TokenLogprob``: one reply token with its log-probability, and
``TokenLogprobs``, a reply's tokens (re-exported by ``agentflow.model``; kept
in a module of its own so that ``agentflow.messages``, which stores a reply's
tokens, reads them without importing the model layer)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain
from typing import Any, NamedTuple, overload

__all__ = ["TokenLogprob", "TokenLogprobs"]


class TokenLogprob(NamedTuple):
    """One token of the reply as the model wrote it: its text, its natural
    log-probability (``<= 0``; the model's distribution before any grammar
    held the token) and its UTF-8 bytes where the vendor gives them (a token
    may hold part of a character: its ``text`` is then not the bytes').

    A named tuple, not a dataclass: one is made for every token of every
    reply whose tokens are read, and a tuple is made in C
    (``tuple.__new__(TokenLogprob, (token, logprob, data))``) without a
    Python ``__init__`` (measured under cachegrind: reading a reply's 33
    tokens into dataclasses took about a tenth of an extraction's
    instructions per document in ``benchmarks/bench_scale.py``).
    Immutable, compared and hashed as a tuple."""

    token: str
    logprob: float
    bytes: builtins.bytes | None = None


class TokenLogprobs(Sequence[TokenLogprob]):
    """A reply's tokens with their log-probabilities (``TextDelta.logprobs``,
    a reply message's ``TOKEN_LOGPROBS``): an immutable sequence of
    ``TokenLogprob``, compared and hashed as the tuple of its tokens
    (``TokenLogprobs(t) == tuple(t)``); a slice is a ``TokenLogprobs``.

    ``TokenLogprobs(tokens)`` holds the tokens given. A provider's subclass
    holds the vendor's own entries instead and reads them into
    ``TokenLogprob``s only when a token is first read (``_read``): most
    replies' tokens are only ever mapped onto an output's fields
    (``agentflow.output.token_confidence``), which ``written`` serves
    without making a tuple per token."""

    __slots__ = ("_tokens",)

    def __init__(self, tokens: Iterable[TokenLogprob] = ()) -> None:
        self._tokens: tuple[TokenLogprob, ...] | None = tuple(tokens)

    @property
    def tokens(self) -> tuple[TokenLogprob, ...]:
        """The tokens as a tuple (read once, then kept)."""
        tokens = self._tokens
        if tokens is None:
            tokens = self._tokens = self._read()
        return tokens

    def _read(self) -> tuple[TokenLogprob, ...]:
        """The tokens, read from what a subclass holds (called once; a
        subclass that sets ``_tokens`` to ``None`` overrides it)."""
        return ()

    def written(self) -> tuple[builtins.bytes, list[int], Sequence[float]]:
        """What the tokens wrote, as ``field_probabilities`` reads it: the
        bytes of every token in order (a token's ``bytes``, else its text in
        UTF-8), the byte offset each token ends at, and each token's
        log-probability."""
        tokens = self.tokens
        pieces = [t.token.encode() if t.bytes is None else t.bytes for t in tokens]
        return b"".join(pieces), list(accumulate(map(len, pieces))), [t.logprob for t in tokens]

    @classmethod
    def joined(cls, parts: Sequence[Sequence[TokenLogprob]]) -> TokenLogprobs:
        """The tokens of ``parts`` in order, as one sequence (a reply streamed
        in many text chunks); a single ``TokenLogprobs`` part is itself."""
        first = parts[0] if parts else None
        if isinstance(first, TokenLogprobs):
            if len(parts) == 1:
                return first
            joined = first._joined(parts)
            if joined is not None:
                return joined
        return TokenLogprobs(chain.from_iterable(parts))

    def _joined(self, parts: Sequence[Sequence[TokenLogprob]]) -> TokenLogprobs | None:
        """``parts`` (this one first) as one sequence of a subclass's own kind
        (its entries joined, still unread), or ``None``: a plain one then."""
        return None

    def __len__(self) -> int:
        return len(self.tokens)

    def __bool__(self) -> bool:
        return bool(self.tokens)

    @overload
    def __getitem__(self, index: int) -> TokenLogprob: ...

    @overload
    def __getitem__(self, index: slice) -> TokenLogprobs: ...

    def __getitem__(self, index: int | slice) -> TokenLogprob | TokenLogprobs:
        if isinstance(index, slice):
            return TokenLogprobs(self.tokens[index])
        return self.tokens[index]

    def __iter__(self) -> Iterator[TokenLogprob]:
        return iter(self.tokens)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TokenLogprobs):
            return self.tokens == other.tokens
        if isinstance(other, tuple):
            return self.tokens == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.tokens)

    def __repr__(self) -> str:
        return f"TokenLogprobs({list(self.tokens)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return TokenLogprobs, (self.tokens,)
