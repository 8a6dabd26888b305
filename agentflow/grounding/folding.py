"""Folding text for matching (the third step of "verbatim",
``agentflow.grounding``): Unicode compatibility form (NFKC) and
typographic punctuation read as plain ASCII; and, for a learned locator's
values (``agentflow.grounding.locator_rule``), whitespace folded
(``same_text``). Pure functions."""

from __future__ import annotations

import unicodedata

from agentflow.grounding.edges import clean_edges

__all__ = ["TYPOGRAPHIC", "fold_text", "same_text"]

TYPOGRAPHIC = str.maketrans({
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63", "-"),
})
"""Typographic punctuation read as its plain ASCII form when folding (after
NFKC, which already makes a non-breaking or narrow space a space and ``…``
``...``): curly single quotes, apostrophes and primes as ``'``; curly double
quotes and double primes as ``"``; hyphens, figure/en/em dashes, the minus
sign as ``-``. One character for one, so folded offsets map back to the source."""


def fold_text(text: str) -> str:
    """``text`` in the folded form: NFKC, then ``TYPOGRAPHIC``."""
    return unicodedata.normalize("NFKC", text).translate(TYPOGRAPHIC)


def _fold_ws(text: str) -> str:
    """``text`` with each run of whitespace as one space, none at the edges."""
    return " ".join(text.split())


def same_text(located: str, value: str, *, clean: bool = False) -> bool:
    """Whether ``value`` is the ``located`` text with whitespace folded: each
    run of whitespace (spaces, tabs, a line break and the next line's
    indentation) as one space, none at the edges. A document wraps a long
    value over continuation lines (deb822, RFC 5322 headers) that a model
    writes on one line; nothing else is loosened (``a, b`` is not ``a b``,
    ``a b`` not ``ab``). ``clean``: the clean form of ``located``
    (``clean_edges``) is its value too, as ``Grounded(clean=True)`` makes
    a model write it; ``value``'s own edges are compared as they are (``:
    4.16.0`` is never ``4.16.0``)."""
    folded = _fold_ws(value)
    return folded == _fold_ws(located) or (clean and folded == _fold_ws(clean_edges(located)))
