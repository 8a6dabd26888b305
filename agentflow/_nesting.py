"""How deeply a JSON-like value nests: one iterative walk, shared by the web
request reader (``agentflow.web.requests``) and the client tool checks
(``agentflow.client_tool_checks``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["nesting_depth"]


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests mappings and lists (tuples count as lists;
    a scalar: 0), counting no further than ``limit + 1`` (iterative: any
    depth is safe, and a value far deeper than ``limit`` costs no more than
    reaching ``limit + 1``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((c, depth) for c in children
                     if type(c) not in _SCALARS and isinstance(c, Mapping | list | tuple))
    return deepest


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""JSON's scalar types, exactly: a value of one nests nothing (no ``isinstance``
through the ``Mapping`` ABC for each)."""
