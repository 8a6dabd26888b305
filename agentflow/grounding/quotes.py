"""Quoted strings around a located value: the document's syntax, not the value.

Many formats quote a value whose characters would otherwise be read as
syntax: an e-mail display name with ``.`` or ``,`` (``From: "John Q. Public"
<jqp@example.org>``), a shell or os-release assignment (``NAME="Debian
GNU/Linux"``), a YAML scalar, a roff argument. A learned locator
(``agentflow.grounding.locator_rule``) whose examples' values never begin
with a quoted string (``opens_quote``) reads a value that is one quoted
string as the text between its quotes (``quoted_content``), and never pins
a value still wrapped in quotes (``in_quotes``: a quoted string with escaped
quotes inside, two quoted strings); the text that ends such a value is
looked for past the quoted string it begins with (``past_quote``: ``"Doe,
Jane", 42`` up to ``, ``), and a list's items are split only outside quoted
items (``split_outside``). A quote escaped inside a quoted string
(``past_escaped``: after a backslash, or doubled) closes nothing: ``"Parse
\\"smart\\" quotes"`` is one string, read up to its last quote. Pure
functions (``past_quote`` remembers where the last text it was asked of
closes its quotes: a cache, not state).
"""

from __future__ import annotations

import re

from agentflow.grounding.list_separators import separator_form

__all__ = ["CLOSERS", "QUOTES", "in_quotes", "opens_quote", "past_escaped", "past_quote",
           "quoted_content", "read_items", "split_outside"]

CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb",
           "\u201e": "\u201c\u201d", "\u201a": "\u2018\u2019"}
"""Each opening quote and the quotes that close it: straight double and
single quotes, typographic ones (``“…”``, ``‘…’``, ``„…“``, ``„…”``) and
guillemets (``«…»``)."""
QUOTES = frozenset(CLOSERS) | frozenset("".join(CLOSERS.values()))
"""Every quote of ``CLOSERS``, opening or closing."""


def in_quotes(text: str) -> bool:
    """Whether ``text`` (less its outer whitespace) begins with an opening
    quote (``CLOSERS``) and ends with one that closes it (``"a"``, ``"a
    \\"b\\""``, ``"a" and "b"``; not ``"Jo Roe" <jo@x.org>``)."""
    body = text.strip()
    return len(body) >= 2 and body[-1] in CLOSERS.get(body[0], "")


def quoted_content(text: str) -> tuple[int, int] | None:
    """``[start, end)`` in ``text`` of the content of the one quoted string
    ``text`` is (less its outer whitespace): ``in_quotes``, with neither
    quote inside (``"a" and "b"`` is two quoted strings, ``"a \\"b\\""`` one
    with escaped quotes: neither is read); ``None`` otherwise."""
    if not in_quotes(text):
        return None
    lo = len(text) - len(text.lstrip())
    hi = len(text.rstrip())
    closers = CLOSERS[text[lo]]
    inner = text[lo + 1:hi - 1]
    if text[lo] in inner or any(c in inner for c in closers):
        return None
    return lo + 1, hi - 1


_OPENING = re.compile(r"\s*([" + re.escape("".join(CLOSERS)) + "])")
"""Whitespace, then an opening quote (group 1)."""
_CLOSING = {opener: re.compile("[" + re.escape(closers) + r"](?![^\W_])")
            for opener, closers in CLOSERS.items()}
"""Each opening quote's closing ones that no letter or digit follows."""
_seen: tuple[str, dict[str, tuple[int, int]]] = ("", {})
"""The text ``past_quote`` was last asked of, and for each opening quote the
offset it last looked for a closing one from and where that was (``-1``:
none): asked of each value of a line in turn, it looks no further than that
again (a line of unclosed quotes is searched once, not once a value)."""


_STRAIGHT = "\"'"
"""The quotes a format may escape by doubling (CSV, SQL, YAML's single-quoted scalars)."""


