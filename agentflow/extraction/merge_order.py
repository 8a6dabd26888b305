"""The items of several passes' lists put back in document order
(``document_order``, after ``merge.merge_outputs``): each list field's items
sorted by their spans, a list over its ``max_length`` cut to its first items,
spans re-indexed. Pure functions of the merged data and spans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from agentflow.output.list_bounds import field_max_items

__all__ = ["document_order", "list_index", "resolve_ref"]

Spans = dict[str, list[tuple[int, int]]]


def list_index(path: str, name: str) -> int | None:
    """``i`` of a path ``name[i]`` or ``name[i].more``; ``None`` otherwise."""
    if not path.startswith(name + "["):
        return None
    head = path[len(name) + 1:].split("]", 1)[0]
    return int(head) if head.isdigit() else None


def resolve_ref(node: Any, root: Mapping[str, Any]) -> Any:
    """``node`` itself, or the ``$defs`` entry of ``root`` its ``$ref`` names."""
    ref = node.get("$ref") if isinstance(node, Mapping) else None
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return root.get("$defs", {}).get(ref.split("/")[-1], node)
    return node


def document_order(output: type[BaseModel], data: dict[str, Any], spans: Spans,
                   names: Sequence[str]) -> None:
    """Put the items of each list field ``names`` of merged ``data`` (several
    passes' items) in the order of their spans, in place: items without one
    keep their place among the first; a list over its ``max_length`` keeps
    its first items; ``spans`` are re-indexed to match and listed in document
    order (by their first start). A list left ``None`` stays ``None``."""
    for name in names:
        if data.get(name) is None:
            continue
        values = list(data[name])
        starts: dict[int, int] = {}
        for path, ranges in spans.items():
            i = list_index(path, name)
            if i is not None and ranges:
                starts[i] = min(starts.get(i, ranges[0][0]), *(s for s, _ in ranges))
        order = sorted(range(len(values)), key=lambda i: (starts.get(i, -1), i))
        high = field_max_items(output.model_fields.get(name))
        if high is not None:
            order = order[:high]
        moved = {old: new for new, old in enumerate(order)}
        mine = {p: r for p, r in spans.items() if list_index(p, name) is not None}
        for path in mine:
            del spans[path]
        for path, ranges in mine.items():
            old = list_index(path, name)
            if old in moved:
                rest = path[len(name) + 1:].split("]", 1)[1]
                spans[f"{name}[{moved[old]}]{rest}"] = ranges
        data[name] = [values[i] for i in order]
    ordered = sorted(spans.items(), key=lambda kv: min(kv[1], default=(-1, -1)))
    spans.clear()
    spans.update(ordered)
