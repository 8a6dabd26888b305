"""What every schema dialect shares (``agentflow.output.dialects`` re-exports
the public names): the ``DialectSchema`` result, ``$ref`` following, a node's
types, and dropping agentflow's own ``x-grounded`` marks, which no vendor
dialect sends."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DialectSchema", "resolve_ref", "schema_types", "unmarked"]


@dataclass(frozen=True, slots=True)
class DialectSchema:
    """A schema in one dialect. ``strict`` says whether it satisfies the
    dialect's strict rules (send ``strict: true`` only then)."""

    schema: Mapping[str, Any]
    strict: bool


def resolve_ref(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` with local ``#/$defs/...`` references followed."""
    seen = 0
    while "$ref" in node and seen < 32:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            break
        node = root.get("$defs", {}).get(ref.split("/")[-1], {})
        seen += 1
    return node


def schema_types(node: Mapping[str, Any]) -> set[str]:
    """The JSON types ``node`` names in ``type`` (one or a list; none: empty)."""
    t = node.get("type")
    if isinstance(t, list):
        return set(t)
    return {t} if isinstance(t, str) else set()


_GROUNDED_KEY = "x-grounded"  # agentflow.grounding.GROUNDED_KEY
_MARK_KEYS = (_GROUNDED_KEY, "x-grounded-line", "x-grounded-after",
              "x-grounded-longest", "x-grounded-clean", "x-grounded-values",
              "x-derived", "x-grounded-decimal",
              "x-grounded-read")  # grounding.marker's LINE_KEY ... DECIMAL_KEY,
# locators' VALUES_KEY, locator_whole's READ_KEY


def unmarked(node: Any) -> Any:
    """``node`` without ``x-grounded`` marks (nor ``x-grounded-line``; copied
    only where there are some)."""
    if isinstance(node, list):
        items = [unmarked(n) for n in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    out = {k: unmarked(v) for k, v in node.items() if k not in _MARK_KEYS}
    same = len(out) == len(node) and all(out[k] is node[k] for k in out)
    return node if same else out