def past_escaped(text: str, at: int, start: int = 0, *, doubled: bool = True) -> int:
    """Where to look for the closing quote from, given the quote at
    ``text[at]`` inside a quoted string whose content begins at ``start``:
    ``at`` itself where that quote may close the string, else past it: it is
    escaped, after an odd run of backslashes (``\\"``; ``\\\\"`` closes), or
    a straight quote doubled (``It''s``, ``""hi""``): in a run of the same
    quote that does not begin at ``start`` (``""`` there: an empty string, or
    a triple quote), every quote of an even run (past the run) and all but
    the last of an odd one (``'abc'''``: the last may close; ``doubled=False``:
    backslashes only). Any other character: ``at``. Time: the backslashes
    and quotes around ``at``, no text copied (a run of quotes is skipped at
    once, not quote by quote)."""
    quote = next((q for q in QUOTES if text.startswith(q, at)), "")
    if not quote:
        return at
    lo = at
    while lo > start and text.endswith("\\", start, lo):
        lo -= 1
    if (at - lo) % 2:
        return at + 1
    if not doubled or quote not in _STRAIGHT:
        return at
    lo, hi = at, at + 1
    while lo > start and text.endswith(quote, start, lo):
        lo -= 1
    while text.startswith(quote, hi):
        hi += 1
    if lo == start:
        return at
    return hi if (hi - lo) % 2 == 0 else hi - 1


def past_quote(text: str, start: int) -> int:
    """Where the text that ends a value beginning at ``start`` of ``text``
    is looked for: past the quoted string the value begins with (after
    whitespace), where a quote closes it (``"Doe, Jane", 42``: after
    ``"Doe, Jane"``, so a right context ``, `` is not the one inside it);
    else ``start``. A closing quote is one no letter or digit follows (not
    the apostrophe of ``Brabant's``). Time: the whitespace and the quoted
    string, and no text searched twice for the same text's later values. A
    quote a backslash escapes inside the string (``past_escaped``) does not
    close it (a doubled one may: where it is asked from decides whether
    ``""`` is an empty string, and the cache must not)."""
    global _seen
    opening = _OPENING.match(text, start)
    if opening is None:
        return start
    opener, frm = opening.group(1), opening.end()
    seen = _seen
    if seen[0] is not text:
        seen = _seen = (text, {})
    looked, found = seen[1].get(opener, (len(text) + 1, -1))
    if not (looked <= frm and (found < 0 or frm <= found)):
        found, at = -1, frm
        while (closing := _CLOSING[opener].search(text, at)) is not None:
            at = past_escaped(text, closing.start(), frm, doubled=False)
            if at == closing.start():
                found = at
                break
        seen[1][opener] = (frm, found)
    return found + 1 if found >= 0 else start


def split_outside(text: str, sep: str, *, exact: bool = False) -> list[str]:
    """``text`` split at ``sep`` and its other forms (``agentflow.grounding.
    list_separators.separator_form``: ``,`` with any blanks around it for
    ``, ``; as ``str.split`` where it is written as learned), but not at one
    inside a quoted string an item begins with (``past_quote``): ``"io,
    net", fix`` is ``['"io, net"', 'fix']``; ``exact``: at ``sep`` as
    written alone."""
    form = re.compile(re.escape(sep)) if exact else separator_form(sep)
    parts = []
    start = 0
    while (at := form.search(text, past_quote(text, start))) is not None:
        parts.append(text[start:at.start()])
        start = at.end()
    return [*parts, text[start:]]


def read_items(raw: str, sep: str | None, *, unquote: bool = False,
               exact: bool = False) -> list[str]:
    """The values of a located ``raw`` text: its items split at ``sep`` or
    another of its forms (``agentflow.grounding.list_separators.
    separator_form``; one item without it), each stripped, the empty ones left out; ``unquote``:
    split only outside quoted items (``split_outside``), and each item that
    is one quoted string read as its content (``quoted_content``); ``exact``:
    split at ``sep`` as written alone (``list_separators.loose``)."""
    parts = [raw] if not sep else split_outside(raw, sep, exact=exact) if unquote else (
        raw.split(sep) if exact else separator_form(sep).split(raw))
    out = []
    for part in parts:
        span = quoted_content(part) if unquote else None
        if text := (part[span[0]:span[1]] if span else part).strip():
            out.append(text)
    return out


def opens_quote(text: str) -> bool:
    """Whether ``text`` (less its outer whitespace) begins with an opening
    quote that a quote later in it closes (``"John Q. Public"``, ``"Weird
    Al" Yankovic``; not the apostrophe of ``'s-Hertogenbosch``): a value
    the examples write so keeps its quotes."""
    body = text.strip()
    return bool(body) and any(c in body[1:] for c in CLOSERS.get(body[0], ""))
