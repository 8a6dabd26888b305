"""Folding text for matching (the third step of "verbatim",
``agentflow.grounding``): Unicode compatibility form (NFKC) and
typographic punctuation read as plain ASCII. Pure functions."""

from __future__ import annotations

import unicodedata

__all__ = ["TYPOGRAPHIC", "fold_text"]

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
