"""Token log-probabilities mapped onto a structured output's fields.

A model that gives each reply token's log-probability (``TokenLogprob``,
``GenerateOptions.logprobs``; the reply message carries them under
``TOKEN_LOGPROBS``) says how sure it was of each token it wrote. The tokens
that wrote a field's value say how sure it was of the value:
``field_probabilities`` gives each top-level field of the reply's JSON
object the probability of its least likely content token (the weakest link;
a list or object: over all its leaves). Content is a string's text without
its quotes, a number, ``true``/``false`` or ``null`` whole: the quotes,
commas and brackets around values are the grammar's, and a base model's raw
distribution does not know where JSON closes (measured: the closing quote of
a right value at 0.07). A token that only partly overlaps the content counts
(`` "+`` opens a string and writes its first character).

On a model whose grammar holds values to the document (the embedded model),
the log-probabilities are the model's own distribution before the grammar
(llama.cpp's server reports them so), so a value the grammar forced against
the model's preference (``example.org`` where the model would write
``example.com``) shows as an unlikely token.

Pure functions; ``agentflow.extraction.confidence`` combines the figures
with what grounding and locators checked.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence

import orjson

from agentflow.model import TokenLogprob, TokenLogprobs

__all__ = ["field_probabilities", "key_sizes", "value_spans"]

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\r\n]*")
# One object member whose value is a string, a number or a literal, and the
# comma after it: the key and a string's content as JSON's scanner reads
# them (no control character unescaped; an escape is checked by the scanner
# after the match); a number as ``json`` reads one (ASCII digits), with
# ``NaN`` and ``Infinity``, which Python's decoder reads too.
# A string's content is written unrolled (a run of plain characters, then
# escape and run again): the regex engine reads a run in one loop instead of
# trying two branches per character.
_PAIR = re.compile(
    r'"([^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*)"[ \t\r\n]*:[ \t\r\n]*'
    r'(?:"([^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*)"'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|NaN|-?Infinity))"
    r"[ \t\r\n]*(?:,[ \t\r\n]*)?")


def _skip(text: str, i: int) -> int:
    """The first position from ``i`` that is not JSON whitespace."""
    return _SPACE.match(text, i).end()  # type: ignore[union-attr]  # ``*`` always matches


def _leaves(text: str, start: int) -> tuple[list[tuple[int, int]], int]:
    """The content spans of the leaves of the JSON value at ``start`` (a
    string without its quotes, a number, ``true``/``false``/``null`` whole;
    an array's or object's leaves in order) and where the value ends. Read
    with a stack of the containers open, not a call per level: a value
    nested thousands deep is read in time linear in its text.

    Raises:
        ValueError: no JSON value there.
    """
    leaves: list[tuple[int, int]] = []
    heads: list[str] = []  # the "[" or "{" of each container open, innermost last
    i = start
    while True:
        i = _skip(text, i)
        head = text[i:i + 1]
        if head == "[" or head == "{":
            heads.append(head)
            i = _skip(text, i + 1)
        else:
            _, end = _DECODER.raw_decode(text, i)
            leaves.append((i + 1, end - 1) if head == '"' and end - 1 > i + 1 else (i, end))
            i = end
            if not heads:
                return leaves, i
            i = _after(text, i)
        while True:  # in the innermost container: its next member, or its close
            head = heads[-1]
            close = "]" if head == "[" else "}"
            if i < len(text) and text[i] != close:
                if head == "{":
                    _, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
                    i = _skip(text, i)
                    if text[i:i + 1] != ":":
                        raise ValueError("no ':' after a key")
                    i += 1
                break
            if text[i:i + 1] != close:
                raise ValueError("an unclosed array or object")
            heads.pop()
            i += 1
            if not heads:
                return leaves, i
            i = _after(text, i)


def _after(text: str, i: int) -> int:
    """Past the whitespace and the comma (if any) after a member at ``i``."""
    i = _skip(text, i)
    return _skip(text, i + 1) if text[i:i + 1] == "," else i


def value_spans(text: str) -> dict[str, list[tuple[int, int]]]:
    """The content spans (characters of ``text``) of the leaves of each
    top-level value of the first JSON object in ``text``, by key (a string
    without its quotes; an empty string, a number or ``null`` whole); ``{}``
    when there is no object; a reply cut short reads up to the cut.

    A key with a string, number or literal value is read by one match of
    ``_PAIR`` (what almost every output's fields are); any other value, and
    a pair ``_PAIR`` does not read, by ``_leaves`` (the same spans)."""
    out: dict[str, list[tuple[int, int]]] = {}
    i = text.find("{")
    if i < 0:
        return out
    i = _skip(text, i + 1)
    try:
        while i < len(text) and text[i] == '"':
            pair = _PAIR.match(text, i)
            if pair is not None:
                key = pair[1]
                if "\\" in key:  # escapes: read as JSON reads them (a bad one raises)
                    key = json.decoder.scanstring(text, i + 1)[0]  # type: ignore[attr-defined]
                start, end = pair.span(2)
                if start < 0:  # a number or a literal, whole
                    out[key] = [pair.span(3)]
                else:
                    if "\\" in pair[2]:
                        json.decoder.scanstring(text, start)  # type: ignore[attr-defined]
                    out[key] = [(start, end) if end > start else (start - 1, end + 1)]
                i = pair.end()
                continue
            key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _skip(text, i)
            if i >= len(text) or text[i] != ":":
                break
            leaves, end = _leaves(text, i + 1)
            out[key] = leaves
            i = _skip(text, end)
            if i < len(text) and text[i] == ",":
                i = _skip(text, i + 1)
    except (ValueError, IndexError):
        pass
    return out


def key_sizes(names: Iterable[str]) -> dict[str, int]:
    """Each of ``names`` (an output schema's field names) with the length of
    its JSON text as ``orjson`` writes it: what ``field_probabilities`` places
    values by, worked out once per schema (``OutputSpec.key_sizes``), not per
    reply. Only a schema's names: a dict output's keys come from documents."""
    return {name: len(orjson.dumps(name)) for name in names}


def field_probabilities(tokens: Sequence[TokenLogprob],
                        known: Mapping[str, int] | None = None) -> dict[str, float]:
    """Each top-level field of the JSON object the ``tokens`` wrote, with the
    probability (``exp(logprob)``, in ``[0, 1]``) of the least likely token
    that wrote its value's content (see the module docstring); ``{}``
    without tokens or an object. An empty list or object: ``1.0``.

    Tokens a provider read as a ``TokenLogprobs`` are mapped from what they
    wrote (``TokenLogprobs.written``: no ``TokenLogprob`` made per token).
    ``known``: ``key_sizes`` of the output schema's field names (each other
    key's size is worked out per reply); the result is the same without it."""
    if not tokens:
        return {}
    data, ends, logprobs = (tokens if isinstance(tokens, TokenLogprobs)
                            else TokenLogprobs(tokens)).written()
    # byte offsets already, where the reply is orjson's own layout
    spans = _laid_out(data, known or {})
    plain, text = True, ""
    if spans is None:
        text = data.decode("utf-8", errors="replace")
        spans = value_spans(text)
        plain = text.isascii()  # a character is a byte: offsets as they are
    if not spans:
        return {}
    count = len(ends)
    out: dict[str, float] = {}
    encoded = {} if plain else _byte_offsets(text, spans.values())
    for key, leaves in spans.items():
        worst = 0.0
        for start, end in leaves:
            lo, hi = (start, end) if plain else (encoded[start], encoded[end])
            # the tokens that overlap [lo, hi): the first ending past lo (it starts at
            # or before lo), then each next one while it starts (where the one before
            # it ends) before hi
            i = bisect.bisect_right(ends, lo)
            if i < count:
                logprob = logprobs[i]
                if logprob < worst:
                    worst = logprob
                while i + 1 < count and ends[i] < hi:
                    i += 1
                    logprob = logprobs[i]
                    if logprob < worst:
                        worst = logprob
        out[key] = math.exp(worst)
    return out


def _byte_offsets(text: str, leaves: Iterable[list[tuple[int, int]]]) -> dict[int, int]:
    """Each start and end of ``leaves`` (character offsets of ``text``) with
    its byte offset in ``text`` as UTF-8 (``len(text[:i].encode())``), read in
    one pass over the text: a reply's thousands of list items each encoding
    the text before it took time growing with the square of the reply."""
    offsets: dict[int, int] = {}
    char = size = 0
    for i in sorted({i for spans in leaves for span in spans for i in span}):
        size += len(text[char:i].encode())
        char, offsets[i] = i, size
    return offsets


def _laid_out(data: bytes, known: Mapping[str, int]) -> dict[str, list[tuple[int, int]]] | None:
    """``value_spans`` of the reply ``data`` in byte offsets, read off its
    layout where ``data`` is exactly what ``orjson`` writes for the object it
    holds (compact, one object whose values are strings, numbers or
    literals: what a whole structured reply mostly is): each value's place
    is then the length of what comes before it, with no scan of the text
    (``orjson`` reads only valid UTF-8, so a byte offset is the character
    offset ``value_spans`` gives, encoded). ``None`` for any other reply
    (``value_spans`` reads it). ``known``: ``key_sizes`` of the schema's keys."""
    if data[:1] != b"{":
        return None
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if type(parsed) is not dict or orjson.dumps(parsed) != data:
        return None
    out: dict[str, list[tuple[int, int]]] = {}
    dumps = orjson.dumps
    sizes = known
    at = 1  # past the "{"
    for key, value in parsed.items():
        kind = type(value)
        if kind is dict or kind is list:
            return None  # leaves inside: value_spans walks them
        written = sizes.get(key)  # a schema's keys: written once per schema, not per reply
        if written is None:  # a key no schema names (a dict output's): nothing kept
            written = len(dumps(key))
        at += written + 1  # the key and its ":"
        # a literal's size as orjson writes it (null, true, false), else written
        size = 4 if value is None or value is True else 5 if value is False else len(
            dumps(value))
        # a string's content without its quotes (an empty one with them), anything else whole
        out[key] = [(at + 1, at + size - 1) if kind is str and size > 2 else (at, at + size)]
        at += size + 1  # and the ","
    return out
