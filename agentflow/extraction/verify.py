"""The verify stage of the extraction pipeline: each ok result's confidence.

``with_confidence`` adds to an ok result its fields' confidence, the fields
that need review and the values nothing checked
(``agentflow.extraction.confidence``), the lists kept at their bound while
the document lists more (``list_cuts``), the dicts at their most keys
(``dict_cuts``), the list items repeated too often (``list_repeats``) and
the fields dropped (``dropped``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow.batch_types import ExtractResult
from agentflow.extraction.confidence import field_confidence, needs_review, top_fields
from agentflow.extraction.dict_cuts import dict_cuts
from agentflow.extraction.dropped import with_dropped
from agentflow.extraction.hand_rules import has_hand_rules, held_fields
from agentflow.extraction.list_cuts import list_cuts
from agentflow.extraction.list_repeats import repeated_items, with_repeats
from agentflow.grounding.locators import Locator
from agentflow.model import SchemaDialect

__all__ = ["with_confidence"]


def with_confidence(result: ExtractResult, text: str, locators: Mapping[str, Locator],
                    output: Any = None, dialect: SchemaDialect | None = None) -> ExtractResult:
    """``result`` with its fields' confidence, the fields that need review and
    the values nothing checked (``agentflow.extraction.confidence``), the
    lists kept at their bound while the document lists more (``list_cuts``)
    and the dicts at their most keys (``dict_cuts``; ``dialect``: the one the
    model was sent the schema in)."""
    if not result.ok:
        return result
    if result.truncated is not None:
        text = text[: result.truncated.kept_chars]
    value, spans = result.output, result.spans
    # the checks that can apply to this output's type only (hand rules and list cuts: a
    # type with hand rules, or a run with learned locators)
    ruled = has_hand_rules(output)
    held = held_fields(output, value, text, spans) if ruled else frozenset()
    cut = list_cuts(output, value, text, spans, locators) if ruled or locators else {}
    conflicted = ({c.path.split(".")[0].split("[")[0] for c in result.conflicts}
                  if result.conflicts else ())
    fields = top_fields(value)  # read once for the scores and the repeats
    confidence, ungrounded = field_confidence(value, text, spans, locators, held,
                                              result.token_probs, cut, conflicted, fields)
    repeats = repeated_items(value, text, fields)  # a list holding an item too often
    if repeats:
        confidence = with_repeats(confidence, repeats)
    if result.dropped:
        confidence = with_dropped(confidence, result.dropped)
    # made whole here, not through dataclasses.replace (a Python loop over every field)
    return ExtractResult(
        result.index, result.id, value, None, result.usage, result.attempts, result.duration,
        spans=spans, chunks=result.chunks, truncated=result.truncated,
        conflicts=result.conflicts, confidence=confidence,
        needs_review=tuple(needs_review(confidence)), ungrounded=tuple(ungrounded),
        token_probs=result.token_probs, cut_lists=cut,
        cut_dicts=dict_cuts(output, value, dialect), repeated_items=repeats,
        dropped=result.dropped)

