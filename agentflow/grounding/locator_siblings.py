"""Which record kind a rule's examples show its value in, and a document's
value found only past the first record of that kind.

A single-value rule learns the **record kind** (``agentflow.grounding.
sibling_blocks``: the blocks under ``services:``, the ``Host`` blocks of an
ssh_config, the ``[remote "*"]`` groups of a git config, the ``---``
documents of a stream) its examples show the value in (``learn_record``,
``Locator.record``): every example that fills the field writes its value
inside the first record of that kind (not before it), and the examples
show the kind's blocks are records, not fixed keys of the format: the
first record's name differs from example to example (``web:`` and ``db:``
under ``services:``, but never a ``metadata:`` every example writes), or
an example writes two of them (``head``, ``group``: of different names;
YAML blocks: two that share a key; ``doc``, ``element``, ``array``: two
at all: an RSS feed's ``<item>``s, a release's ``assets``). On a document of several records of
that kind where the rule finds the value only past the first
(``later_sibling_only``: the first service only ``build:``s, the second
sets ``image:``), the value is another record's: the grammar offers null
beside it and it is never pinned (``agentflow.grounding.locator_offer``,
``agentflow.extraction.confidence``). Where the rule finds one value in the
first record and others in later ones (``first_sibling_alone``: each
service its own ``image:``), the first record's is the one meant where an
example shows so (``Locator.several``: its services' images differ): the
rule may pin it (a workflow's ``- uses:`` of its first job, where no
example writes two jobs, is not).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.grounding.brace_records import kind_spans, opener_words
from agentflow.grounding.locator_places import example_value
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.sibling_blocks import INSIDE, record_kinds, record_spans, share_keys
from agentflow.grounding.void_blocks import live_text
from agentflow.output.examples import CheckedExample

__all__ = ["first_sibling_alone", "first_values", "later_differs", "later_sibling_only",
           "learn_record"]


def _shown(rule: Locator, text: str, kind: str) -> tuple[int, str, int, bool] | None:
    """Where ``text`` (an example) writes ``rule``'s value inside its first
    record of ``kind``: the record's first line, its name, how many records
    of the kind it writes, and whether two of them share a key line's key;
    ``None`` where it does not (no such record, or the value before it or
    past it)."""
    lines = live_text(text).splitlines(keepends=True)
    spans = record_spans(lines, kind)
    if not spans:
        return None
    start, end, name = spans[0]
    if _own_values(rule, "".join(lines[:start])) or not _own_values(rule, "".join(lines[:end])):
        return None
    return start, name, len(spans), share_keys(lines, spans)


def learn_record(rule: Locator, examples: Sequence[CheckedExample]) -> str:
    """The record kind the examples show a single-value ``rule``'s value in
    (see the module docstring): a kind of brace block where one is shown
    (``_braces_apart``; the one whose first block begins first, of two
    there its keyword and label before its keyword alone; then of the
    kinds inside that block, the innermost its examples also show the
    value in the first of: ``server > location``), else the one whose first
    record begins first in the first example that fills the field; ``""``
    where none does."""
    filled = [e for e in examples if example_value(e, rule.field)]
    if rule.many or not filled:
        return ""
    shown_in: list[tuple[tuple[bool, int, int], str]] = []
    for kind in record_kinds(live_text(filled[0].text).splitlines(keepends=True)):
        shown = [_shown(rule, e.text, kind) for e in filled]
        if any(s is None for s in shown):
            continue
        seen = [s for s in shown if s is not None]
        if kind.startswith("under "):  # a name, not a key every example writes
            records = len({s[1] for s in seen}) > 1 or any(s[2] > 1 and s[3] for s in seen)
        elif kind.startswith("brace "):
            records = _braces_apart(kind.partition(" ")[2], rule, filled)
        elif kind == "doc" or kind.startswith(("element ", "array ")):
            records = any(s[2] > 1 for s in seen)
        else:  # two records of differing names in one example
            records = any(len({name for *_, name in record_spans(
                live_text(e.text).splitlines(), kind)}) > 1 for e in filled)
        if records:
            shown_in.append(((not kind.startswith("brace "), seen[0][0], -len(kind.split(" "))),
                             kind))
    if not shown_in:
        return ""
    rank, best = min(shown_in)
    inside = [(start, f"{best}{INSIDE}{kind.partition(' ')[2]}")
              for (_, start, _), kind in shown_in if kind.startswith("brace ") and start > rank[1]]
    inside = [(start, kind) for start, kind in inside if best.startswith("brace ") and all(
        _shown(rule, e.text, kind) is not None for e in filled)]
    return max(inside)[1] if inside else best


def _braces_apart(kind: str, rule: Locator, filled: Sequence[CheckedExample]) -> bool:
    """Whether the examples show the brace blocks of ``kind``
    (``agentflow.grounding.brace_records.brace_kinds``) are the records
    ``rule``'s value is in, not merely the first block: of a keyword and
    its label (``resource "aws_instance"``), an example writes a block of
    the same keyword and another label (an ``aws_security_group``), and
    the label holds no example's value (``location /``: the field's own
    value, ``/``, no kind); of a keyword alone (``server``), an example
    writes two such blocks, or a block of another keyword, closed before
    its first (``upstream api {}``: not one around it, an ``http {``)."""
    want = kind.split(" ")
    for e in filled:
        lines = live_text(e.text).splitlines()
        openers = [(i, words) for i, line in enumerate(lines)
                   if (words := opener_words(line)) is not None]
        if len(want) > 1:
            value = " ".join(str(example_value(e, rule.field)).split()).strip("\"'")
            if value and value in want[1]:
                return False
            if any(w[0] == want[0] and len(w) > 1 and w[1] != want[1] for _, w in openers):
                return True
            continue
        spans = kind_spans(lines, kind)
        if len(spans) > 1 or any(
                w[0] != want[0] and any(a == i and b <= spans[0][0] for a, b, _ in kind_spans(
                    lines, w[0])) for i, w in openers if i < spans[0][0]):
            return True
    return False


def first_values(rule: Locator, source: str) -> list[str] | None:
    """What ``rule`` finds in ``source`` up to the end of the first record of
    its kind, where ``source`` writes several; else ``None``."""
    if not rule.record:
        return None
    lines = live_text(source).splitlines(keepends=True)
    spans = record_spans(lines, rule.record)
    if len(spans) < 2:
        return None
    # live_text keeps every offset, so the first record ends where its live lines do
    # (``source``'s own lines differ where a blanked comment held a \r or a \x0c)
    return _own_values(rule, source[:sum(map(len, lines[:spans[0][1]]))])


def _own_values(rule: Locator, text: str) -> list[str]:
    """What ``rule`` finds in ``text`` (a part of a document up to a record's
    start or end) at the depth and under the parents it learned: nothing
    where ``text`` writes its label only elsewhere (``Locator.off_depth``:
    the channel's ``<title>`` before the first ``<item>``, for an item's
    title)."""
    return [] if rule.off_depth(text) else rule.values(text)


def later_sibling_only(rule: Locator, source: str) -> bool:
    """Whether ``rule`` learned a record kind (``Locator.record``) finds values
    in ``source``, a document of several records of that kind, but none up
    to the end of the first: what it finds is a later record's. Of a brace
    block kind (``brace server``), whether it finds a value anywhere but
    first inside the first block of the kind (``_first_in_block``): in a
    block of another kind before it, in a later one, in a document that
    writes none of that kind (a Terraform ``module`` block's ``ami``)."""
    if rule.record.startswith("brace "):
        return bool(rule.values(source)) and not _first_in_block(rule, source)
    first = first_values(rule, source)
    return first is not None and not first and bool(rule.values(source))


def _first_in_block(rule: Locator, source: str) -> bool:
    """Whether ``rule`` (a brace block kind) finds a value inside the first
    block of its kind in ``source``, and none before it."""
    lines = live_text(source).splitlines(keepends=True)
    spans = record_spans(lines, rule.record)
    if not spans:
        return False
    start, end, _ = spans[0]
    return not _own_values(rule, source[:sum(map(len, lines[:start]))]) and bool(
        _own_values(rule, source[:sum(map(len, lines[:end]))]))


def first_sibling_alone(rule: Locator, source: str) -> bool:
    """Whether ``rule`` (a learned record kind, and ``several``: an example
    writes different values in two records, its value the first's) finds one
    value, however often written, up to the end of the first record of
    ``source``'s several: the value the examples show, whatever later records
    write."""
    if not rule.several:
        return False
    first = first_values(rule, source)
    return bool(first) and len({" ".join(v.split()) for v in first or []}) == 1


def later_differs(rule: Locator, text: str) -> bool:
    """Whether ``rule`` (a learned record kind) finds one value in the first
    of ``text``'s several records and another past it (an example's
    ``image:`` of each service)."""
    first = first_values(rule, text)
    if not first:
        return False
    folded = {" ".join(v.split()) for v in first}
    rest = rule.values(text)[len(first):]
    return len(folded) == 1 and any(" ".join(v.split()) not in folded for v in rest)
