"""Grounding: extracted values that must be verbatim spans of the source text.

**Declaring.** One marker, ``Grounded()``, as ``Annotated`` metadata::

    class Contact(BaseModel):
        name: Annotated[str, Grounded()]                  # a str field
        phone: Annotated[str | None, Grounded()] = None   # null when the text has none
        tags: list[Annotated[str, Grounded()]]            # each item
        notes: Annotated[list[str], Grounded()]           # the same: each item
        city: Annotated[str, Grounded(case_sensitive=False)]
        version: Annotated[str, Grounded(whole_tokens=True)]  # never part of a token
        items: list[Annotated[str, Grounded(whole_lines=True)]]  # whole lines, each
        changes: list[Annotated[str, Grounded(whole_items=True)]]  # list items, each

at any depth (nested models, lists of models, dataclasses, TypedDicts). A
marker on anything but ``str``, ``str | None`` or a list/tuple/set of them
raises ``SchemaError`` naming the field when the call (or ``grounding_plan``)
checks the type. Instead of marking fields one by one, a default grounds
every *free-text* string leaf (a value declared ``str``; never enums,
``Literal`` values, numbers or booleans): ``OutputConfig(ground=True)`` per
agent, ``agent.call(..., ground=True)`` per call, ``extract_many(...,
ground=True)`` per batch; ``ground=Grounded(case_sensitive=False)`` sets the
rules the default applies. An absent value is ``null`` on an optional field:
an empty grounded string is refused ("empty text").

**Choices.** A marker on a ``Literal`` of strings or a ``str`` enum (never
the default) grounds the choice: its label must occur in the source, letter
case ignored (``urgency=HIGH`` holds ``"high"``), under the marker's other
rules (``whole_tokens``, ``line``)::

    urgency: Annotated[Literal["low", "medium", "high"], Grounded(line=r"urgency=")]

so a model can no longer pick a label the document does not say; the
grammar offers only the labels that occur.

**Verbatim** (the one definition, ``locate``): a value is found in the source
when it occurs there exactly; failing that, when it occurs with every run of
whitespace (spaces, tabs, newlines) in the value matching any non-empty run
of whitespace in the source, the value's leading and trailing whitespace
ignored; failing that, when value and source are equal in Unicode
compatibility form (NFKC: ``é`` composed or decomposed, ``ﬁ`` and ``fi``,
full-width letters — one text in two encodings, as PDF text layers write
it; a non-breaking space and a space, ``…`` and ``...``), or equal once
typographic punctuation is read as plain ASCII (curly quotes and ``'``/``"``,
en/em dashes and the minus sign and ``-``, either side: a model writes
``don't`` where the document has ``don’t``, ``1990-1995`` for ``1990–1995``);
letter case matters unless the marker says
``case_sensitive=False``. The span is where it occurs in the source.

**Whole tokens** (``Grounded(whole_tokens=True)``): the value must also begin
and end at token boundaries of the source, so it is one or more whole tokens
with what lies between them. A token is a maximal run of characters that are
neither whitespace nor delimiters (brackets, quotes, ``,`` and ``;``), less a
trailing run of ``. : ! ?`` (``agentflow.extraction.tokens`` defines it once):
``2:1.5.2-1``, ``jelmer@debian.org``, ``urgency=medium`` and
``d/salsa-ci.yml`` are one token each, so ``1.5.2-1``, ``debian`` or ``d`` are
refused there ("cuts through the token ..."), while ``unstable`` out of
``unstable;`` and ``Paris`` out of ``Paris.`` are whole. An occurrence that
cuts a token does not count: the span is the first whole-token occurrence by
the occurrence rule below. The grammar of a model that takes one allows only
such values. Use it for fields whose values are whole words of the text
(identifiers, versions, names, addresses, dates, whole lines).

**Whole lines** (``Grounded(whole_lines=True)``): the value must begin where
a line's content begins and end where a line's content ends (the same line's
or a later one's); a line's content is the line less its indentation, a list
marker (``*``, ``-``, ``+``, ``•``, ``1.``, ``2)`` ... followed by whitespace)
and trailing whitespace (``agentflow.extraction.lines`` defines it once).
Use it for the items of a bulleted or numbered list, the lines of an address,
a paragraph: an item copied from such a list can no longer stop in the middle
of its line ("is only part of the line ..."). Under ``whole_lines`` only
whole-line occurrences are candidates.

**Whole items** (``Grounded(whole_items=True)``): the value must be exactly
one item of a bulleted or numbered list of the source: the text after the
item's marker with its continuation lines (the lines after it indented
deeper than the marker, nested items included; ``agentflow.extraction.
items`` defines it once). Use it for the items of such a list when an item
may run over several lines: a copy can no longer stop at the end of the
item's first line, nor run into the next item ("is not one whole item of a
list ..."). The grammar of a model that takes one lists the document's
items as the only values. Under ``whole_items`` only occurrences that are
exactly an item are candidates.

**On a line** (``Grounded(line=r"urgency=")``): the value must lie within one
line of the source that the regular expression searches (a whole item: its
first line). It says where a field is written, as a ``pattern`` says what it
looks like: a version on the header line, never a version named in a change
line; a total on the line that starts with ``Total``. Only occurrences on
such lines are candidates; elsewhere the value goes back as "is not on a
line that matches ...". The grammar of a model that takes one offers only
spans of those lines. In a JSON Schema: ``"x-grounded-line": "urgency="``
beside ``"x-grounded"``.

The ``ground=True`` default applies ``Grounded()`` (sub-token values allowed):
it grounds every string leaf of schemas not written for grounding, where a
value may rightly be part of a token (a surname out of ``Smith-Jones``, a
domain out of an e-mail address); ``ground=Grounded(whole_tokens=True)`` makes
the default whole-token.

**Spans.** ``[start, end)`` character offsets (Python ``str`` indices) into
the source: the text of the call's user message(s), joined by a blank line
when there are several. Keyed by field path: python field names, dotted,
``[i]`` for list items (``maintainer``, ``changes[2]``,
``entries[3].version``); ``{"path": [(start, end)]}``.

**Occurrence rule.** Values are placed in schema order (fields in
declaration order, list items in order). Each takes the first occurrence
that starts at or after the start of the previous value's span and is not
already taken by an earlier value with the same span; failing that, the
first occurrence anywhere not taken; failing that, its first occurrence.
Under ``whole_tokens`` only whole-token occurrences are candidates.
Repeated list items therefore map to successive occurrences (a value that
repeats more often than the document holds it reuses the first one, and
``degenerate.check_degenerate`` refuses a list that repeats it 3 times or
more); items that overlap in the source simply have overlapping spans.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from typing_extensions import is_typeddict

from agentflow.errors import SchemaError
from agentflow.extraction.locate import GroundingCheck, check_grounding, locate
from agentflow.output.json_schema import SCHEMA_ATTRIBUTE

__all__ = [
    "GROUNDED_KEY",
    "LINE_KEY",
    "WHOLE_ITEMS",
    "WHOLE_LINES",
    "WHOLE_TOKENS",
    "Grounded",
    "GroundedValue",
    "GroundingCheck",
    "check_grounding",
    "grounded_values",
    "grounding_plan",
    "locate",
    "mark_all_strings",
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

_MARKS = (True, WHOLE_TOKENS, WHOLE_LINES, WHOLE_ITEMS)


@dataclass(frozen=True, slots=True)
class Grounded:
    """Marks a string (or the items of a list of strings) as a verbatim span of
    the source text. Use as ``Annotated[str, Grounded()]``.

    Attributes:
        case_sensitive: letter case must match (default); ``False`` finds the
            value whatever its case.
        whole_tokens: the value must begin and end at token boundaries of the
            source (``agentflow.extraction.tokens``): never part of a word
            such as the ``1.5.2-1`` of ``2:1.5.2-1``. Default ``False``.
        whole_lines: the value must begin where a line's content begins and
            end where a line's content ends (``agentflow.extraction.lines``:
            indentation, a list marker such as ``*`` or ``1.`` and trailing
            whitespace are not content): one or more whole lines, never a
            line cut short. Implies whole tokens. Default ``False``.
        whole_items: the value must be exactly one item of a bulleted or
            numbered list of the source, with its continuation lines
            (``agentflow.extraction.items``): never an item's first line
            alone, never two items. Default ``False``.
        line: a regular expression (Python ``re``, searched): the value must
            lie within one line of the source that it matches (for a whole
            item: the item's first line), e.g. ``r"urgency="`` for the fields
            of a changelog entry's header line, ``r"^Total"`` for a total.
            It says *where* a field is written, as ``pattern`` says what it
            looks like. Default ``None`` (anywhere).

    Raises:
        SchemaError: ``line`` is not a regular expression Python can read.
    """

    case_sensitive: bool = True
    whole_tokens: bool = False
    whole_lines: bool = False
    whole_items: bool = False
    line: str | None = None

    def __post_init__(self) -> None:
        if self.line is not None:
            try:
                re.compile(self.line)
            except (re.error, TypeError) as exc:
                raise SchemaError("Grounded.line",
                                  f"{self.line!r} is not a regular expression: {exc}") from None

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        _mark(handler.resolve_ref_schema(schema) if "$ref" in schema else schema,
              self.schema_mark, self.line)
        return schema

    @property
    def schema_mark(self) -> bool | str:
        """The value of ``GROUNDED_KEY`` for this marker: ``true``,
        ``WHOLE_TOKENS`` under ``whole_tokens=True``, ``WHOLE_LINES`` under
        ``whole_lines=True``, ``WHOLE_ITEMS`` under ``whole_items=True`` (items
        over lines over tokens when several are set)."""
        return (WHOLE_ITEMS if self.whole_items else WHOLE_LINES if self.whole_lines else
                WHOLE_TOKENS if self.whole_tokens else True)


def _mark(node: Any, mark: bool | str, line: str | None = None) -> None:
    """Mark a string node (an ``enum``/``const`` of strings too: a marker on a
    ``Literal`` or enum field), the items of an array node, every branch."""
    if not isinstance(node, dict):
        return
    kinds = node.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    choices = node.get("enum", [node["const"]] if "const" in node else None)
    if "string" in kinds or (choices and all(isinstance(c, str) for c in choices)):
        node[GROUNDED_KEY] = mark
        if line is not None:
            node[LINE_KEY] = line
    if "array" in kinds and isinstance(node.get("items"), dict):
        _mark(node["items"], mark, line)
    for branch in node.get("anyOf", ()) or node.get("oneOf", ()):
        _mark(branch, mark, line)


def mark_all_strings(schema: Mapping[str, Any], marker: Grounded | None = None) -> dict[str, Any]:
    """A copy of ``schema`` with every free-text string node (``type: string``
    without ``enum``/``const``) marked ``GROUNDED_KEY`` (the default that
    grounds every string leaf, for grammars). Nodes a field's own marker
    already marked keep their mark; the others get ``marker``'s
    (``Grounded()`` when ``None``)."""
    mark = (marker or Grounded()).schema_mark
    line = (marker or Grounded()).line

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items()}
        kinds = out.get("type")
        kinds = set(kinds) if isinstance(kinds, list) else {kinds}
        if "string" in kinds and "enum" not in out and "const" not in out:
            if GROUNDED_KEY not in out and line is not None:
                out[LINE_KEY] = line
            out.setdefault(GROUNDED_KEY, mark)
        return out

    result: dict[str, Any] = walk(dict(schema))
    return result


# ----------------------------------------------------------------------------- types


_NONE = type(None)
_SEQUENCES = (list, tuple, set, frozenset, Sequence, typing.Sequence)


def _unwrap(tp: Any) -> tuple[Any, list[Grounded]]:
    """``tp`` without ``Annotated``, and the ``Grounded`` markers it carried."""
    markers: list[Grounded] = []
    while get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        markers += [m for m in args[1:] if isinstance(m, Grounded)]
        tp = args[0]
    return tp, markers


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _is_text(tp: Any) -> bool:
    """A free-text string type: ``str`` or a subclass, never an enum."""
    return isinstance(tp, type) and issubclass(tp, str) and not issubclass(tp, Enum)


def _is_choice(tp: Any) -> bool:
    """A choice of strings: a ``Literal`` of strings or a ``str`` enum (a field
    a marker may ground, the default never does)."""
    if get_origin(tp) is Literal:
        return all(isinstance(a, str) for a in get_args(tp))
    return isinstance(tp, type) and issubclass(tp, Enum) and issubclass(tp, str)


def _sequence_item(tp: Any) -> Any | None:
    """The item type of a list/tuple/set type, else ``None``."""
    origin = get_origin(tp)
    if origin is None:
        return Any if tp in (list, tuple, set, frozenset) else None
    if origin not in _SEQUENCES and not (
        isinstance(origin, type) and issubclass(origin, (list, tuple, set, frozenset))
    ):
        return None
    args = get_args(tp)
    if not args:
        return Any
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return None  # fixed-length tuples: not a list
    return args[0]


def _fields(tp: Any) -> list[tuple[str, Any, list[Grounded]]] | None:
    """``(name, annotation, markers)`` of an object type's fields, in order."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        out = []
        for name, info in tp.model_fields.items():
            ann, marks = _unwrap(info.annotation)
            out.append((name, ann, marks + _field_markers(info)))
        return out
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return [(f.name, *_unwrap(hints.get(f.name, Any))) for f in dataclasses.fields(tp)]
    if is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return [(name, *_unwrap(ann)) for name, ann in hints.items()]
    return None


def _field_markers(info: FieldInfo) -> list[Grounded]:
    return [m for m in info.metadata if isinstance(m, Grounded)]


def _allows_marker(tp: Any) -> bool:
    """A marker may sit on ``str``, a choice of strings (``Literal``, ``str``
    enum), their ``| None`` and sequences of those."""
    tp, _ = _unwrap(tp)
    if _is_union(tp):
        args = [a for a in get_args(tp) if a is not _NONE]
        return bool(args) and all(_allows_marker(a) for a in args)
    if _is_text(tp) or _is_choice(tp):
        return True
    item = _sequence_item(tp)
    return item is not None and item is not Any and _allows_marker(item)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp)


