"""Text decoded as JSON, else as a Python literal, safely: the first step of
the tolerant decoder (``agentflow.output.decoding``), for a value a model
wrote in Python syntax (``{'a': True, 'b': None}``). ``literal_value`` reads
literal nodes of ``ast`` only, never evaluates; Python literals with no JSON
meaning are refused, never coerced (``RejectedLiteral``).
"""

from __future__ import annotations

import ast
import contextlib
import json
from typing import Any

import orjson

from agentflow._clean_text import loads_exact, no_constant
from agentflow.messages import clean_data

__all__ = ["RejectedLiteral", "decode_value", "literal_value"]


class RejectedLiteral(ValueError):
    """Python-literal text holding a value JSON cannot express (a set, bytes,
    a complex number, ``...``); the message says which and what to send."""


_REJECTED = {
    ast.Set: "a Python set ({...} without keys) is not JSON: send a JSON array [...]",
    ast.SetComp: "a Python set is not JSON: send a JSON array [...]",
}


def _literal(node: ast.AST) -> Any:
    """The value of a literal-only AST node (see ``literal_value``)."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bytes):
            raise RejectedLiteral(
                f"the bytes literal {ast.unparse(node)} is not JSON text: send a JSON string"
            )
        if isinstance(value, complex):
            raise RejectedLiteral(
                f"the complex number {ast.unparse(node)} is not a JSON number"
            )
        if value is Ellipsis:
            raise RejectedLiteral("'...' is not a JSON value")
        return value
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise ValueError("'**' unpacking is not a literal")
            key = _literal(key_node)
            if isinstance(key, bool) or key is None or not isinstance(key, str | int | float):
                raise RejectedLiteral(f"the key {ast.unparse(key_node)} is not a JSON object key")
            out[str(key)] = _literal(value_node)
        return out
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("a sign applies to numbers only")
        return -value if isinstance(node.op, ast.USub) else value
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)
            and isinstance(node.right, ast.Constant) and isinstance(node.right.value, complex)):
            raise RejectedLiteral(f"the complex number {ast.unparse(node)} is not a JSON number")
    for kind, reason in _REJECTED.items():
        if isinstance(node, kind):
            raise RejectedLiteral(reason)
    raise ValueError(f"{type(node).__name__} is not a literal")


def literal_value(text: str) -> Any:
    """The value of Python-literal ``text`` (``{'a': True, 'b': None, 'c': (1, 2)}``).

    Only literal nodes are read (strings, numbers, ``True``/``False``/``None``,
    dicts, lists, tuples as lists); nothing is evaluated.

    Raises:
        RejectedLiteral: a set, bytes, a complex number or ``...`` (no JSON meaning).
        ValueError: ``text`` is not a Python literal.
    """
    if len(text) > 1_000_000:
        raise ValueError("too long for a literal")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python literal: {exc}") from exc
    try:
        return _literal(tree.body)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


def decode_value(text: str) -> Any:
    """``text`` decoded as JSON, else as a Python literal.

    Raises:
        RejectedLiteral: a Python literal with no JSON meaning.
        ValueError: neither JSON nor a Python literal.
    """
    try:
        value = loads_exact(text)
    except orjson.JSONDecodeError:
        with contextlib.suppress(ValueError):  # raw newlines/tabs inside strings
            return clean_data(json.loads(text, strict=False, parse_constant=no_constant))
        stripped = text.strip()
        if not stripped or stripped[0] not in "{[('\"-+.0123456789TFNb":
            raise ValueError("not JSON") from None
        value = literal_value(stripped)
        return clean_data(value) if isinstance(value, dict | list | str) else value
    if "\\u" in text:  # escapes may decode to lone surrogates
        value = clean_data(value)
    return value
