"""Lists kept at their bound while the document lists more items.

A list field with a ``max_length`` (``agentflow.output.list_bounds``) whose
learned locator (``agentflow.grounding.locators``) or hand rule
(``agentflow.extraction.hand_rules``) leaves exactly the output's items as
the *first* ones of the document is right as far as it goes, but it is not
the document's list: the rest were left out. ``list_cuts`` names such
fields with the number of items the document lists, so that
``agentflow.extraction.confidence`` rates them ``LIST_CUT`` (below the
review threshold) and the record and its review page say how many items
the document lists and how many were kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from agentflow.extraction.hand_rules import lists_left
from agentflow.grounding.locators import Locator
from agentflow.output.list_bounds import field_max_items

__all__ = ["list_cuts"]


def list_cuts(output_type: Any, output: Any, source: str,
              spans: Mapping[str, Sequence[tuple[int, int]]],
              locators: Mapping[str, Locator] | None = None) -> dict[str, int]:
    """Field name -> the number of items ``source`` lists, for each top-level
    list field of ``output`` (an instance of the pydantic model
    ``output_type``) that holds ``max_length`` items, the first ones its
    locator (``Locator.holds``; a continued list: its first block) or its
    hand rule finds, while the document lists more. ``{}`` for any other
    output type."""
    if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)
            and isinstance(output, BaseModel)):
        return {}
    out = lists_left(output_type, output, source, spans)
    for name, rule in (locators or {}).items():
        info = output_type.model_fields.get(name)
        value = getattr(output, name, None)
        cap = field_max_items(info)
        if not rule.many or cap is None or not isinstance(value, list | tuple) or (
                len(value) != cap):
            continue
        found = rule.values(source)
        if len(found) > cap and rule.holds(list(value), source, clean=True, max_items=cap,
                                           found=found):
            out[name] = len(found)
    return out