def grounding_plan(output_type: Any) -> bool:
    """Check every ``Grounded()`` marker of ``output_type``; whether it has any.

    Raises:
        SchemaError: a marker on a field that is not ``str``, ``str | None``
            or a list of them (names the field, e.g. ``"Invoice.total"``).
    """
    given = getattr(output_type, SCHEMA_ATTRIBUTE, None)
    if isinstance(given, Mapping):  # a json_schema_output type: "x-grounded" in its schema
        return _schema_marks(given)
    found = False
    seen: set[int] = set()

    def visit(tp: Any, where: str, marks: list[Grounded]) -> None:
        nonlocal found
        if marks:
            if not _allows_marker(tp):
                raise SchemaError(
                    where,
                    f"Grounded() applies to str fields (or a Literal/enum of strings) and the "
                    f"items of list[str], not to "
                    f"{_type_name(tp)}; remove the marker or change the field's type",
                )
            found = True
        tp, inner = _unwrap(tp)
        if inner:
            visit(tp, where, inner)
            return
        if _is_union(tp):
            for arg in get_args(tp):
                visit(arg, where, [])
            return
        item = _sequence_item(tp)
        if item is not None:
            visit(item, where, [])
            return
        if get_origin(tp) in (dict, Mapping, typing.Mapping) and len(get_args(tp)) == 2:
            visit(get_args(tp)[1], where, [])
            return
        fields = _fields(tp)
        if fields is None or id(tp) in seen:
            return
        seen.add(id(tp))
        for name, ann, field_marks in fields:
            visit(ann, f"{_type_name(tp)}.{name}", field_marks)

    visit(output_type, _type_name(output_type), [])
    return found


