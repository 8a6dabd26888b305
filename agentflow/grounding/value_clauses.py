"""Where a located value ends: a second clause the rule read past, a line
it stopped short of, a label whose value is on the next line.

A learned locator (``agentflow.grounding.locators``) that reads a field to
its line's end takes whatever the line goes on with: ``Date: 20 May 2024
(rescheduled from 13 May)``, ``Chair: Dana Wells. Also present: Ben
Carter``. Where no worked example's value holds such a break, the rule
does not pin a value that does (``Locator.pins``): the field is scored as
if it had no rule (``agentflow.extraction.confidence``: merely grounded, so
it needs review). The grammar still offers it (the value may be whole).

A **clause break** (``clause_break``) is an opening bracket (``(``, ``[``,
``{``) after some text and whitespace (one written inside a word is the
word's: ``%{packname}`` of a URL, ``f(x)``, ``Name[de]``), a clause end
(``;``, ``!``, ``?``) followed by whitespace and more text, a sentence end
(``.`` after a word of at least ``SENTENCE_WORD`` characters, so that
``Dr. Lee`` and ``Corp. Ltd`` are no break) followed by whitespace and more
text. (A key inside a value, ``GNU C Library: shared libraries``, is often
the whole value: no break.) A **comment tail** (``comment_tail``) is read past likewise: ``#`` (or
``##``) standing alone after some text (``glib-2.0 # gio-2.0 when built
with --enable-gio``: a ``.pc`` file's, a shell or a YAML line's comment;
``#documentcloud`` and ``C#`` are no comment), or ``;`` standing alone
likewise (``https://x.org/a.git ; mirror``: an INI or git config line's
comment; ``software; you can`` is none), and a block comment's closer
ending it (``GPL-2.0 WITH Linux-syscall-note */`` of a C header's ``/*
SPDX-License-Identifier: ... */``, ``-->``), and so the closer of any block
the line ends: a ``}``, ``]`` or ``)`` ending the value whose opener the
value does not hold (``0640 metrics metrics }`` of a one-line logrotate
stanza, ``b]`` of a YAML flow list ``[a, b]``; never ``f(x)``); where no
example's value holds one, the rule does not pin a value that does
(``Locator.comments``). Such a rule reads a value to its line's end less
a ``#`` comment standing alone after it (``comment_start``: ``home:
https://x.example  # project page``; a quoted value's own ``#`` is kept),
and an ``arg`` rule's arguments end before one (``comment_arguments``:
``appVersion: 1.2.3  # pinned``); a ``;`` is not cut (a requirement's
marker, ``numpy ; extra == 'test'``). Nor does a YAML block scalar's
indicator (``block_indicator``: ``description: >-``) begin a value read
over the lines under it, where no example's value begins with a marker.

A value read to its line's end may also **run on** (``runs_on``) onto a
plain next line the rule does not read (``agentflow.grounding.lines.
paragraph_continuation``: not blank, no key, no markup) that begins in
lower case, mid-sentence: a value wrapped at a fixed width, as PDF text
layers and mail wrap it (``Subject: Laptop will not boot after`` / ``the
BIOS update on Monday``); and onto the next line whatever it holds where
its last line ends in a line join, a backslash (``Libs: -lwrap \\`` over
``-lm``: a ``.pc`` file, a shell script or a Makefile joins the two; an
even run of backslashes is escaped ones, ``joins``). The rule cannot say
where such a value ends, so
it pins no value that begins as the one it read there
(``agentflow.extraction.confidence``). A next line that begins with a
capital or a digit (``Based in Boston MA.``) reads as text of its own, and so
does a line an example writes as it is (``compress`` under ``rotate 12``: a
bare option line of logrotate, my.cnf's ``skip-name-resolve``), or any plain
line where the examples show the value stopping above one (``Locator.
stops_short``: ``rotate 7`` over ``compress``), or, after a keyword label
(``PermitRootLogin ``, no separator) whose examples' values are one word
each, a line of the label line's shape under a one-word value: a word,
blanks and a value (``usepam yes`` under ``PermitRootLogin no``: sshd reads
keywords in any case; redis.conf, resolv.conf, ntp.conf write every key in
lower case). A value of several words, or one the examples show so, still
runs on there (``Subject Laptop will not boot after`` / ``the BIOS update``).
And a label written alone on
its line shows the field empty only where the next line that is not blank
cannot hold the value (``value_below``): it begins with a key, or is a line
an example writes as it is (a heading); a form or a PDF's text layer writes
``Carrier:`` above ``DPD``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agentflow.grounding.lines import KEY_LINE, continuation, paragraph_continuation

__all__ = ["SENTENCE_WORD", "block_indicator", "block_marker", "clause_break", "comment_arguments",
           "comment_start", "comment_tail", "joins", "runs_on", "value_below"]

SENTENCE_WORD = 5
"""Shortest word whose ``.`` ends a sentence (shorter: an abbreviation, ``Prof.``)."""

_BREAK = re.compile(r"\S\s+[(\[{]|[;!?]\s+\S")
_COMMENT = re.compile(r"\S\s+(?:#+|;)(?:\s|\Z)|\S\s*(?:\*/|-->)\Z")
_SENTENCE = re.compile(r"(\w+)\.\s+\S")
_INLINE = re.compile(r"(?<=\S)(\s+)#+(?:\s|\Z)")
_MARK = re.compile(r"#+")
_LEADING = re.compile(r"\s*#+(?:\s|\Z)")
_INDICATOR = re.compile(r"[|>](?:[+-]?[1-9]?|[1-9][+-])")
_OPENERS = {"}": "{", "]": "[", ")": "("}
_CLOSERS = "".join(_OPENERS)


def clause_break(value: str) -> bool:
    """Whether ``value`` (stripped) holds a clause break (see the module docstring)."""
    text = value.strip()
    return _BREAK.search(text) is not None or any(
        len(m.group(1)) >= SENTENCE_WORD for m in _SENTENCE.finditer(text))


def comment_tail(value: str) -> bool:
    """Whether ``value`` holds an inline comment, or ends with a block's
    closer (see the module docstring)."""
    text = value.strip()
    return _COMMENT.search(text) is not None or _unopened_closer(text)


def comment_start(line: str, start: int, end: int) -> int:
    """Where an inline ``#`` comment (``#`` standing alone after text and
    whitespace, as ``comment_tail`` finds) begins in ``line[start:end]``,
    the whitespace before it included; ``end`` where none does. Text before
    ``start`` (a label) is no value text: ``key:   # x`` holds none. A
    ``;`` is not cut: it is a comment in INI files, but the environment
    marker of a requirement (``numpy ; extra == 'test'``) elsewhere."""
    if _LEADING.match(line, start, end) and (start == 0 or line[start - 1].isspace()
                                             or line[start:start + 1].isspace()):
        return start  # the comment after a label and whitespace is all it holds
    m = _INLINE.search(line, start, end)
    return m.start(1) if m else end


def comment_arguments(line: str, args: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``args`` (``agentflow.grounding.lines.line_arguments`` of ``line``) up
    to the first (after some) that is an inline comment's marker (``#``):
    ``appVersion: latest  # PostHog uses ...`` ends at ``latest``."""
    for k, (a, b) in enumerate(args):
        if k and _MARK.fullmatch(line[a:b]) and line[a - 1:a].isspace():
            return args[:k]
    return args


