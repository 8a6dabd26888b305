"""The one tolerant decoder every tool call goes through (function tools and
the output tool alike), before validation.

Two stages:

1. ``decode_arguments(raw)`` turns the wire's arguments into a dict: an
   object as is; a JSON string, also when it is encoded two or three times
   (``MAX_DEPTH``); Python-literal syntax (``{'a': True, 'b': None}``)
   through ``literal_value``, a safe literal parser (``ast`` restricted to
   literal nodes, never ``eval``); JSON with raw control characters (a
   newline, a tab) inside its strings, as Gemini and local models write long
   text values, read as ``json.loads(strict=False)`` reads it; one markdown
   fence around the whole text and a byte-order mark are dropped first, and
   special tokens or tags around one whole JSON object (``<|im_end|>``,
   ``<|eot_id|>``, ``</tool_call>``: ``_MARKUP_AROUND``) are left out, as
   are the escapes ``\\n``/``\\t`` written between values (``_escaped_layout``); empty,
   blank or ``null`` arguments as ``{}``. Anything else is kept as
   ``{RAW_ARGUMENTS: text}`` so validation reports it to the model
   (``explain_raw`` says what is wrong) instead of crashing the call.
2. ``normalize(data, schema)`` walks the value beside its plain JSON Schema:
   a string where the schema expects an array or object (and no string) is
   decoded the same way, at most ``MAX_DEPTH`` times, nested fields and list
   items included; a field that accepts a string is never decoded. Enum and
   ``Literal`` values that a schema dialect sent as strings (Gemini) are
   converted back to the schema's value (``"2"`` -> ``2``, ``"true"`` ->
   ``True``, ``"1.5"`` -> ``1.5``), and a number or boolean given for a
   string enum becomes that string; a string that differs from exactly one
   string member in case only is that member (``"HIGH"`` for ``"high"``). A
   bare string for an array of strings is a one-item array when it holds no
   list separator (``"Paris"``; ``"red, green"`` is left to validation).
   ``null`` for an optional field that does not allow it is dropped, so the
   default applies (strict dialects send ``null`` for "absent"). A number
   written with comma thousands separators is read where that is its one
   reading (``grouped_number``: ``"1,200"`` for an integer is 1200). A word
   for "no value" (``""``, ``"null"``, ``"N/A"``) where the field takes no
   such string is ``null``, or dropped as ``null`` is (``_absent``); a date
   in another form with one reading is ISO (``_written_dates``).
3. ``lax_arguments(data, schema)``: ``normalize``, then numbers and booleans
   given as strings read where the schema wants one and no string
   (``coerce_scalars``: ``"3"`` for an integer is 3), the lax reading
   pydantic gives a Python tool's parameters. Every tool's arguments are
   read so before validation: the agent's own (``Tool.run``) and the client's
   (``agentflow.client_tools``), whose reading is what the client is sent.

Python literals that have no JSON meaning are refused, never coerced: a set
does not become a list, ``b'a'`` does not become the text ``"b'a'"``, a
complex number is not a number (``RejectedLiteral``). The literal reader and
``decode_value`` live in ``agentflow.output.literals`` (importable from here),
the enum member a scalar stands for in ``agentflow.output._enum_values``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import orjson

from agentflow._clean_text import loads_exact, no_constant
from agentflow.messages import clean_text
from agentflow.output._absent import absent_word
from agentflow.output._enum_values import accepts_as_is, enum_of, enum_value
from agentflow.output._json_lax import coerce_scalars, grouped_number
from agentflow.output._written_dates import iso_date
from agentflow.output.argument_flaws import flaw, never_closed
from agentflow.output.dialects import resolve_ref, schema_types
from agentflow.output.envelopes import MAX_DEPTH, MISSING, decode_container, unwrapped
from agentflow.output.literals import RejectedLiteral, decode_value, literal_value

__all__ = [
    "MAX_DEPTH",
    "RAW_ARGUMENTS",
    "RejectedLiteral",
    "decode_arguments",
    "decode_value",
    "exact_object",
    "explain_raw",
    "lax_arguments",
    "literal_value",
    "normalize",
]

RAW_ARGUMENTS = "__raw_arguments__"
"""The key under which arguments that are no object are kept for validation to report."""


_FENCED = re.compile(r"\s*(```|~~~)[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)\s*\1\s*",
                    re.DOTALL)


def _unfenced(text: str) -> str:
    """The body of one markdown fence enclosing the whole text (```` ```json ````,
    ```` ``` ````, ``~~~``), else ``text``: arguments a model wrote as it
    writes answers (C05 kind)."""
    match = _FENCED.fullmatch(text)
    return match.group(2) if match else text


_MARKUP = r"(?:<\|[^|<>\s]{1,40}\|>|<\uff5c[^\uff5c<>]{1,60}\uff5c>|</?[A-Za-z_][\w:.-]{0,40}>)"
_MARKUP_AROUND = re.compile(rf"\s*(?:{_MARKUP}\s*)*")
"""Special tokens and tags a server leaves around a tool call's arguments (the
chat template's ``<|im_end|>``, ``<|eot_id|>``, DeepSeek's ``<｜tool▁call▁end｜>``,
``<tool_call>``/``</tool_call>``, ``</function>``): only whole tokens, only
around one whole JSON object."""


def _inside_markup(text: str) -> str | None:
    """The one JSON object ``text`` holds between special tokens or tags, or ``None``."""
    lead = _MARKUP_AROUND.match(text)
    start = lead.end() if lead else 0
    if start >= len(text) or text[start] != "{":
        return None
    try:
        _, end = json.JSONDecoder(strict=False, parse_constant=no_constant).raw_decode(
            text, start)
    except ValueError:
        return None
    if (start == 0 and end == len(text)) or not _MARKUP_AROUND.fullmatch(text, end):
        return None
    return text[start:end]


_LAYOUT_ESCAPES = frozenset("nrt")


def _escaped_layout(text: str) -> str | None:
    """``text`` with the escapes ``\\n``, ``\\r`` and ``\\t`` written *between*
    JSON values (two characters each, outside every string) made spaces,
    when that makes it one JSON object, else ``None``. Qwen3.5 writes
    its arguments' layout so (``{"path": "/a.py", "view_range": \\n[1, 2]\\n}``,
    OpenHands/software-agent-sdk#2488); inside a string such an escape is
    the value's own and stays."""
    if text[:1] != "{" or "\\" not in text:
        return None
    out: list[str] = []
    quoted = escaped = changed = False
    at, end = 0, len(text)
    while at < end:
        char = text[at]
        if escaped:
            escaped = False
        elif quoted:
            escaped = char == "\\"
            quoted = char != '"'
        elif char == '"':
            quoted = True
        elif char == "\\" and text[at + 1:at + 2] in _LAYOUT_ESCAPES:
            out.append(" ")
            at += 2
            changed = True
            continue
        out.append(char)
        at += 1
    if not changed:
        return None
    fixed = "".join(out)
    try:
        value = decode_value(fixed)
    except ValueError:
        return None
    return fixed if isinstance(value, dict) else None


