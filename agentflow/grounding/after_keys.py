"""The ``"x-grounded-after"`` keyword spelled in a schema's property keys.

``Grounded(after="first_name")`` names a python field; a pydantic model
whose fields have aliases writes its JSON Schema's properties by alias
(``"First"``), so the grammar (``agentflow.output.grammar_order``), which
reads the schema, would find no such property and silently drop the order
that verification (by python field names) still applies. ``after_by_key``
rewrites each such name into the key the schema uses, walking the output
type beside its schema. Pure function of the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from pydantic import BaseModel

from agentflow.grounding.field_keys import property_key
from agentflow.grounding.marked_types import is_union, sequence_item, unwrap_annotated
from agentflow.grounding.marker import AFTER_KEY

__all__ = ["after_by_key"]


def _leaves(node: Any) -> list[dict[str, Any]]:
    """A property's nodes that may carry ``AFTER_KEY``: itself, its
    ``anyOf``/``oneOf`` branches, its ``items`` (a list's items)."""
    if not isinstance(node, dict):
        return []
    found = [node]
    for branch in node.get("anyOf", ()) or node.get("oneOf", ()) or ():
        found += _leaves(branch)
    found += _leaves(node.get("items"))
    return found


def after_by_key(schema: dict[str, Any], output_type: Any) -> None:
    """Rewrite, in place, every ``AFTER_KEY`` of ``schema`` (the JSON Schema
    pydantic wrote for ``output_type``, ``$defs`` included) that names a
    python field of an aliased model into that field's property key. A
    node whose properties are not exactly the model's keys is left alone."""
    defs = schema.get("$defs", {})
    seen: set[tuple[int, int]] = set()
    done: set[int] = set()  # nodes rewritten: a shared node is rewritten once

    def resolve(node: Any) -> Any:
        for _ in range(32):
            ref = node.get("$ref") if isinstance(node, Mapping) else None
            if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
                break
            node = defs.get(ref.split("/")[-1])
        return node

    def walk(tp: Any, node: Any) -> None:
        node = resolve(node)
        if not isinstance(node, dict) or (id(tp), id(node)) in seen:
            return
        seen.add((id(tp), id(node)))
        tp, _ = unwrap_annotated(tp)
        branches = node.get("anyOf") or node.get("oneOf")
        if is_union(tp) or isinstance(branches, list):
            args = [a for a in get_args(tp) if a is not type(None)] if is_union(tp) else [tp]
            for arg in args:
                for branch in branches if isinstance(branches, list) else [node]:
                    walk(arg, branch)
            return
        item = sequence_item(tp)
        if item is not None:
            walk(item, node.get("items"))
            return
        if not (isinstance(tp, type) and issubclass(tp, BaseModel)):
            return
        props = node.get("properties")
        keys = {name: property_key(name, info) for name, info in tp.model_fields.items()}
        if not isinstance(props, dict) or set(props) != set(keys.values()):
            return
        for name, info in tp.model_fields.items():
            prop = props[keys[name]]
            for leaf in _leaves(resolve(prop)) + _leaves(prop):
                after = leaf.get(AFTER_KEY)
                if isinstance(after, str) and after in keys and id(leaf) not in done:
                    leaf[AFTER_KEY] = keys[after]
                    done.add(id(leaf))
            walk(info.annotation, prop)

    walk(output_type, schema)
