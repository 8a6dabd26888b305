"""A JSON or markup document written with several members on a line, read
one member a line.

A learned locator (``agentflow.grounding.locators``) reads a field after its
label at a line's start, at the label's nesting depth, under its parent keys:
it reads a document line by line. A JSON document written on one line (a
minified ``package.json``, an API response as a tool prints it) or a markup
document with its elements run together (``<PropertyGroup><OutputType>Exe
</OutputType><AssemblyName>x</AssemblyName>``) writes all its members on one
line: no label is at a line's start, every depth is 0, and a rule the
examples teach reads nothing there, nor can such an example teach one (the
text before its value is the whole line up to it). A JSON parser or an XML
parser reads the document alike however it is laid out, so the locators do
too (``laid_out``): the same document with a line break (and an indentation
of two spaces a level) before each member a line holds after another:

* in a JSON document (its first character that is not whitespace ``{`` or
  ``[``, and it parses as JSON), after each ``{``, ``[`` and ``,`` outside a
  string that something follows on its line, and before each ``}`` and
  ``]`` that something precedes on its line; never between an empty
  container's brackets (``[]``, ``{}``: a value written empty,
  ``agentflow.grounding.brackets.written_empty``);
* in a markup document (``agentflow.grounding.markup.is_markup``, read so;
  not HTML, whose inline elements run on in a sentence), between two tags
  (or a comment, processing instruction, declaration) with nothing but
  blanks between them on a line, never inside a comment, nor beside a
  CDATA section (an element's text, ``<title><![CDATA[x]]></title>``), nor
  between an element's start tag and its own end tag (``<x></x>``: an
  element written empty).

Only whitespace is added or replaced between tokens: every string and every
element's text is kept as written, so a value read in the laid-out document
is text of the document (its escapes as written). A document with one
member a line is returned as it is (``laid_out`` of a laid-out text is that
text), and any other text as well.
"""

from __future__ import annotations

import functools
import json
import re

from agentflow.grounding.markup import is_markup
from agentflow.output.cut_path import string_end

__all__ = ["laid_out"]

_INDENT = "  "
"""One level of the indentation a laid-out document writes."""
_OPENERS = {"{": "}", "[": "]"}
_MARKUP_TOKEN = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>"
    r"|<(?P<close>/?)(?P<name>[A-Za-z_][\w.:-]*)(?P<rest>(?:[^>\"']|\"[^\"]*\"|'[^']*')*)>",
    re.S)
"""A markup token (as ``agentflow.grounding.markup`` reads them): a comment,
CDATA section, processing instruction, declaration, start or end tag."""
_HTML = re.compile(r"<!doctype\s+html|<html[\s>]", re.I)


@functools.lru_cache(maxsize=32)
def laid_out(text: str) -> str:
    """``text`` with one member a line where it is a JSON or markup document
    that writes several on one (see the module docstring); else ``text``."""
    head = text.lstrip(" \t\r\n\ufeff")[:1]
    if head in _OPENERS:
        return _json_laid_out(text)
    if head == "<":
        return _markup_laid_out(text)
    return text


def _json_laid_out(text: str) -> str:
    """``laid_out`` of a text that begins with ``{`` or ``[``."""
    try:
        json.loads(text)
    except ValueError:
        return text
    out: list[str] = []
    depth = 0
    i, n = 0, len(text)
    last = ""  # the last character on the current line that is not a blank ("": none)
    changed = False
    while i < n:
        c = text[i]
        if c == '"':
            j = string_end(text, i)
            out.append(text[i:j + 1])
            i, last = j + 1, '"'
            continue
        if c in "}]":
            depth = max(0, depth - 1)
            if last and last not in "{[":
                while out and out[-1] in (" ", "\t"):
                    out.pop()
                out.append("\n" + _INDENT * depth)
                changed = True
        out.append(c)
        i += 1
        last = "" if c == "\n" else last if c in " \t\r" else c
        if c in "{[,":
            depth += c != ","
            k = i
            while k < n and text[k] in " \t":
                k += 1
            nxt = text[k:k + 1]
            if nxt and nxt not in "\r\n" and nxt != _OPENERS.get(c):
                out.append("\n" + _INDENT * depth)
                i, last = k, ""
                changed = True
    return "".join(out) if changed else text


def _cdata(*tokens: re.Match[str]) -> bool:
    """Whether one of ``tokens`` is a CDATA section (an element's text)."""
    return any(t.group().startswith("<![CDATA[") for t in tokens)


def _markup_laid_out(text: str) -> str:
    """``laid_out`` of a text that begins with ``<``."""
    if _HTML.search(text[:2000]):
        return text
    out: list[str] = []
    pos = 0
    depth = 0
    previous: re.Match[str] | None = None
    for token in _MARKUP_TOKEN.finditer(text):
        between = text[pos:token.start()]
        closing = bool(token["name"]) and token["close"] == "/"
        depth -= closing
        if previous is not None and between.strip(" \t") == "" and not _cdata(
                previous, token) and not (
                closing and previous["name"] and not previous["close"]
                and previous["name"] == token["name"]
                and not previous["rest"].rstrip().endswith("/")):
            out.append("\n" + _INDENT * max(0, depth))
        else:
            out.append(between)
        out.append(token.group())
        if token["name"] and not token["close"] and not token["rest"].rstrip().endswith("/"):
            depth += 1
        previous, pos = token, token.end()
    out.append(text[pos:])
    result = "".join(out)
    if result == text or not is_markup(result.split("\n")):
        return text
    return result
