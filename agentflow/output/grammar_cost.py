"""Whether llguidance's lexer can hold a document as a substring terminal,
estimated before the grammar is sent (``grammar_terminals.TerminalBuilder``
asks before it spells a ``SOURCE`` terminal).

llguidance computes each token mask by walking the tokenizer's trie through
the lexer's regex derivatives, and gives each mask step a fixed amount of
"lexer fuel" (``ParserLimits.step_lexer_fuel``, 200,000, which llama.cpp
keeps). Right after a grounded string's opening quote every position of the
source is still possible, so that step walks every token that is a
substring of the document; a step over the fuel stops the grammar with
``LexerTooComplex`` ("too many expressions constructed"), and llama.cpp then
drops the grammar and decodes unconstrained until ``max_tokens``.

What that step costs grows with how many distinct short strings the document
holds, not with its length: measured with llguidance 1.9.1 on the bundled
Gemma 3 tokenizer (262,144 tokens, about the largest in use), the fuel the
first step needs is at most ``30,000 + 21 * g`` where ``g`` is the number of
distinct 1- to 4-byte substrings of the JSON-escaped source (14 documents,
2-60 KB: Debian changelogs, Python source, freedesktop ``.desktop`` files
with a dozen scripts). A 5.6 KB multilingual ``vim.desktop`` has
``g`` = 6,590 (154,000 fuel; 168,000 at the step after ``Vim``), a 20 KB
English changelog 8,707 (168,000), 60 KB of it 15,163 (259,000: over), while
40 KB of ``"x "`` has 8. The ``whole_tokens`` and ``whole_lines`` terminals
cost no more than the plain one, and a clean one (``CLEAN_EDGES``) the same
when it is the only intersection (``SOURCE & TRIMMED & CLEAN_EDGES``, the
construction before, cost 1.4 times as much: 218,000 on ``vim.desktop``,
over); a ``pattern`` intersected with the source cost up to 2.6 times as
much (``PATTERN_FACTOR``).

    affordable(escaped_source)                   # a plain substring terminal fits
    affordable(escaped_source, PATTERN_FACTOR)   # one with a pattern intersected fits
"""

from __future__ import annotations

__all__ = ["FUEL_BASE", "FUEL_PER_GRAM", "LEXER_BUDGET", "PATTERN_FACTOR", "affordable",
           "lexer_fuel", "source_grams"]

LEXER_BUDGET = 160_000
"""Estimated lexer fuel a substring terminal may need: 80% of llguidance's
per-step fuel (200,000). The rest is for the steps inside a value, which
cost up to 1.1 times the estimate in the documents measured (after ``Vim``;
after a Japanese word in tests/data/editor.desktop), and for the other
terminals allowed at the same step. Over it (``affordable``), a grounded
string is spelled by its own JSON Schema and verification decides: the
5.6 KB ``vim.desktop`` (estimate 168,000) is, and so is all of
tests/data/editor.desktop (174,000; its real worst step, 183,000, would have
fitted: the price of a margin); its first 2.9 KB (152,000) keep their
substring terminal."""

FUEL_BASE = 30_000
"""Estimated fuel of a substring terminal's first step, fixed part."""

FUEL_PER_GRAM = 21
"""Estimated fuel of a substring terminal's first step per distinct 1- to
4-byte substring of the JSON-escaped source (``source_grams``)."""

PATTERN_FACTOR = 3
"""How many times a substring terminal costs when a ``pattern`` is
intersected with it (measured up to 2.6)."""

_GRAM = 4
_BLOCK = 4096


def source_grams(escaped: str, limit: int | None = None) -> int:
    """The distinct 1- to 4-byte substrings of ``escaped`` (UTF-8), counted
    a block at a time; once the count passes ``limit`` it is returned as is
    (the caller only wanted to know that)."""
    data = escaped.encode("utf-8")
    seen: set[bytes] = set()
    for start in range(0, len(data), _BLOCK):
        end = min(len(data), start + _BLOCK)
        for size in range(1, _GRAM + 1):
            seen.update(data[i:i + size] for i in range(start, min(end, len(data) - size + 1)))
        if limit is not None and len(seen) > limit:
            break
    return len(seen)


def lexer_fuel(escaped: str, limit: int | None = None) -> int:
    """The estimated lexer fuel of a substring terminal over the JSON-escaped
    source ``escaped`` (``FUEL_BASE + FUEL_PER_GRAM * source_grams``); counting
    stops once it passes ``limit``."""
    grams = None if limit is None else max(0, (limit - FUEL_BASE) // FUEL_PER_GRAM)
    return FUEL_BASE + FUEL_PER_GRAM * source_grams(escaped, grams)


def affordable(escaped: str, factor: int = 1) -> bool:
    """Whether a substring terminal over ``escaped``, ``factor`` times as
    costly as a plain one (``PATTERN_FACTOR`` with a pattern intersected),
    stays within ``LEXER_BUDGET``."""
    limit = LEXER_BUDGET // factor
    return lexer_fuel(escaped, limit) <= limit
