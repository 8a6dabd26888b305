"""Where one worked example's value sits on its line: the places a locator
is learned from (``agentflow.grounding.locators`` documents the rules), and
the example's value of a field (``example_value``).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentflow.grounding.lines import (
    KEY_LINE,
    continuation,
    continuation_to_key,
    paragraph_continuation,
    word_after,
)
from agentflow.grounding.locate import occurrences
from agentflow.grounding.quotes import QUOTES, past_escaped
from agentflow.grounding.tokens import cuts_token
from agentflow.output.examples import CheckedExample

__all__ = ["Seen", "block_of", "closest", "common_end", "common_start", "example_value", "is_gap",
           "keys_apart", "lead", "next_word", "one_line", "over_key", "places_at", "right_end",
           "seen_at", "shared_label", "tail"]


def example_value(example: CheckedExample, name: str) -> Any:
    """Field ``name`` of ``example``'s value (a mapping's key or an attribute;
    ``None`` when it has none)."""
    value = example.value
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


@dataclass(frozen=True, slots=True)
class Seen:
    """One example's value as it sits on its line."""

    line: int  # where its line begins in the text
    start: int  # where the value begins
    end: int  # where it ends
    before: str  # the line's text before the value
    after: str  # the text after it on its (last) line
    lead: str  # the line's indentation
    continued: bool = False  # it runs on over its line's continuation lines
    more: bool = False  # its (last) line has continuation lines it leaves out
    paragraph: bool = False  # it runs on over its paragraph's next lines (not indented)


def seen_at(value: str, text: str, like: Seen | None = None) -> Seen | None:
    """Where ``value`` first occurs in ``text`` within one line, or within
    one line and its continuation lines (``agentflow.grounding.lines.
    continuation``: a value that spans them); whole tokens preferred
    (``2.1`` is the version of ``Version: 2.1``, not a part of ``12.1``),
    a value right after its line's key counting as one (``Calculator`` of
    ``Name=Calculator``, whose ``=`` joins a token: ``agentflow.grounding.
    tokens``), not only a later ``;Calculator;``. ``like``: of the places
    ``places_at`` gives, the one whose line reads most like ``like``'s
    (``closest``) rather than the first."""
    if like is not None:
        places = _all_places(value, text)
        return closest(places, like) if places else None
    return next(_places(value, text), None)


def places_at(value: str, text: str) -> list[Seen]:
    """Every place ``seen_at`` could take ``value`` at in ``text``, in its
    order (the first is ``seen_at``'s): a value an example writes twice
    (``[submodule "cub"]`` and ``path = cub``; ``Debian`` inside
    ``PRETTY_NAME="Debian 12"`` before ``NAME="Debian"``) has a place for
    each."""
    return list(_all_places(value, text))


@functools.lru_cache(maxsize=256)
def _all_places(value: str, text: str) -> tuple[Seen, ...]:
    """``places_at``, kept: learning asks it again for each place a rule is
    learned from (``agentflow.grounding.locator_twins.anchors``) and each
    example left out."""
    return tuple(_places(value, text))


def closest(places: Sequence[Seen], like: Seen) -> Seen:
    """The one of ``places`` whose line reads most like ``like``'s: the same
    line start before the value (its label), else the longest text before
    the value in common, then after it; the first of equals.

    Raises:
        ValueError: when ``places`` is empty.
    """
    label = like.before[len(like.lead):]
    return max(places, key=lambda p: (
        p.before[len(p.lead):] == label, len(common_end([p.before, like.before])),
        len(common_start([p.after, like.after]))))


def _places(value: str, text: str) -> Iterator[Seen]:
    """The places of ``places_at``, one at a time."""
    every = occurrences(value, text)
    whole = set(occurrences(value, text, whole_tokens=True))
    spans = [s for s in every if s in whole or _after_key(text, *s)] or every
    for start, end in spans:
        lo = text.rfind("\n", 0, start) + 1
        multi = "\n" in text[start:end]
        paragraph = False
        if multi:
            lines = text[lo:].split("\n")
            inside = text[lo:end].count("\n")
            if len(continuation(lines, 0)) < inside:
                if len(paragraph_continuation(lines, 0)) < inside:
                    continue  # it crosses into a line that does not continue its own
                paragraph = True
        hi = text.find("\n", end)
        line_end = (len(text) if hi < 0 else hi)
        before = text[lo:start]
        lead = before[: len(before) - len(before.lstrip())]
        last = text.rfind("\n", 0, end) + 1
        more = bool(continuation(text[last:].split("\n", 2), 0))  # the next line says
        if multi:
            goes_on = paragraph_continuation if paragraph else continuation
            more = len(goes_on(text[lo:].split("\n"), 0)) > text[lo:end].count("\n")
        yield Seen(lo, start, end, before, text[end:line_end].rstrip("\r"), lead, multi,
                   more, paragraph)