# ----------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class GroundedValue:
    """One grounded string of an output: its field path, value and rules.

    ``optional``: ``None`` was allowed where this value stands.
    """

    path: str
    value: str
    marker: Grounded
    optional: bool = False


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _matches(value: Any, tp: Any) -> bool:
    """Whether a validated ``value`` is of the union branch ``tp``."""
    tp, _ = _unwrap(tp)
    origin = get_origin(tp) or tp
    if origin is Literal:
        return value in get_args(tp)
    if tp is Any:
        return True
    return isinstance(origin, type) and isinstance(value, origin)


def grounded_values(
    value: Any, output_type: Any, default: Grounded | None = None
) -> list[GroundedValue]:
    """The grounded strings of a validated output, in schema order.

    Args:
        value: the validated output (an instance of ``output_type``).
        output_type: the type it was validated as.
        default: the marker applied to every free-text string leaf not
            marked itself (``None``: only marked fields are grounded).
    """
    out: list[GroundedValue] = []

    def walk(v: Any, tp: Any, path: str, marker: Grounded | None, optional: bool) -> None:
        tp, marks = _unwrap(tp)
        marker = marks[-1] if marks else marker
        if v is None:
            return
        if _is_union(tp):
            args = get_args(tp)
            nullable = _NONE in args
            for arg in args:
                if arg is not _NONE and _matches(v, arg):
                    walk(v, arg, path, marker, optional or nullable)
                    return
            return
        if isinstance(v, str):
            chosen = marker or default
            if chosen is not None and _is_text(tp) and not isinstance(v, Enum):
                out.append(GroundedValue(path or "result", v, chosen, optional))
            elif marker is not None and _is_choice(tp):  # only a marker grounds a choice
                label = v.value if isinstance(v, Enum) else v
                out.append(GroundedValue(path or "result", label,
                                         dataclasses.replace(marker, case_sensitive=False),
                                         optional))
            return
        if isinstance(v, list | tuple | set | frozenset):
            item = _sequence_item(tp) or Any
            for i, x in enumerate(v):
                walk(x, item, f"{path}[{i}]", marker, False)
            return
        if isinstance(v, dict):
            args = get_args(tp)
            vt = args[1] if len(args) == 2 else Any
            for k, x in v.items():
                walk(x, vt, _join(path, str(k)), None, False)
            return
        given = getattr(type(v), SCHEMA_ATTRIBUTE, None)
        if isinstance(v, BaseModel) and isinstance(given, Mapping):
            out.extend(_schema_values(v.model_extra or {}, given, path, default))
            return
        fields = _fields(type(v)) if not is_typeddict(tp) else _fields(tp)
        if fields is None:
            return
        for name, ann, field_marks in fields:
            child = v.get(name) if isinstance(v, dict) else getattr(v, name, None)
            walk(child, ann, _join(path, name), field_marks[-1] if field_marks else None,
                 False)

    walk(value, output_type, "", None, False)
    return out


