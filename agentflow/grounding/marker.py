"""The ``Grounded()`` marker and its JSON Schema keywords (what a grounded
field declares; ``agentflow.grounding`` documents the rules)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentflow._arguments import check_flag
from agentflow.errors import SchemaError

__all__ = [
    "AFTER_KEY",
    "CLEAN_KEY",
    "DECIMAL_KEY",
    "DERIVED_KEY",
    "GROUNDED_KEY",
    "LINE_KEY",
    "LONGEST_KEY",
    "MARKS",
    "TYPED_KEY",
    "WHOLE_ITEMS",
    "WHOLE_LINES",
    "WHOLE_TOKENS",
    "Derived",
    "Grounded",
    "mark_all_strings",
    "typed_kind",
]

GROUNDED_KEY = "x-grounded"
"""JSON Schema keyword ``Grounded()`` adds to a grounded string's schema
(``true``, ``WHOLE_TOKENS`` or ``WHOLE_LINES``). Kept by the ``local`` dialect (its grammar
reads it), dropped by every other dialect, so vendors never see it."""

WHOLE_TOKENS = "whole_tokens"
"""The value of ``GROUNDED_KEY`` for ``Grounded(whole_tokens=True)``."""

WHOLE_LINES = "whole_lines"
"""The value of ``GROUNDED_KEY`` for ``Grounded(whole_lines=True)``."""

WHOLE_ITEMS = "whole_items"
"""The value of ``GROUNDED_KEY`` for ``Grounded(whole_items=True)``."""

LINE_KEY = "x-grounded-line"
"""JSON Schema keyword ``Grounded(line=...)`` adds beside ``GROUNDED_KEY``: the
regular expression a line must match for the value to be taken from it. Kept
by the ``local`` dialect, dropped by every other."""

AFTER_KEY = "x-grounded-after"
"""JSON Schema keyword ``Grounded(after=...)`` adds beside ``GROUNDED_KEY``: the
name of the earlier field of the same object whose value this one follows in
the source. Kept by the ``local`` dialect, dropped by every other."""

LONGEST_KEY = "x-grounded-longest"
"""JSON Schema keyword ``Grounded(longest=True)`` adds beside ``GROUNDED_KEY``
(``true``). Kept by the ``local`` dialect, dropped by every other."""

CLEAN_KEY = "x-grounded-clean"
"""JSON Schema keyword ``Grounded(clean=True)`` adds beside ``GROUNDED_KEY``
(``true``). Kept by the ``local`` dialect, dropped by every other."""

DERIVED_KEY = "x-derived"
"""JSON Schema keyword ``Derived()`` adds to a field's schema (``true``): the
``ground=`` default leaves the field alone. Dropped by every dialect but
``local``."""

TYPED_KEY = "x-grounded-typed"
"""JSON Schema keyword the ``ground=`` default adds to a number node
(``"number"``: ``type`` ``integer`` or ``number``, no ``enum``/``const``) and
to a date node (``"date"`` / ``"date-time"``: a string of that ``format``):
its value must be a number (a date) the source writes, read by value
(``agentflow.grounding.typed_values``). The grammar of a model that takes
one offers only those; verification checks every model's. Kept by the
``local`` dialect, dropped by every other."""

DECIMAL_KEY = "x-grounded-decimal"
"""JSON Schema keyword on the string branch of a ``Decimal`` (pydantic
writes ``anyOf [number, string]``; ``agentflow.output.schema_generator``
adds it): the constraints of the number branch beside it (``{}`` when
none). The ``ground=`` default reads that branch as a number
(``typed_kind``): the grammar offers the numbers the source writes, as JSON
strings (``"1234.50"``), never copied text. Kept by the ``local`` dialect,
dropped by every other."""

TYPED = ("number", "date", "date-time")
"""Every value of ``TYPED_KEY``."""

MARKS = (True, WHOLE_TOKENS, WHOLE_LINES, WHOLE_ITEMS)
"""Every value of ``GROUNDED_KEY``."""


_FLAGS = ("case_sensitive", "whole_tokens", "whole_lines", "whole_items", "longest", "clean")


@dataclass(frozen=True, slots=True)
class Grounded:
    """Marks a string (or the items of a list of strings) as a verbatim span of
    the source text. Use as ``Annotated[str, Grounded()]``.

    Attributes:
        case_sensitive: letter case must match (default); ``False`` finds the
            value whatever its case.
        whole_tokens: the value must begin and end at token boundaries of the
            source (``agentflow.grounding.tokens``): never part of a word
            such as the ``1.5.2-1`` of ``2:1.5.2-1``. Default ``False``.
        whole_lines: the value must begin where a line's content begins and
            end where a line's content ends (``agentflow.grounding.lines``:
            indentation, a list marker such as ``*`` or ``1.`` and trailing
            whitespace are not content): one or more whole lines, never a
            line cut short. Implies whole tokens. Default ``False``.
        whole_items: the value must be exactly one item of a bulleted or
            numbered list of the source, with its continuation lines
            (``agentflow.grounding.items``): never an item's first line
            alone, never two items. Default ``False``.
        line: a regular expression (Python ``re``, searched): the value must
            lie within one line of the source that it matches (for a whole
            item: the item's first line), e.g. ``r"urgency="`` for the fields
            of a changelog entry's header line, ``r"^Total"`` for a total.
            It says *where* a field is written, as ``pattern`` says what it
            looks like. Default ``None`` (anywhere).
        after: the name of an earlier field of the same object (a sibling
            declared before this one, itself grounded): this value must
            begin at or after the end of that field's value in the source,
            as a header line writes ``package (version) distribution``:
            ``version`` is ``after="package"``, ``distribution`` is
            ``after="version"``. The peers' rule "extractions in order of
            appearance" (LangExtract's prompt rules) made a declaration, one
            pair at a time. When the named field is null (or not grounded),
            the rule does not apply. Default ``None``.
        longest: the value must not be a proper part of a longer span that
            the field's other rules and its ``pattern`` also allow
            (``agentflow.grounding.longest``): a name is copied with all its
            first names (never ``Klose <doko@debian.org>`` out of ``Matthias
            Klose <doko@debian.org>``), an amount with all its digits. The
            field (or, on a list, its items) needs a ``pattern`` saying what
            a whole value looks like, anchored at both ends (``^...$``) and
            readable by Python's ``re``. Default ``False``.
        clean: the value must not begin or end with separator punctuation
            (``: ; , =``, a closing bracket first, an opening one last) nor
            begin with the label of its line (``Version: 4.16.0``, where the
            line is ``Version: 4.16.0``): ``agentflow.grounding.edges``.
            The extraction default (``extract_many``, ``agentflow extract``)
            sets it unless the worked examples show such a value. Default
            ``False``.

    Raises:
        SchemaError: ``line`` is not a regular expression Python can read,
            or ``after`` is not a field name (a non-empty identifier).
            ``grounding_plan`` raises it, naming the field, when ``after``
            names no earlier field of the same object (or one holding a
            list or an object), or when ``longest`` is on a field without
            such a ``pattern``.
    """

    case_sensitive: bool = True
    whole_tokens: bool = False
    whole_lines: bool = False
    whole_items: bool = False
    line: str | None = None
    after: str | None = None
    longest: bool = False
    clean: bool = False

    def __post_init__(self) -> None:
        if not (self.case_sensitive.__class__ is self.whole_tokens.__class__
                is self.whole_lines.__class__ is self.whole_items.__class__
                is self.longest.__class__ is self.clean.__class__ is bool):
            for name in _FLAGS:  # a str is true: case_sensitive="false" was case-sensitive
                check_flag(f"Grounded.{name}", getattr(self, name))
        if self.after is not None and not (isinstance(self.after, str)
                                           and self.after.isidentifier()):
            raise SchemaError("Grounded.after",
                              f"{self.after!r} is not a field name (the name of an earlier "
                              f"field of the same object)")
        if self.line is not None:
            try:
                re.compile(self.line)
            except (re.error, TypeError) as exc:
                raise SchemaError("Grounded.line",
                                  f"{self.line!r} is not a regular expression: {exc}") from None

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        _mark(handler.resolve_ref_schema(schema) if "$ref" in schema else schema,
              self.schema_mark, self.line, self.after, self.longest, self.clean)
        return schema

    @property
    def schema_mark(self) -> bool | str:
        """The value of ``GROUNDED_KEY`` for this marker: ``true``,
        ``WHOLE_TOKENS`` under ``whole_tokens=True``, ``WHOLE_LINES`` under
        ``whole_lines=True``, ``WHOLE_ITEMS`` under ``whole_items=True`` (items
        over lines over tokens when several are set)."""
        return (WHOLE_ITEMS if self.whole_items else WHOLE_LINES if self.whole_lines else
                WHOLE_TOKENS if self.whole_tokens else True)


def _mark(node: Any, mark: bool | str, line: str | None = None,
          after: str | None = None, longest: bool = False, clean: bool = False) -> None:
    """Mark a string node (an ``enum``/``const`` of strings too: a marker on a
    ``Literal`` or enum field), the items of an array node, every branch."""
    if not isinstance(node, dict):
        return
    kinds = _kinds(node)
    choices = node.get("enum", [node["const"]] if "const" in node else None)
    if "string" in kinds or (choices and all(isinstance(c, str) for c in choices)):
        node[GROUNDED_KEY] = mark
        if line is not None:
            node[LINE_KEY] = line
        if after is not None:
            node[AFTER_KEY] = after
        if longest:
            node[LONGEST_KEY] = True
        if clean:
            node[CLEAN_KEY] = True
    if "array" in kinds and isinstance(node.get("items"), dict):
        _mark(node["items"], mark, line, after, longest, clean)
    for branch in node.get("anyOf", ()) or node.get("oneOf", ()):
        _mark(branch, mark, line, after, longest, clean)


@dataclass(frozen=True, slots=True)
class Derived:
    """Marks a field whose value is derived or normalised, not copied: the
    ``ground=`` default (on by default for ``extract_many`` and ``agentflow
    extract``) leaves it ungrounded. Use as ``Annotated[str, Derived()]``::

        class Paper(BaseModel):
            title: str                               # grounded by the default
            language: Annotated[str, Derived()]      # "English", said nowhere

    Records list such values under ``ungrounded`` (nothing checked them
    against the document). A ``Grounded()`` marker on the same field wins.
    """

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema) if "$ref" in schema else schema
        if isinstance(target, dict):
            target[DERIVED_KEY] = True
        return schema


_NAMED = ("properties", "patternProperties", "$defs", "definitions")
"""Keywords whose value maps names to schemas (a property may be named ``type``)."""


def _kinds(node: Mapping[str, Any]) -> set[str]:
    """The ``type`` names of a schema node (none when it says none)."""
    kinds = node.get("type")
    if isinstance(kinds, list):
        return {k for k in kinds if isinstance(k, str)}
    return {kinds} if isinstance(kinds, str) else set()


def typed_kind(node: Mapping[str, Any]) -> str | None:
    """``TYPED_KEY``'s value for a schema node the ``ground=`` default reads
    by value: ``"number"`` (``type`` ``integer``/``number``, alone or with
    ``null``; a ``Decimal``'s string branch: ``DECIMAL_KEY``), ``"date"`` /
    ``"date-time"`` (a string of that ``format``); ``None`` for any other
    node (a choice: ``enum``/``const``; a node a ``Grounded()`` marker
    already marked)."""
    if "enum" in node or "const" in node or node.get(GROUNDED_KEY) in MARKS:
        return None
    kinds = _kinds(node) - {"null"}
    if kinds and kinds <= {"integer", "number"}:
        return "number"
    if kinds == {"string"} and isinstance(node.get(DECIMAL_KEY), Mapping):
        return "number"  # a Decimal written as a string: still a number
    fmt = node.get("format")
    if kinds == {"string"} and fmt in ("date", "date-time"):
        return str(fmt)
    return None


def mark_all_strings(schema: Mapping[str, Any], marker: Grounded | None = None) -> dict[str, Any]:
    """A copy of ``schema`` with every free-text string node (``type: string``
    without ``enum``/``const``) marked ``GROUNDED_KEY`` (the default that
    grounds every string leaf, for grammars). Nodes a field's own marker
    already marked keep their mark; the others get ``marker``'s
    (``Grounded()`` when ``None``); a number node and a date node
    (``typed_kind``) get ``TYPED_KEY`` instead; a node marked ``Derived()``
    (``DERIVED_KEY``) and everything under it is left alone."""
    mark = (marker or Grounded()).schema_mark
    line = (marker or Grounded()).line
    clean = (marker or Grounded()).clean

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        if node.get(DERIVED_KEY) is True:  # Derived(): the default leaves it alone
            return node
        out = {k: {name: walk(sub) for name, sub in v.items()}
               if k in _NAMED and isinstance(v, dict) else walk(v)  # a map of names: not a node
               for k, v in node.items()}
        kinds = _kinds(out)
        typed = typed_kind(out)
        if typed is not None:  # a number or a date: read by value, never copied
            out[TYPED_KEY] = typed
            return out
        if "string" in kinds and "enum" not in out and "const" not in out:
            if GROUNDED_KEY not in out and line is not None:
                out[LINE_KEY] = line
            if GROUNDED_KEY not in out and clean:
                out[CLEAN_KEY] = True
            out.setdefault(GROUNDED_KEY, mark)
        return out

    result: dict[str, Any] = walk(dict(schema))
    return result
