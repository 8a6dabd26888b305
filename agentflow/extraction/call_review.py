"""Per-field confidence and *needs review* for one agent call, as extraction
rates its records (``agentflow.extraction.confidence``), for an app that
extracts with ``agent.stream`` / ``sse_response`` rather than
``extract_many`` (the web demo: ``examples/web/app.py``).

``review_call`` rates the output of a ``Complete`` event: locators learned
from the worked examples, the schema's own hand rules, grounding's spans
and the model's token probabilities where it gave them (the final
message's ``FIELD_PROBS``). ``FieldReview`` is the event an app sends before
the ``complete`` frame (the SSE wire sends a dataclass event with its
fields: ``{"type": "field_review", "confidence": {...}, "needs_review":
[...], "ungrounded": [...]}``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentflow.events import Complete, Event
from agentflow.extraction.confidence import REVIEW_BELOW, field_confidence, needs_review
from agentflow.extraction.hand_rules import held_fields
from agentflow.extraction.list_cuts import list_cuts
from agentflow.extraction.list_repeats import repeated_items, with_repeats
from agentflow.grounding.locators import learn_locators
from agentflow.messages import FIELD_PROBS
from agentflow.output.examples import Example, check_examples

__all__ = ["FieldReview", "review_call", "with_review"]


@dataclass(frozen=True, slots=True)
class FieldReview:
    """How sure the framework is of each field of a call's output.

    Attributes:
        confidence: top-level field -> confidence in ``[0, 1]``.
        needs_review: the fields below ``REVIEW_BELOW``, in order.
        ungrounded: paths of values nothing checked against the source.
        threshold: ``REVIEW_BELOW``, for a page to say what *confident* means.
    """

    confidence: dict[str, float]
    needs_review: list[str]
    ungrounded: list[str] = field(default_factory=list)
    threshold: float = REVIEW_BELOW
    type: Literal["field_review"] = "field_review"


def review_call(complete: Complete[Any], output_type: Any, source: str,
                examples: Sequence[Example] = ()) -> FieldReview:
    """The ``FieldReview`` of ``complete``'s output, read from ``source`` (the
    text the call extracted from) as ``output_type``; ``examples``: the
    worked examples the call showed (their locators count as in
    extraction).

    Raises:
        InvalidExampleError: an example does not fit ``output_type``.
    """
    locators = learn_locators(check_examples(examples, output_type), output_type) if examples \
        else {}
    spans = {k: list(v) for k, v in complete.spans.items()}
    held = held_fields(output_type, complete.output, source, spans)
    cut = list_cuts(output_type, complete.output, source, spans, locators)
    probs = complete.message.metadata.get(FIELD_PROBS) or {}
    confidence, ungrounded = field_confidence(complete.output, source, spans, locators, held,
                                              probs, cut)
    confidence = with_repeats(confidence, repeated_items(complete.output, source))
    return FieldReview(confidence, needs_review(confidence), ungrounded)


async def with_review(events: AsyncIterable[Event], output_type: Any, source: str,
                      examples: Sequence[Example] = ()) -> AsyncIterator[Event | FieldReview]:
    """``events`` with a ``FieldReview`` just before each ``Complete`` that has
    an output (``review_call``)."""
    async for event in events:
        if isinstance(event, Complete) and event.output is not None:
            yield review_call(event, output_type, source, examples)
        yield event