_QUOTED_LINE = re.compile(r"[ \t]*[\"']")
"""The opening quote of a line that is one quoted string (``"Language: pl\\n"``)."""


def _after_key(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is all that follows its line's key
    (``agentflow.grounding.lines.KEY_LINE``: ``Name=``, ``Version:``) up to
    a token's end (``agentflow.grounding.tokens``). The line may be one
    quoted string, its key after the opening quote and its value up to an
    escape sequence (``"Language-Team: Polish\\n"`` of a gettext header, a C
    string's ``\\t``): the escape ends the value, though it joins its token."""
    before = text[text.rfind("\n", 0, start) + 1:start]
    escaped = False
    if KEY_LINE.match(before) is None and (quote := _QUOTED_LINE.match(before)) is not None:
        before = before[quote.end():]
        escaped = text[end:end + 1] == "\\"
    key = KEY_LINE.match(before)
    return key is not None and not before[key.end():].strip(" \t") and (
        escaped or not cuts_token(text[start:], 0, end - start))


def block_of(places: list[Seen], text: str) -> Seen | None:
    """List items written one a line as one field's value: the first after
    a label, each next one the whole content of the next line, which
    continues the first's (``agentflow.grounding.lines.continuation``); the
    run of them as one continued place, or ``None``."""
    first = places[0]
    if not first.before[len(first.lead):].strip():
        return None  # the first item has no label before it on its line
    lines = text[first.line:].split("\n")
    rest = continuation(lines, 0)
    if len(places) - 1 > len(rest):
        return None
    offset = first.line + len(lines[0]) + 1
    for place, line in zip(places[1:], rest, strict=False):
        if place.line != offset or place.before.strip() or place.after.strip():
            return None  # not the whole content of the next continuation line
        offset += len(line) + 1
    last = places[-1]
    return Seen(first.line, first.start, last.end, first.before, last.after, first.lead, True)


def over_key(place: Seen, text: str) -> bool:
    """Whether ``place`` (a value over continuation lines) runs on over a
    line that begins with a key at its own line's key column (``agentflow.
    grounding.lines.continuation_to_key``): the examples show such lines
    carry the value (``Locator.keyed``)."""
    return len(continuation_to_key(text[place.line:].split("\n"), 0)) < text[
        place.line:place.end].count("\n")


def common_end(texts: Sequence[str]) -> str:
    """The longest text every one of ``texts`` ends with, ``""`` when their
    last characters differ (``["Version: ", "  version: "]`` -> ``"ersion: "``):
    what the examples' values share before them on their lines.

    Raises:
        IndexError: when ``texts`` is empty.
    """
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[-1 - n] == first[-1 - n] for t in texts):
        n += 1
    return first[len(first) - n:] if n else ""


def common_start(texts: Sequence[str]) -> str:
    """The longest text every one of ``texts`` begins with, ``""`` when their
    first characters differ (``[" (stable)", " (beta)"]`` -> ``" ("``): what
    the examples' values share after them on their lines.

    Raises:
        IndexError: when ``texts`` is empty.
    """
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[n] == first[n] for t in texts):
        n += 1
    return first[:n]


def one_line(places: list[Seen], text: str) -> tuple[Seen, str] | None:
    """Items written on one line, in order, split by one separator: the
    whole run of them as one place, and the separator; ``None`` otherwise."""
    if len({p.line for p in places}) != 1:
        return None
    gaps = [text[a.end:b.start] for a, b in itertools.pairwise(places)]
    if any(b.start < a.end for a, b in itertools.pairwise(places)):
        return None
    if len(set(gaps)) != 1 or not gaps[0]:
        return None
    if not gaps[0].strip() and any(gaps[0] in text[p.start:p.end] for p in places):
        return None  # split by whitespace only where no item holds that whitespace
    first, last = places[0], places[-1]
    return Seen(first.line, first.start, last.end, first.before, last.after, first.lead), gaps[0]


_WORD = re.compile(r"\w")


def lead(text: str) -> str:
    """The run of non-word characters ``text`` begins with (a right context
    keeps only it: ``) `` of ``) unstable``)."""
    match = _WORD.search(text)
    return text if match is None else text[: match.start()]


