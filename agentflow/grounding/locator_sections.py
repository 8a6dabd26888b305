"""A single value written above a config's keyword sections, and a
document's value found only inside one.

Formats such as sshd_config and ssh_config write their global settings
first, then **sections** opened by a keyword line (``Match Group
admins``, ``Host build``) whose settings hold only for what the line
matches. Nothing but the keyword line ends the global part: sshd needs no
indentation, and guides append ``Match Group sftp`` / ``ChrootDirectory
/home`` flush left. A rule learns the keyword (``learn_section``,
``Locator.section``) where every example that fills the field and writes
a section line writes its value above the first, and an example shows
the line opens a section: the next line that is no blank line or comment
is indented deeper than it (its settings, as sshd_config(5) writes them).
On a document that writes such a line, at any indentation, a value the
rule finds only below the first (``below_section_only``) is a section's,
not the global one: it is offered beside null, never pinned
(``agentflow.grounding.locator_records.later_record_only``).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.grounding.lines import indent_of
from agentflow.grounding.locator_places import example_value
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.sibling_blocks import head_word
from agentflow.grounding.void_blocks import live_text
from agentflow.output.examples import CheckedExample

__all__ = ["below_section_only", "learn_section"]

_RUNS_ON = tuple("{[(:,\\")


def _opens_section(lines: Sequence[str], i: int) -> bool:
    """Whether ``lines[i]`` (a keyword line) has below it, as its next line
    that is no blank line or comment, a line indented deeper, and opens no
    bracketed block and runs on onto no line (it ends in none of ``{[(:,\\``:
    a brace block's ``resource "aws_instance" "a" {`` ends with its ``}``)."""
    if lines[i].rstrip()[-1:] in _RUNS_ON:
        return False
    for line in lines[i + 1:]:
        if line.strip() and not line.lstrip().startswith(("#", ";")):
            return indent_of(line) > indent_of(lines[i])
    return False


def _first_line(lines: Sequence[str], word: str) -> int | None:
    """The index of the first of ``lines`` that begins with keyword ``word``
    (``agentflow.grounding.sibling_blocks.head_word``), or ``None``."""
    return next((i for i, line in enumerate(lines) if head_word(line.rstrip("\r\n")) == word),
                None)


def learn_section(rule: Locator, examples: Sequence[CheckedExample]) -> str:
    """The keyword of the section lines the examples show a single-value
    ``rule``'s value above (see the module docstring), or ``""``."""
    filled = [e for e in examples if example_value(e, rule.field)]
    if rule.many or not filled or rule.group or rule.heading:
        return ""
    texts = [live_text(e.text).splitlines(keepends=True) for e in filled]
    words = {word for lines in texts for i, line in enumerate(lines)
             if (word := head_word(line.rstrip("\r\n"))) and _opens_section(lines, i)}
    for word in sorted(words):
        firsts = [(lines, _first_line(lines, word)) for lines in texts]
        if all(i is None or rule.values("".join(lines[:i])) for lines, i in firsts):
            return word
    return ""


def below_section_only(rule: Locator, source: str) -> bool:
    """Whether ``rule`` (a learned ``section``) finds a value in ``source``
    but none above its first section line (a document that writes none:
    ``False``)."""
    if not rule.section:
        return False
    live = live_text(source)
    lines = live.splitlines(keepends=True)
    first = _first_line(lines, rule.section)
    if first is None:
        return False
    return not rule.values(source[:sum(map(len, lines[:first]))]) and bool(rule.values(source))
