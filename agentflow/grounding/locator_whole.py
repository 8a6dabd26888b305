"""Where a field's learned locator reads a value that cuts a token: its
edges are the rule's edges (``reads_at``).

The tokenizer (``agentflow.grounding.tokens``) keeps ``key=value`` words
whole on purpose (``urgency=medium``), so a value the examples show as whole
tokens (``Port 2222``) is refused where a document writes its label with an
``=`` (``Port=2022``: ``2022`` cuts the token ``Port=2022``). Where the
field's own locator reads exactly that value at exactly that place, the
place is whole by the rule's edges; anywhere else the whole-token check is
unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from agentflow.grounding.lines import line_around
from agentflow.grounding.locate import occurrences
from agentflow.grounding.tokens import cuts_token


class ReadingRule(Protocol):
    """What this module reads of a learned locator
    (``agentflow.grounding.locator_rule.Locator``; named here by its shape,
    as ``placing`` imports this module and the locator's modules import
    what imports ``placing``)."""

    @property
    def many(self) -> bool: ...

    def values(self, source: str, *, live: bool = True) -> list[str]: ...

__all__ = ["READ_KEY", "ReadAt", "ReadingRule", "read_cut", "read_tests", "reads_at"]

READ_KEY = "x-grounded-read"
"""JSON Schema key of a located string node (``agentflow.grounding.
locator_offer.apply_locators``): ``true`` where the value offered is one the
field's locator reads at a place that cuts a token (``read_cut``), so the
grammar offers it though it is no whole token of the source."""

ReadAt = Callable[[str, tuple[int, int]], bool]
"""A test of whether a value at a ``[start, end)`` span of the source is
where a field's locator reads it."""


def reads_at(rule: ReadingRule, value: str, source: str, span: tuple[int, int]) -> bool:
    """Whether ``rule`` (a single value's locator) reads ``value`` at ``span``
    of ``source``: the first value it reads in ``source`` is ``value``, it
    reads ``value`` on ``span``'s line alone, and that line writes ``value``
    only once (so the place is that one)."""
    return _test(rule, source)(value, span)


def read_cut(rule: ReadingRule, value: str, source: str) -> bool:
    """Whether ``value`` is no whole token anywhere in ``source`` while
    ``rule`` reads it at a place that cuts one (``reads_at``)."""
    every = occurrences(value, source)
    if not every or not all(cuts_token(source, *s) for s in every):
        return False
    test = _test(rule, source)
    return any(test(value, s) for s in every)


def read_tests(locators: Mapping[str, ReadingRule] | None, source: str) -> dict[str, ReadAt]:
    """Top-level field name -> its ``reads_at`` test on ``source``, for each
    single-value locator of ``locators`` (none: empty)."""
    out: dict[str, ReadAt] = {}
    for name, rule in (locators or {}).items():
        if not rule.many:
            out[name] = _test(rule, source)
    return out


def _test(rule: ReadingRule, source: str) -> ReadAt:
    """``reads_at`` of ``rule`` on ``source``, reading the rule's first value
    in the whole source once, the first time a place asks (a value may cut
    tokens at many places, each one tested)."""
    first: list[list[str]] = []  # [rule.values(source)[:1]] once read

    def test(value: str, span: tuple[int, int]) -> bool:
        if rule.many or source[span[0]:span[1]] != value:
            return False
        if not first:
            first.append(rule.values(source)[:1])
        if first[0] != [value]:
            return False
        lo, hi = line_around(source, span[0])
        line = source[lo:hi]
        if span[1] > hi or line.count(value) != 1:
            return False
        return rule.values(line)[:1] == [value]
    return test
