"""The verify stage of the extraction pipeline: each ok result's confidence.

``with_confidence`` adds to an ok result its fields' confidence, the fields
that need review and the values nothing checked
(``agentflow.extraction.confidence``), the lists kept at their bound while
the document lists more (``list_cuts``), the dicts at their most keys
(``dict_cuts``), the list items repeated too often (``list_repeats``) and
the fields dropped (``dropped``).

What of that can apply to an output type is read once per run
(``VerifyPlan``: its fields, whether a hand rule may hold one, its bounded
dict fields), so a document runs only the checks its type can need.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentflow.batch_types import ExtractResult
from agentflow.extraction.confidence import field_confidence, needs_review, top_fields
from agentflow.extraction.dict_cuts import dict_caps, dict_cuts
from agentflow.extraction.dropped import with_dropped
from agentflow.extraction.hand_rules import has_hand_rules, held_fields
from agentflow.extraction.list_cuts import list_cuts
from agentflow.extraction.list_repeats import repeated_items, with_repeats
from agentflow.grounding.locators import Locator
from agentflow.model import SchemaDialect

__all__ = ["VerifyPlan", "verify_plan", "with_confidence"]


@dataclass(frozen=True, slots=True)
class VerifyPlan:
    """What ``with_confidence`` reads of one output type, once per run
    (``verify_plan``).

    Attributes:
        output: the output type.
        dialect: the schema dialect the model is sent the schema in.
        fields: the top-level field names of a pydantic model type (``None``
            for any other type: each output's fields are read as they come).
        source: the model's ``__pydantic_fields__`` they were read from (an
            output of a model rebuilt since is read the general way).
        ruled: a hand rule may hold a field of the type (``has_hand_rules``).
        caps: each bounded top-level dict field and its bound (``dict_caps``).
    """

    output: Any
    dialect: SchemaDialect | None
    fields: tuple[str, ...] | None
    source: Any
    ruled: bool
    caps: tuple[tuple[str, int], ...]


def verify_plan(output: Any, dialect: SchemaDialect | None = None) -> VerifyPlan:
    """The ``VerifyPlan`` of output type ``output`` under ``dialect``."""
    if isinstance(output, type) and issubclass(output, BaseModel):
        return VerifyPlan(output, dialect, tuple(output.model_fields),
                          output.__pydantic_fields__, has_hand_rules(output),
                          tuple(dict_caps(output, dialect).items()))
    return VerifyPlan(output, dialect, None, None, has_hand_rules(output), ())


def with_confidence(result: ExtractResult, text: str, locators: Mapping[str, Locator],
                    output: Any = None, dialect: SchemaDialect | None = None,
                    plan: VerifyPlan | None = None) -> ExtractResult:
    """``result`` with its fields' confidence, the fields that need review and
    the values nothing checked (``agentflow.extraction.confidence``), the
    lists kept at their bound while the document lists more (``list_cuts``)
    and the dicts at their most keys (``dict_cuts``; ``dialect``: the one the
    model was sent the schema in). ``plan``: ``verify_plan(output, dialect)``,
    made once per run (``None``: made here)."""
    if not result.ok:
        return result
    if plan is None or plan.output is not output or plan.dialect != dialect:
        plan = verify_plan(output, dialect)
    if result.truncated is not None:
        text = text[: result.truncated.kept_chars]
    value, spans = result.output, result.spans
    # an output of exactly the planned model: its fields and dict bounds as planned
    planned = (plan.fields is not None and value.__class__ is output
               and plan.output.__pydantic_fields__ is plan.source)
    # the checks that can apply to this output's type only (hand rules and list cuts: a
    # type with hand rules, or a run with learned locators)
    held = held_fields(output, value, text, spans) if plan.ruled else frozenset()
    cut = list_cuts(output, value, text, spans, locators) if plan.ruled or locators else {}
    conflicted = ({c.path.split(".")[0].split("[")[0] for c in result.conflicts}
                  if result.conflicts else ())
    # read once for the scores and the repeats
    fields = ({name: getattr(value, name) for name in plan.fields}  # type: ignore[union-attr]
              if planned else top_fields(value))
    confidence, ungrounded = field_confidence(value, text, spans, locators, held,
                                              result.token_probs, cut, conflicted, fields)
    repeats = repeated_items(value, text, fields)  # a list holding an item too often
    if repeats:
        confidence = with_repeats(confidence, repeats)
    if result.dropped:
        confidence = with_dropped(confidence, result.dropped)
    if not planned:
        cut_dicts = dict_cuts(output, value, dialect)
    elif plan.caps:  # (dict_cuts, as planned)
        cut_dicts = {name: cap for name, cap in plan.caps if cap > 0 and isinstance(
            v := fields[name], Mapping) and len(v) >= cap}
    else:
        cut_dicts = {}
    # made whole here, not through dataclasses.replace (a Python loop over every field);
    # every field by position (no keyword matched per call)
    return ExtractResult(
        result.index, result.id, value, None, result.usage, result.attempts, result.duration,
        spans, result.chunks, result.truncated, result.conflicts, confidence,
        tuple(needs_review(confidence)), tuple(ungrounded), result.token_probs, cut, cut_dicts,
        repeats, result.dropped)
