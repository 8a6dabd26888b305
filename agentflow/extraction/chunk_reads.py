"""Which chunks of a long document a field's learned rule reads it in.

A long document is read chunk by chunk (``agentflow.extraction.chunked``),
and each chunk answers every field: a chunk that does not write a field
still guesses one (the name of a dependency for a package's ``name``, a
script for its ``main``), and under the merge's ``first`` rule that guess
conflicts with the right value of the chunk that writes the field, or wins
over it when it comes first. Where the field has a learned locator
(``agentflow.grounding.locators``), the rule tells the chunks apart: a chunk
**reads** the field when the rule, run on the chunk's text, finds one of
the values it finds in the whole document (the whole document, not the
chunk alone, says which values are the field's: a chunk that begins inside
a nested object has its own depths wrong, and reads a nested ``version``
as the top-level one), in the whole document's first record where the
rule learned its value is the first record's (``agentflow.grounding.
locator_records.record_values``: the first Atom entry's ``<link>``, never
the second's, which a later chunk reads alone); where the rule finds no value in the whole
document, a chunk reads the field when its text writes the rule's label
(``Locator.label_written``: the label with an empty value, or a value of
another kind). Where some chunk reads the field and answers it, only such
chunks vote on it (``merge.ChunkOutput.reads``); the others neither win
nor conflict. A field no chunk reads (no rule, or a rule that reads
nothing anywhere) is merged as before. Lists are never narrowed: a list's
items run on into chunks that do not write its label. A chunk that reads a
field by value is also offered that value (``ChunkReads.located``, the chunk
message's ``output_checks.LOCATED_KEY``): on the embedded model the grammar
of a chunk that begins inside a nested object would otherwise offer nothing
for a top-level key it reads at the wrong depth (a package's ``main``
written after its ``scripts``).
"""

from __future__ import annotations

from collections.abc import Mapping

from agentflow.grounding.locator_records import record_values
from agentflow.grounding.locator_rule import Locator

__all__ = ["ChunkReads"]


def _fold(value: str) -> str:
    """``value`` with each run of whitespace as one space (``folding.same_text``'s form)."""
    return " ".join(value.split())


class ChunkReads:
    """The scalar fields each chunk of one document reads (see the module docstring).

    Args:
        locators: the run's learned locators (field name -> rule).
        text: the whole document.
    """

    def __init__(self, locators: Mapping[str, Locator], text: str) -> None:
        self._rules = {name: rule for name, rule in locators.items()
                       if not rule.many and not rule.number}  # (strings offered: text fields)
        self._whole = {name: {_fold(v) for v in record_values(rule, text)}
                       for name, rule in self._rules.items()}
        self._labelled = {name for name, rule in self._rules.items()
                          if not self._whole[name] and rule.label_written(text)}

    def located(self, piece: str) -> dict[str, str]:
        """Field -> the value to offer in the chunk whose text is ``piece``:
        for each field it reads by value, the first value the rule reads in
        the chunk that it also reads in the whole document (the chunk alone
        may read it at a depth or outside a group the examples never show,
        and so offer nothing: ``output_checks.LOCATED_KEY``)."""
        out: dict[str, str] = {}
        for name, rule in self._rules.items():
            whole = self._whole[name]
            found = next((v for v in rule.values(piece) if _fold(v) in whole), None) if (
                whole) else None
            if found is not None:
                out[name] = found
        return out

    def __call__(self, piece: str) -> frozenset[str]:
        """The fields the chunk whose text is ``piece`` reads."""
        return frozenset(name for name, rule in self._rules.items() if (
            any(_fold(v) in self._whole[name] for v in rule.values(piece)) if self._whole[name]
            else name in self._labelled and rule.label_written(piece)))
