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
items (``split_outside``). Pure functions.
"""

from __future__ import annotations

__all__ = ["CLOSERS", "in_quotes", "opens_quote", "past_quote", "quoted_content", "read_items",
           "split_outside"]

CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb",
           "\u201e": "\u201c\u201d", "\u201a": "\u2018\u2019"}
"""Each opening quote and the quotes that close it: straight double and
single quotes, typographic ones (``“…”``, ``‘…’``, ``„…“``, ``„…”``) and
guillemets (``«…»``)."""


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


def past_quote(text: str, start: int) -> int:
    """Where the text that ends a value beginning at ``start`` of ``text``
    is looked for: past the quoted string the value begins with (after
    whitespace), where a quote closes it (``"Doe, Jane", 42``: after
    ``"Doe, Jane"``, so a right context ``, `` is not the one inside it);
    else ``start``. A closing quote is one no letter or digit follows (not
    the apostrophe of ``Brabant's``)."""
    body = text[start:].lstrip()
    if not body or body[0] not in CLOSERS:
        return start
    for at in range(len(text) - len(body) + 1, len(text)):
        if text[at] in CLOSERS[body[0]] and not text[at + 1:at + 2].isalnum():
            return at + 1
    return start


def split_outside(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` (as ``str.split``), but not at one inside a
    quoted string an item begins with (``past_quote``): ``"io, net", fix``
    is ``['"io, net"', ' fix']``."""
    parts = []
    start = 0
    while (at := text.find(sep, past_quote(text, start))) >= 0:
        parts.append(text[start:at])
        start = at + len(sep)
    return [*parts, text[start:]]


def read_items(raw: str, sep: str | None, *, unquote: bool = False) -> list[str]:
    """The values of a located ``raw`` text: its items split at ``sep`` (one
    item without it), each stripped, the empty ones left out; ``unquote``:
    split only outside quoted items (``split_outside``), and each item that
    is one quoted string read as its content (``quoted_content``)."""
    parts = [raw] if not sep else split_outside(raw, sep) if unquote else raw.split(sep)
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
