"""JSON Schema + source text -> an llguidance Lark grammar whose grounded
strings can only be substrings of the source.

``substring_grammar(schema, source)`` compiles a schema in the ``local``
dialect (objects closed, every property required, in order) whose grounded
string nodes carry ``"x-grounded": true`` (``agentflow.grounding``):

* a grounded string is ``"`` + a contiguous run of the source's chunks +
  ``"``, where the chunks are the source split into words, single
  whitespace characters and single other characters, each JSON-escaped
  (``substring_chunks``, llguidance docs/syntax.md, "Structured %regex"). A
  value therefore starts and ends at a word boundary, and decodes (JSON) to
  exactly the span it copied: quotes, backslashes, tabs, control characters
  and non-ASCII text included;
* a string marked ``"x-grounded": "whole_tokens"`` (``Grounded(whole_tokens=
  True)``) is the same over the source's *pieces* (``agentflow.extraction.
  tokens``: whole tokens, their trailing ``.:!?`` runs, single whitespace
  characters, single delimiters), so it can only begin and end at token
  boundaries: ``2:1.5.2-1`` whole, never ``1.5.2-1``. One ``SOURCE`` terminal
  per granularity in use (``SOURCE``, ``SOURCE_TOKENS``), each holding the
  document once;
* a string marked ``"x-grounded": "whole_lines"`` (``Grounded(whole_lines=
  True)``) is the same over the source split into line contents and the gaps
  between them (``agentflow.grounding.lines.line_pieces``), intersected with
  ``LINE_EDGES`` (a JSON string body that begins and ends with no whitespace,
  read unit by unit), so it begins and ends on a line's content: one or more
  whole lines (``SOURCE_LINES``);
* a string marked ``"x-grounded": "whole_items"`` (``Grounded(whole_items=
  True)``) lists the source's list items (``agentflow.grounding.items``)
  that its ``pattern`` (if any) allows, each one whole, as its only values;
  a source with more than 1,000 such items (or more characters in them than
  ``MAX_SOURCE_CHARS``) gets the whole-line terminal instead, and
  verification decides;
* a grounded string that also carries ``"x-grounded-line": REGEX``
  (``Grounded(line=...)``) lists its values: the spans between its chunk
  boundaries (up to 200 characters; whole lines: each line's content; whole
  items: the items that begin there) within the lines of the source that
  ``REGEX`` searches, that its ``pattern`` allows; too many to list (over
  1,000, or 50,000 characters), and the line rule is left to verification;
* a grounded string is never empty and never starts or ends with a space;
  its ``pattern``, if any, narrows it: in a source up to ``grammar_values.SPAN_CHECK_CHARS``
  (20,000) characters the grammar lists every value the pattern allows
  (trimmed spans between chunk boundaries, up to 200 characters, that the
  pattern searches as JSON Schema does; ``grammar_values.candidates``), so any pattern
  works, however its shape; a longer source, or one with more than 1,000
  such values, gets the pattern intersected with the substring (llguidance
  ``&``) on the JSON-escaped text;
* a source terminal is built only when llguidance's lexer can hold it
  (``grammar_cost``: estimated from the distinct short strings of the
  document, three times as much with a pattern intersected); otherwise the
  grounded string is spelled by its own JSON Schema (``%json``, bounds and
  pattern kept) and verification decides, the rest of the grammar staying
  as it is. A grammar llguidance gives up on anyway ("too many expressions
  constructed", ``LexerTooComplex``) is dropped by llama.cpp mid-reply; the
  embedded model then stops the reply with ``GrammarEngineError``
  (``agentflow.providers._local_grammar_guard``);
* ``enum``/``const`` nodes are the alternatives of their JSON literals; a
  marked one (``Grounded()`` on a ``Literal`` or enum field) only of the
  labels that occur in the source (letter case ignored; as whole tokens, on
  a ``line``, when its marks say so), and none when no label does;
* objects and arrays that hold grounded strings are spelled out (keys in
  schema order, ``minItems``/``maxItems`` kept, ``null`` where allowed);
  ``$ref`` becomes a named rule (recursion works);
* every other subtree is inlined as ``%json {...}`` and keeps all of its
  JSON Schema (bounds, patterns, formats).

JSON is written with ``separators`` (llguidance's ``key_separator`` /
``item_separator``) and no other whitespace. A source longer than
``MAX_SOURCE_CHARS`` is not constrained (``None`` is returned): the caller
sends the plain schema grammar and the engine's verification still checks
every value. Nothing is cached: a grammar holds its document, and is built
per request (well under a millisecond per kilobyte).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow.output.grammar_rules import (
    MAX_SOURCE_CHARS,
    RuleBuilder,
    chunks,
    has_grounded,
)

__all__ = ["MAX_SOURCE_CHARS", "PATTERN_REASON", "NoGroundedValueError", "chunks",
           "has_grounded", "substring_grammar"]

class NoGroundedValueError(ValueError):
    """No output of the schema can be built from the source: the required
    grounded fields in ``fields`` (dotted paths, ``[]`` for list items) can
    take no value of it. ``reasons`` says why, per field: a number or date
    field's (``"no number the document writes satisfies the field's
    constraints (a whole number, minimum 1990)"``); a field missing from it
    is a grounded string whose ``pattern`` no span of the source matches
    (``PATTERN_REASON``)."""

    def __init__(self, fields: list[str], reasons: Mapping[str, str] | None = None) -> None:
        self.fields = list(dict.fromkeys(fields))
        self.reasons = {f: (reasons or {}).get(f, PATTERN_REASON) for f in self.fields}
        super().__init__("no value of the document can fill " + "; ".join(
            f"{f}: {why}" for f, why in self.reasons.items()))


PATTERN_REASON = "nothing in the document matches the field's pattern"
"""``NoGroundedValueError.reasons``' reason for a grounded string."""


def substring_grammar(
    schema: Mapping[str, Any], source: str, separators: Mapping[str, str],
    taken: frozenset[tuple[int, int]] = frozenset(),
) -> str | None:
    """An llguidance Lark grammar for ``schema`` whose grounded strings are
    substrings of ``source``; ``None`` when nothing is grounded or the source
    is longer than ``MAX_SOURCE_CHARS``: then use the plain schema grammar,
    and verification decides.

    Args:
        schema: a ``local``-dialect JSON Schema with ``x-grounded`` marks.
        source: the text grounded strings are copied from.
        separators: ``{"key_separator": ": ", "item_separator": ", "}``.
        taken: ``[start, end)`` spans of ``source`` that an earlier
            extraction pass took as list items (``agentflow.extraction.
            recall``): whole items at those spans are not offered again as
            list items (a list whose items are all taken can only be empty).

    Raises:
        NoGroundedValueError: no output can be built from this source: a
            required grounded field (at any depth, where nothing optional
            or empty stands in) has a ``pattern`` that no span of the source
            matches, e.g. a date or a signature in a document cut before
            them; or a required number (date) field none of whose written
            numbers (dates) keeps its constraints. Its ``fields`` name them
            (``entries[].version``), its ``reasons`` say why.
    """
    if len(source) > MAX_SOURCE_CHARS or not has_grounded(schema):
        return None
    builder = RuleBuilder(schema, separators, source, taken)
    start = builder.node(schema)
    if start is None:
        raise NoGroundedValueError(builder.missing, builder.reasons)
    lines = ["%llguidance {}", f"start: {start}"]
    lines += [f"{name}: {body}" for name, body in builder.rules.items()]
    lines += builder.terminals(source)
    return "\n".join(lines) + "\n"
