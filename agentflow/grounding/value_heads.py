"""The head every example's value begins with, where the label holds others.

A learned locator reads whatever its label is followed by. Where an example
writes the rule's label again with another value that is not the field's
(a workflow's ``- uses: actions/setup-python@v5`` after the ``- uses:
actions/checkout@v4`` its ``checkout`` field holds), the label alone does not
say which of its values is the field's; the examples' values may: each
begins with the same **head** (``actions/checkout@``), a run of text up to
and including a punctuation mark, with a word of two letters or more in it
and no whitespace. A value the rule finds without that head (a document
whose first ``- uses:`` is ``actions/setup-node@v4``) may be another thing
the label holds: the rule then does not pin it (``Locator.pins``; it is
scored as if the field had no rule, so it needs review); the grammar still
offers it. Learned only from two values at least, and only where an
example's label holds a value without the head (``value_head``): one value,
or a label written once a document, is no evidence of what the field's
values begin with.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentflow.grounding.locator_places import common_start

__all__ = ["value_head"]

_WORD = re.compile(r"[^\W\d_]{2}")


def value_head(values: Sequence[str], others: Sequence[str]) -> str:
    """The head every one of ``values`` (a field's example values, two at
    least) begins with, letter case ignored, where some of ``others`` (the
    other values the rule reads in the examples) does not begin with it;
    ``""`` where there is none (see the module docstring)."""
    if len(values) < 2:
        return ""
    common = common_start([v.strip().casefold() for v in values])
    common = common.split(maxsplit=1)[0] if common.strip() else ""
    ends = [i for i, c in enumerate(common) if not c.isalnum()]
    head = common[:ends[-1] + 1] if ends else ""
    if not _WORD.search(head):
        return ""
    return head if any(not o.casefold().startswith(head.casefold()) for o in others) else ""