def _schema_marks(node: Any) -> bool:
    """Whether a JSON Schema marks any node ``"x-grounded"``."""
    if isinstance(node, Mapping):
        return node.get(GROUNDED_KEY) in _MARKS or any(
            _schema_marks(v) for v in node.values())
    if isinstance(node, list):
        return any(_schema_marks(v) for v in node)
    return False


def _schema_marker(node: Mapping[str, Any], inherited: Grounded | None) -> Grounded | None:
    mark = node.get(GROUNDED_KEY)
    if mark in _MARKS:
        line = node.get(LINE_KEY)
        return Grounded(whole_tokens=mark == WHOLE_TOKENS, whole_lines=mark == WHOLE_LINES,
                        whole_items=mark == WHOLE_ITEMS,
                        line=line if isinstance(line, str) else None)
    return inherited


def _schema_values(value: Any, root: Mapping[str, Any], path: str,
                   default: Grounded | None) -> list[GroundedValue]:
    """The grounded strings of an output validated against the JSON Schema
    ``root`` (a ``json_schema_output`` type): each string whose schema node
    says ``"x-grounded"`` (``true``, ``"whole_tokens"``, ``"whole_lines"`` or
    ``"whole_items"``), and under
    ``default`` every free-text string (not ``enum``/``const``); ``$ref`` to
    ``#/$defs`` or ``#/definitions`` and ``anyOf``/``oneOf`` are followed."""
    out: list[GroundedValue] = []

    def resolve(node: Any, depth: int = 0) -> Mapping[str, Any]:
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and depth < 32:
            ref = node["$ref"]
            target: Any = root
            for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else ():
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
            node, depth = target if ref.startswith("#/") else {}, depth + 1
        return node if isinstance(node, Mapping) else {}

    def kind_of(v: Any) -> str:
        return ("null" if v is None else "string" if isinstance(v, str) else
                "array" if isinstance(v, list) else "object" if isinstance(v, dict) else "")

    def walk(v: Any, node: Any, where: str, optional: bool) -> None:
        node = resolve(node)
        branches = node.get("anyOf") or node.get("oneOf")
        if isinstance(branches, list):
            nullable = any(resolve(b).get("type") == "null" for b in branches)
            for branch in map(resolve, branches):
                kinds = branch.get("type")
                kinds = kinds if isinstance(kinds, list) else [kinds]
                if kind_of(v) in kinds or (None in kinds and v is not None):
                    walk(v, branch, where, optional or nullable)
                    return
            return
        if isinstance(v, str):
            marker = _schema_marker(node, default)
            if marker is not None and "enum" not in node and "const" not in node:
                out.append(GroundedValue(where or "result", v, marker, optional))
            elif node.get(GROUNDED_KEY) in _MARKS and marker is not None:  # a marked choice
                out.append(GroundedValue(where or "result", v,
                                         dataclasses.replace(marker, case_sensitive=False),
                                         optional))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, node.get("items", {}), f"{where}[{i}]", False)
        elif isinstance(v, dict):
            props = node.get("properties", {})
            extra = node.get("additionalProperties", {})
            required = set(node.get("required", ()))
            for k, x in v.items():
                walk(x, props.get(k, extra if isinstance(extra, Mapping) else {}),
                     _join(where, str(k)), k not in required)

    walk(value, root, path, False)
    return out
