"""Values a template defines once and renders transformed: what the user
means may be the rendered text.

A templated document (a conda-build ``meta.yaml``, an Ansible or Salt file,
a cookiecutter or Helm template) may write a value once, as a variable's
definition (Jinja's ``{% set name = "Flask-Cors" %}``, Liquid's ``{% assign
x = "..." %}``, Go's ``{{ $name := "..." }}``), and render it elsewhere as
a key's whole value through a filter: ``name: {{ name|lower }}``. The value
the document means there is the rendered one (``flask-cors``); the
examples cannot show the difference where the filter leaves their values as
written (``fastbar`` lower-cased is ``fastbar``).

So a value a learned locator reads from such a definition (its ``left``
ends in one: ``defined_variable``) is never pinned where the document
renders the variable as a key's whole value (``key: {{ var|f }}``, quoted
or not) through filters that change it (``rendered_otherwise``): the case
filters (``lower``, ``upper``, ``title``, ``capitalize``), ``trim`` and
``replace`` with literal arguments are applied, as filters (``|lower``) or
as methods (``.lower()``); a filter that cannot be applied here
(``slugify``, a subscript) may change it too. A use inside a longer value
(a URL's ``{{ name }}-{{ version|replace('.', '_') }}.tar.gz``) renders
a part of something else, and says nothing of the value.
``agentflow.extraction.confidence`` then scores the value as if the field
had no locator: it needs review.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

__all__ = ["defined_variable", "rendered_otherwise"]

_DEFINITION = re.compile(
    r"(?:\{%-?\s*(?:set|assign)\s+(\w+)\s*=|\{\{-?\s*\$(\w+)\s*:=)\s*[\"']?\s*\Z")
"""The end of a rule's ``left`` that is a template variable's definition."""
_USE = re.compile(r"^[ \t]*(?:- )?[\w.-]+[ \t]*[:=][ \t]*([\"']?)\{\{-?\s*(.*?)\s*-?\}\}\1"
                  r"[ \t]*(?:#.*)?$", re.MULTILINE)
"""A key line whose whole value is one template expression (group 2)."""
_STEP = re.compile(r"\s*(?:\|\s*(\w+)|\.(\w+)(?=\())\s*(\((.*?)\))?")
"""A filter (``|lower``, ``| replace('-', '_')``) or method (``.lower()``) step."""
_CASES: dict[str, Callable[[str], str]] = {
    "lower": str.lower, "upper": str.upper, "title": str.title, "capitalize": str.capitalize,
    "trim": str.strip, "strip": str.strip}


def defined_variable(left: str) -> str | None:
    """The variable whose definition ``left`` (a rule's text before its
    value) ends in (``name`` of ``{% set name = "``), else ``None``."""
    m = _DEFINITION.search(left)
    return (m.group(1) or m.group(2)) if m else None


def rendered_otherwise(left: str, value: str, source: str) -> bool:
    """Whether ``source`` renders the variable ``left`` defines (``defined_
    variable``) as a key's whole value through filters that change
    ``value`` or cannot be applied here (see the module docstring)."""
    name = defined_variable(left)
    if name is None:
        return False
    head = re.compile(rf"\$?{re.escape(name)}\b")
    for m in _USE.finditer(source):
        expression = m.group(2)
        start = head.match(expression)
        if start is not None and _rendered(value, expression[start.end():]) != value:
            return True
    return False


def _rendered(value: str, steps: str) -> str | None:
    """``value`` through the filter ``steps`` written after the variable
    (``|lower``, ``.replace('-', '_')``); ``None`` where one cannot be
    applied here (an unknown filter, arguments that are not literals, a
    subscript)."""
    at = 0
    while at < len(steps.rstrip()):
        m = _STEP.match(steps, at)
        if m is None or m.end() == at:
            return None
        name = m.group(1) or m.group(2)
        try:
            args: tuple[object, ...] = ast.literal_eval(f"({m.group(4)},)") if m.group(4) else ()
        except (ValueError, SyntaxError):
            return None
        if name in _CASES and not args:
            value = _CASES[name](value)
        elif name == "replace" and len(args) == 2 and isinstance(
                old := args[0], str) and isinstance(new := args[1], str):
            value = value.replace(old, new)
        else:
            return None
        at = m.end()
    return value
