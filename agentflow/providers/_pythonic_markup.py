"""The pythonic tool-call form, written into the reply text.

Llama 3.2 (1B/3B) and Llama 4 call tools by writing Python calls as the
whole reply, ``[get_weather(city="Paris"), get_time(zone="CET")]`` (Llama 4
between ``<|python_start|>`` and ``<|python_end|>``); Gemma 3, prompted by
the templates servers ship for it, writes the same list in a ```tool_code
fence; Granite 3.3 and 4.0-H write bare calls, one a line
(vllm-project/vllm#43116). A server without a pythonic tool parser passes the text on (vLLM
without ``--tool-call-parser pythonic``/``llama4_pythonic``, or with it when
prose comes first, vllm-project/vllm#22917; Gemma 3 on vLLM,
vllm-project/vllm#14734), and the call came back as the answer.
``PYTHONIC_MARKUP`` (a ``ReplyMarkup``: read only against the offered tools'
names) makes it the calls it is. The text is parsed as a Python expression
(``ast``; nothing is run): only calls of offered tools with keyword
arguments whose values are literals; anything else leaves it text.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from agentflow.providers._markup import register_markup
from agentflow.providers._reply_markup import Lead, MarkupCall, ReplyMarkup

__all__ = ["PYTHONIC_MARKUP", "parse_pythonic_calls", "pythonic_lead"]

_OPENERS = ("<|python_start|>", "```tool_code", "```python", "```py", "```", "[")
"""What may come before the first call (longest first)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TAIL = re.compile(r"\s*(?:```|<\|python_end\|>|<\|eom\|>|<\|eot\|>)\s*$")
_MAX_TEXT = 100_000
"""Longer replies are never read as calls (``ast`` over a huge text costs)."""
_BARE = {"true": True, "false": False, "null": None, "none": None}


def pythonic_lead(text: str, names: frozenset[str]) -> Lead:
    """What a reply beginning with ``text`` can be in this form: ``"held"``
    once it opens a call of an offered tool, ``"maybe"`` while its head or
    the name so far may still become one, else ``"no"``."""
    rest = text.lstrip()
    if any(opener.startswith(rest) for opener in _OPENERS):
        return "maybe"  # nothing yet, or an opener cut short
    stripped = True
    while stripped:
        stripped = False
        for opener in _OPENERS:
            if rest.startswith(opener):
                rest, stripped = rest[len(opener):].lstrip(), True
                break
    if not rest or any(opener.startswith(rest) for opener in _OPENERS):
        return "maybe"
    match = _NAME.match(rest)
    if match is None:
        return "no"
    name, after = match.group(0), rest[match.end():].lstrip()
    if not after:
        return "maybe" if any(offered.startswith(name) for offered in names) else "no"
    return "held" if after.startswith("(") and name in names else "no"


def parse_pythonic_calls(text: str, names: frozenset[str]) -> list[MarkupCall] | None:
    """The calls of a whole reply in this form: a list of calls, or calls
    one a line (Granite 3.3 and 4.0-H write them bare), of offered tools,
    keyword arguments only, literal values (``true``, ``false`` and ``null``
    read as JSON's); ``None`` otherwise.

    Raises:
        ValueError: a text that is not a Python expression (it stays text).
    """
    if len(text) > _MAX_TEXT:
        return None
    body = text.strip().removeprefix("<|python_start|>").strip()
    body = re.sub(r"^```(?:tool_code|python|py)?\s*", "", body)
    body = _TAIL.sub("", body).strip()
    try:
        statements = ast.parse(body).body
    except (SyntaxError, RecursionError, MemoryError) as error:
        raise ValueError(f"not Python: {error}") from None
    if not all(isinstance(s, ast.Expr) for s in statements):
        return None
    values = [s.value for s in statements if isinstance(s, ast.Expr)]
    nodes = values[0].elts if len(values) == 1 and isinstance(
        values[0], ast.List | ast.Tuple) else values
    calls: list[MarkupCall] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in names and not node.args):
            return None
        args: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:  # **spread
                return None
            args[keyword.arg] = _literal(keyword.value)
        calls.append(MarkupCall(node.func.id, args))
    return calls or None


def _literal(node: ast.expr) -> Any:
    """A literal's value, with JSON's ``true``/``false``/``null`` read too.

    Raises:
        ValueError: anything but a literal JSON can carry (a name, a call, a
            set, bytes, a complex number, a dict key that is no string...).
    """
    if isinstance(node, ast.Name) and node.id.lower() in _BARE:
        return _BARE[node.id.lower()]
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        keys = [_literal(k) if k is not None else None for k in node.keys]
        if not all(isinstance(k, str) for k in keys):
            raise ValueError("a dict key that is no string")
        return {k: _literal(v) for k, v in zip(keys, node.values, strict=True)}
    value = ast.literal_eval(node)
    if value is not None and not isinstance(value, str | int | float | bool):
        raise ValueError(f"a {type(value).__name__} is no JSON value")
    return value


PYTHONIC_MARKUP = register_markup(
    ReplyMarkup("pythonic", pythonic_lead, parse_pythonic_calls))
"""The pythonic form (Llama 3.2/4, Gemma 3, Granite): the whole reply is calls."""
