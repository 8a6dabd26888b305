"""The grounding default of extraction (``extract_many``, ``agentflow
extract``): every free-text string field is copied from the document, as
whole tokens, with clean edges, unless the run's worked examples show
otherwise.

``extraction_marker(examples, output_type)`` starts from ``EXTRACTION_DEFAULT``
(``Grounded(whole_tokens=True, clean=True)``) and relaxes it where an
example's own value breaks a rule: an example value that cuts a token of its
text (``Smith`` out of ``Smith-Jones``) drops ``whole_tokens``; one that
begins or ends with a separator, or with its line's label
(``agentflow.grounding.edges``), drops ``clean``. The rules come from the
schema's examples, never from a document kind. A field opts out with
``Derived()``, a run with ``ground=False`` (``--no-ground``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from agentflow.grounding import Grounded, check_grounding, grounded_values
from agentflow.output.examples import Example, check_examples

__all__ = ["EXTRACTION_DEFAULT", "extraction_marker"]

EXTRACTION_DEFAULT = Grounded(whole_tokens=True, clean=True)
"""The marker extraction applies to every free-text string field not marked
itself (before the examples relax it)."""


def extraction_marker(examples: Sequence[Example] | None, output_type: Any,
                      base: Grounded = EXTRACTION_DEFAULT) -> Grounded:
    """``base``, less each rule an example's value breaks (see the module
    docstring). Examples that do not validate are left to ``check_examples``
    (the caller's), which names what is wrong.

    Returns:
        The marker to ground every unmarked free-text string with.
    """
    if not examples:
        return base
    plain = dataclasses.replace(base, whole_tokens=False, clean=False)
    try:
        checked = check_examples(examples, output_type, plain)
    except Exception:  # reported by the caller's own check, with the example named
        return base
    marker = base
    for example in checked:
        values = grounded_values(example.value, output_type, marker)
        check = check_grounding(values, example.text)
        if check.cut and marker.whole_tokens:
            marker = dataclasses.replace(marker, whole_tokens=False)
        if check.unclean and marker.clean:
            marker = dataclasses.replace(marker, clean=False)
        if marker.whole_tokens or marker.clean:
            again = check_grounding(grounded_values(example.value, output_type, marker),
                                    example.text)
            if again.cut:
                marker = dataclasses.replace(marker, whole_tokens=False)
            if again.unclean:
                marker = dataclasses.replace(marker, clean=False)
    return marker
