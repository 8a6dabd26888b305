"""Tokens of a source text: the units a ``Grounded(whole_tokens=True)`` value
may not cut.

A **token** is a maximal run of characters that are neither whitespace nor
``DELIMITERS``, less any run of ``SENTENCE_END`` characters at its end (that
run is a piece of its own, so ``Paris.`` holds the token ``Paris``).
Whitespace characters and delimiters are pieces of one character each. The
source is the concatenation of its pieces (``pieces``), and a whole-token
value is a span that starts where a piece starts and ends where a piece ends
(``cuts_token`` says when it does not). So ``2:1.5.2-1``,
``jelmer@debian.org``, ``urgency=medium``, ``d/salsa-ci.yml`` and
``2.6.1-4~deb12u2`` are one token each; ``unstable;`` is ``unstable`` + ``;``;
``<jelmer@debian.org>`` is ``<`` + ``jelmer@debian.org`` + ``>``; and
``Standards-Version to 4.6.2.`` ends with ``4.6.2`` + ``.``.

The grammar (``agentflow.output.grammar``) splits a source into these pieces
for whole-token fields, and verification (``agentflow.grounding``)
refuses a match that cuts one: the same rule on every model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["DELIMITERS", "INVISIBLE", "SENTENCE_END", "cuts_token", "piece_spans", "pieces",
           "token_at"]

INVISIBLE = ("".join(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)) if not chr(c).isspace())
             + "\u200b\ufeff")
"""Characters no word holds that ``str.isspace`` does not count as space: the
control characters (a NUL, an escape, DEL; a PDF's or a terminal log's text has
them between words) and the zero-width space and BOM (a web page's or a joined
file's). Each ends a token, as a space does: ``Ann\\x00`` holds ``Ann``."""

DELIMITERS = "()[]{}<>\"'`,;" + INVISIBLE
"""Characters that end a token and are pieces of their own: brackets, quotes,
``,`` and ``;``, and the ``INVISIBLE`` ones. Not ``: . / - _ = @ + ~ #``, which
occur inside versions, e-mail addresses, paths and ``key=value`` words."""

SENTENCE_END = ".:!?"
"""Characters split off the end of a token when they end it (``Paris.``,
``d/control:``); inside a token (``4.6.2``, ``2:1.5``) they stay."""

_D = re.escape(DELIMITERS)
_S = re.escape(SENTENCE_END)
_PIECE = re.compile(
    rf"\s|[{_D}]"  # one whitespace character or delimiter
    rf"|[{_S}]+(?=[\s{_D}]|\Z)"  # a run of sentence ends that ends a token
    rf"|[^\s{_D}]+?(?=[{_S}]*(?:[\s{_D}]|\Z))"  # a token, less that run
)


def piece_spans(text: str) -> Iterator[tuple[int, int]]:
    """``[start, end)`` of each piece of ``text`` in order (tokens, their
    trailing sentence-end runs, single whitespace characters, single
    delimiters); together they cover ``text`` exactly."""
    for match in _PIECE.finditer(text):
        yield match.span()


def pieces(text: str) -> list[str]:
    """``text`` split into pieces (see the module docstring); ``"".join`` of
    the result is ``text``."""
    return _PIECE.findall(text)


def _is_token_char(c: str) -> bool:
    return not c.isspace() and c not in DELIMITERS


def _boundary(text: str, i: int) -> bool:
    """Whether a piece starts or ends at offset ``i`` of ``text``."""
    if i <= 0 or i >= len(text):
        return True
    before, after = text[i - 1], text[i]
    if not (_is_token_char(before) and _is_token_char(after)):
        return True
    if after in SENTENCE_END and before not in SENTENCE_END:
        # the rest of the token is a run of sentence ends: split off
        j = i
        while j < len(text) and text[j] in SENTENCE_END:
            j += 1
        return j == len(text) or not _is_token_char(text[j])
    return False


def cuts_token(text: str, start: int, end: int) -> bool:
    """Whether the span ``[start, end)`` of ``text`` begins or ends inside a
    token (so it is not made of whole pieces)."""
    return not (_boundary(text, start) and _boundary(text, end))


def token_at(text: str, start: int, end: int) -> str:
    """The first token that ``[start, end)`` cuts (the one around ``start``
    if the span begins inside a token, else the one around ``end``); the
    span's own text if it cuts none. For error messages."""
    at = start if not _boundary(text, start) else end if not _boundary(text, end) else -1
    if at < 0:
        return text[start:end]
    lo, hi = at, at
    while lo > 0 and not _boundary(text, lo):
        lo -= 1
    while hi < len(text) and not _boundary(text, hi):
        hi += 1
    return text[lo:hi]