def _unopened_closer(text: str) -> bool:
    """Whether ``text`` (stripped) ends, after more text, with a ``}``,
    ``]`` or ``)`` more often closed in it than opened: the closer of a
    block the value lies inside."""
    closer = text[-1:]
    opener = _OPENERS.get(closer)
    return opener is not None and bool(text.rstrip(_CLOSERS)) and (
        text.count(closer) > text.count(opener))


_WORD_VALUE = re.compile(r"[ \t]*[^\W\d][\w.-]*[ \t]+\S")
"""A line of a keyword format: a word, blanks and a value (``usepam yes``)."""


def runs_on(lines: list[str], i: int, continued: bool,
            follows: Callable[[list[str], int], list[str]] = continuation,
            example_lines: tuple[str, ...] = (), plain: bool = True,
            keyword: bool = False) -> bool:
    """Whether the value on line ``i`` of ``lines`` (with its continuation
    lines, when ``continued``: those ``follows`` gives) goes on onto a plain
    next line, or its last line ends in a line join (``joins``; see the
    module docstring). A plain next line that is one of ``example_lines``
    (the examples' lines that begin with no key, whitespace and letter case
    folded: ``compress`` under ``rotate 7``) is a line of the layout, not
    the value's rest; under ``plain=False`` (the examples show values
    stopping above such lines) only a line join runs on. Under ``keyword``
    (the value on line ``i`` is one word after a keyword label, as every
    example's is: ``PermitRootLogin no``), a next line of that shape, a word,
    blanks and a value (``usepam yes``), is the format's next key line."""
    last = i + (len(follows(lines, i)) if continued else 0)
    if joins(lines[last]) and last + 1 < len(lines):
        return True  # a line join: the next line is this one's rest
    after = paragraph_continuation(lines, last) if plain else []
    if keyword and last == i and after and _WORD_VALUE.match(after[0]):
        return False  # ``usepam yes`` under ``PermitRootLogin no``: a key line
    return bool(after) and after[0].lstrip()[:1].islower() and (
        " ".join(after[0].split()).casefold() not in example_lines)


def joins(line: str) -> bool:
    """Whether ``line`` ends in a line join: an odd run of backslashes at its
    end (trailing whitespace aside; two are an escaped backslash)."""
    text = line.rstrip()
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def value_below(lines: list[str], i: int, example_lines: tuple[str, ...]) -> bool:
    """Whether the first line after line ``i`` that is not blank may hold
    the value of a label written alone on line ``i``: it begins with no key
    and is none of ``example_lines`` (the examples' lines that begin with no
    key, whitespace and letter case folded)."""
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if line.strip():
            return KEY_LINE.match(line) is None and (
                " ".join(line.split()).casefold() not in example_lines)
    return False


def block_indicator(line: str) -> bool:
    """Whether ``line`` (stripped) is a YAML block scalar's indicator alone
    (``|``, ``>-``, ``|+``, ``>2-``): the value is the lines under it."""
    return _INDICATOR.fullmatch(line.strip()) is not None


def block_marker(value: str) -> bool:
    """Whether ``value`` begins with a line of punctuation alone and goes on
    over more lines (``>-`` / ``|`` over a YAML block scalar's lines): the
    first line is a marker of the document's syntax, not the value's text."""
    first, newline, rest = value.partition("\n")
    return bool(newline and first.strip() and rest.strip()) and not any(
        c.isalnum() for c in first)