def exact_object(text: str) -> dict[str, Any] | None:
    """``text`` read as one plain JSON object, exactly as sent (standard JSON,
    no ``\\u`` escape that could hide a lone surrogate), or ``None`` when it
    is anything else (``decode_arguments`` then reads what it can). Text
    this accepts is what the strict validation of tool-call arguments may
    read as it is (``OutputSpec.validate``'s ``text``)."""
    if text[:1] != "{" or "\\u" in text:
        return None
    try:
        value = loads_exact(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def decode_arguments(raw: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
    """Tool-call arguments as a dict (see the module docstring).

    Never raises: text that is no object (after up to ``MAX_DEPTH``
    decodings) comes back as ``{RAW_ARGUMENTS: text}``.
    """
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, bytes):
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            return {RAW_ARGUMENTS: raw.decode(errors="replace")}
    else:
        text = raw
    exact = exact_object(text)  # the common case: one plain JSON object
    if exact is not None:
        return exact
    original = text
    text = _unfenced(text.lstrip("\ufeff"))
    for _ in range(MAX_DEPTH + 1):
        if not text.strip():
            return {}
        try:
            value = decode_value(text)
        except ValueError:
            inner = _inside_markup(text) or _escaped_layout(text)
            if inner is None:
                return {RAW_ARGUMENTS: clean_text(original)}
            value = decode_value(inner)
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        if not isinstance(value, str):
            break
        text = value  # encoded once more
    return {RAW_ARGUMENTS: clean_text(original)}


def explain_raw(text: str) -> str:
    """Why arguments ``text`` could not be read, for the model to fix: cut
    (never closed) or malformed (closed, or a fault before its end), told
    apart (``argument_flaws``)."""
    if never_closed(text):
        return ("the arguments were cut off before the JSON object closed (the reply was "
                "cut, e.g. at the token limit): send the whole object again")
    try:
        value = decode_value(text)
    except RejectedLiteral as exc:
        return f"the arguments are not JSON: {exc}"
    except ValueError:
        value = None
    if value is None or isinstance(value, dict):  # no JSON value, or one read only leniently
        where = flaw(text) if text.strip().startswith("{") else ""
        if where:  # an object that closed (or broke before its end): malformed, not cut
            closed = ("the object closed, so nothing was cut" if text.strip().endswith("}")
                      else "a fault before its end, not a cut")
            return (f"the arguments are malformed JSON ({closed}): {where}; send the same "
                    "object again as valid JSON")
        return "the arguments are not valid JSON: send one JSON object"
    return (f"the arguments must be a JSON object, got a JSON {type(value).__name__}"
            if not isinstance(value, str) else
            f"the arguments are a string encoded more than {MAX_DEPTH} times")


# --------------------------------------------------------------------------- normalize


def normalize(data: Any, schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """``data`` with the slips the module docstring lists undone, guided by the
    plain JSON Schema ``schema`` (``root`` holds its ``$defs``; default: ``schema``).

    Never raises; what cannot be fixed is left for validation to report.
    """
    if root is None:
        data = unwrapped(data, schema)
    return _normalize(data, schema, schema if root is None else root)


def lax_arguments(data: Any, schema: Mapping[str, Any]) -> Any:
    """A tool call's arguments as every tool reads them before validation:
    ``normalize``, then ``coerce_scalars`` (the module docstring's stage 3).
    Never raises; what cannot be read is left for validation to report."""
    return coerce_scalars(normalize(data, schema), schema)


def _normalize(data: Any, node: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    node = resolve_ref(node, root)
    if absent_word(data, node, root) and _allows_null(node, root):
        return None  # "" / "null" / "N/A" for an ``int | None``
    types = schema_types(node)
    if isinstance(data, str) and types & {"array", "object"} and "string" not in types:
        if data.strip() in ("None", "null") and "null" in types:
            return None
        decoded = decode_container(data)
        if decoded is MISSING:
            return _one_item(data, node, types, root)
        data = decoded
    if isinstance(data, str):
        data = iso_date(grouped_number(data, _scalar_types(node, types, root)), node, root)
    choices = node.get("enum")
    if choices is None and "const" in node:
        choices = [node["const"]]
    if isinstance(choices, list) and not isinstance(data, dict | list):
        return enum_value(data, choices)
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(data, dict) and "properties" in node:
        props: Mapping[str, Any] = node["properties"]
        required = set(node.get("required", ()))
        out: dict[str, Any] = {}
        for key, value in data.items():
            prop = props.get(key)
            if prop is None:
                out[key] = value
                continue
            if (value is None or absent_word(value, prop, root)) and key not in required \
                    and not _allows_null(prop, root):
                continue  # strict dialects send null for "absent": let the default apply
            out[key] = _normalize(value, prop, root)
        return out
    if isinstance(data, list) and isinstance(node.get("items"), Mapping):
        return [_normalize(v, node["items"], root) for v in data]
    if branches and not isinstance(data, dict | list) and not accepts_as_is(data, branches, root):
        scalars = [c for b in branches for c in enum_of(b, root)]
        if scalars:
            data = enum_value(data, scalars)
    if branches and isinstance(data, dict | list | str):
        objects = [b for b in branches if schema_types(resolve_ref(b, root)) & {"object", "array"}]
        strings = [b for b in branches if "string" in schema_types(resolve_ref(b, root))]
        if isinstance(data, str) and objects and not strings:
            if data.strip() in ("None", "null") and _allows_null(node, root):
                return None
            decoded = decode_container(data)
            if decoded is MISSING:  # (``list[str] | None``: its one array as above)
                arrays = [resolve_ref(b, root) for b in objects
                          if "array" in schema_types(resolve_ref(b, root))]
                return _one_item(data, arrays[0], {"array"}, root) if len(arrays) == 1 else data
            data = decoded
        if isinstance(data, dict | list):
            kind = "object" if isinstance(data, dict) else "array"
            fitting = [b for b in objects if kind in schema_types(resolve_ref(b, root))]
            if len(fitting) == 1:
                return _normalize(data, fitting[0], root)
    return data


_LIST_SEPARATORS = re.compile(r"[,;|\n\t\u3001\uff0c\uff1b]")
"""Characters a model joins a list's items with inside one string (comma,
semicolon, bar, line break, tab; the CJK comma, fullwidth comma and
semicolon): a string holding one is no single item."""


def _one_item(data: str, node: Mapping[str, Any], types: set[str],
              root: Mapping[str, Any]) -> Any:
    """``[data]`` for a bare string given for an array of strings (``"Paris"``
    for ``list[str]``), when that is its only reading: the array's items take
    a string, and ``data`` is not blank and holds no list separator
    (``"red, green"`` could be one item or two: left to validation, which
    asks the model again). Else ``data``."""
    items = node.get("items")
    if "array" not in types or not isinstance(items, Mapping) or not data.strip() \
            or _LIST_SEPARATORS.search(data):
        return data
    item = resolve_ref(items, root)
    if "string" not in schema_types(item) and not any(
            isinstance(c, str) for c in enum_of(item, root)):
        return data
    return [_normalize(data, items, root)]


def _scalar_types(node: Mapping[str, Any], types: set[str],
                  root: Mapping[str, Any]) -> set[str]:
    """The types ``node`` takes, its ``anyOf``/``oneOf`` branches' included
    (``int | None``), for ``grouped_number``."""
    branches = node.get("anyOf") or node.get("oneOf") or ()
    return types.union(*(schema_types(resolve_ref(b, root)) for b in branches))


def _allows_null(node: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    node = resolve_ref(node, root)
    if "null" in schema_types(node):
        return True
    return any(_allows_null(b, root) for b in node.get("anyOf", ()) or node.get("oneOf", ()))