def tail(text: str) -> str:
    """The run of non-word characters ``text`` ends with (`` (`` of ``barbaz (``)."""
    n = len(text)
    while n > 0 and not _WORD.match(text[n - 1]):
        n -= 1
    return text[n:]


_LETTER = re.compile(r"[^\W\d_]")


def shared_label(befores: Sequence[str], longest: int = 40) -> str:
    """The unanchored left context of values written after ``befores`` (each
    the text before one on its line, their starts differing): the text they
    all end with (``common_end``), from its first word, where the lines differ
    only in punctuation and blanks before it (comment markers, indentation)
    and it ends with punctuation: ``SPDX-License-Identifier: `` of
    ``# SPDX-License-Identifier: `` and ``// SPDX-License-Identifier: `` (a
    label is its words, not the ``: `` every ``key: value`` line writes).
    Else the run of non-word characters it ends with: `` (`` of ``barbaz (``
    and ``quux (`` (the context between a value and a neighbour whose words
    differ); ``:`` of ``ORGANIZER;CN=Jane Doe:mailto:`` (the line's key is no
    part of the common text); blanks alone (no context) after words that are
    prose (``in `` of ``discovered in ``), or after a label longer than
    ``longest`` characters.

    Raises:
        IndexError: when ``befores`` is empty.
    """
    common = common_end(befores)
    ends = tail(common)
    word = _WORD.search(common)
    if word is None or not ends.strip() or not _LETTER.search(common) or (
            len(common) - word.start() > longest) or any(
            _WORD.search(b[: len(b) - len(common)]) for b in befores):
        return ends
    return common[word.start():]


_KEY_END = re.compile(r"\w[ \t]*[:=][ \t]*\Z")
"""A text that ends with a key's separator right after a word (``Licence: ``,
``name=``)."""


def keys_apart(befores: Sequence[str], left: str) -> bool:
    """Whether ``left`` (a ``shared_label`` without a word) is only the
    separator of keys ``befores`` write otherwise (``: `` of ``# License: `` and
    ``// Licence: ``): a key's separator without its key is no label (it
    reads the value of any ``key: value`` line)."""
    return not any(c.isalnum() for c in left) and all(_KEY_END.search(b) for b in befores)


def next_word(afters: Sequence[str], right: str) -> str:
    """The word every one of ``afters`` (the texts after the examples' values,
    each beginning with ``right``) writes next after ``right``, letter case
    ignored (``see`` of ``, see LICENSE for details.``), or ``""``: what tells
    ``right`` (punctuation alone, ``, ``) from the same punctuation inside a
    value (``Apache License, Version 2.0, see LICENSE``)."""
    words = {word_after(after, len(right)) for after in afters}
    return words.pop() if len(words) == 1 and "" not in words else ""


_GAP = re.compile(r"[ \t]{2,}")
"""A run of blanks wide enough to part two columns."""


def is_gap(right: str) -> bool:
    """Whether ``right`` is a column gap: two blanks or more, nothing else."""
    return len(right) >= 2 and not right.strip(" \t")


def right_end(line: str, start: int, right: str, word: str = "") -> int:
    """Where the value that begins at ``start`` of ``line`` ends: the first
    ``right`` after it, or (``word``: ``next_word``) the first one the word
    follows, whole, letter case ignored; ``-1`` where there is none (a
    continuation no example writes: the rule cannot tell where the value ends).
    A ``right`` that begins with a quote is never one the value escapes
    (``agentflow.grounding.quotes.past_escaped``: ``\\"`` or a doubled quote
    inside ``"Parse \\"smart\\" quotes"``: the value's own, not its end).
    A ``right`` of blanks alone (``is_gap``) is a column gap: the first run of
    two blanks or more ends the value, however wide (the examples' padding is
    their columns' layout: ``Obsoletes: 2732, 2396, 1808`` then 34 spaces where
    an example wrote 49)."""
    if is_gap(right):  # a column gap, however wide (layout, not text)
        for match in _GAP.finditer(line, start):
            if not word or word_after(line, match.end()) == word:
                return match.start()
        return -1
    end = line.find(right, start)
    while end >= 0:
        if right[:1] in QUOTES and (on := past_escaped(line, end, start)) != end:
            end = line.find(right, on)
        elif word and word_after(line, end + len(right)) != word:
            end = line.find(right, end + 1)
        else:
            break
    return end
