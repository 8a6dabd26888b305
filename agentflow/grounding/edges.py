"""Clean edges: a grounded value under ``Grounded(clean=True)`` neither
begins nor ends with separator punctuation, nor begins with the label of its
line (``agentflow.grounding`` documents the rule).

* **Separator punctuation**: a value (less its outer whitespace) may not
  begin with ``START`` (``: ; , =`` or a closing bracket) nor end with
  ``END`` (``: ; , =`` or an opening bracket). ``: 4.16.0`` out of
  ``Version: 4.16.0`` begins with the separator after its label.
* **A label**: a value that begins where its line's content begins, with
  one to four words and a colon followed by whitespace (``Version: 4.16.0``,
  ``Author-email: Jane <j@x.org>``), begins with that line's label.

The rule is general (no document kind is named); whether a run applies it is
decided from its worked examples (``agentflow.extraction.defaults``): a run
whose examples show such a value does not.
"""

from __future__ import annotations

import re

from agentflow.grounding.lines import line_spans

__all__ = ["END", "START", "clean_edges", "cuts_edges", "edge_problem", "label_at"]

START = ":;,=)]}"
"""Characters a clean value never begins with."""
END = ":;,=([{"
"""Characters a clean value never ends with."""


def clean_edges(value: str) -> str:
    """``value`` stripped, less the separator punctuation at its edges
    (``START`` at its start, ``END`` at its end; ``Acme Ltd.,`` is ``Acme
    Ltd.``): the form ``Grounded(clean=True)`` takes (``""`` when nothing is
    left)."""
    text = value.strip()
    while text and (text[-1] in END or text[0] in START):
        text = (text[:-1] if text[-1] in END else text[1:]).strip()
    return text


def cuts_edges(value: str) -> bool:
    """Whether ``clean_edges`` takes anything but whitespace off ``value``
    (``TODO list for 2.0:`` loses its ``:``)."""
    return clean_edges(value) != value.strip()


_LABEL = re.compile(r"[^\W\d][\w.-]*(?: [\w.-]+){0,3}:[ \t]+(?=\S)")


def label_at(text: str) -> str | None:
    """The label (``Version: ``) that ``text`` begins with, or ``None``."""
    match = _LABEL.match(text)
    return match.group(0) if match else None


def edge_problem(value: str, source: str, span: tuple[int, int]) -> str | None:
    """Why ``value`` (found at ``span`` of ``source``) has an unclean edge
    (for the message the model reads back), or ``None`` when it has none."""
    text = value.strip()
    if not text:
        return None
    if text[0] in START:
        return f"begins with {text[0]!r}, the separator before the value"
    if text[-1] in END:
        return f"ends with {text[-1]!r}, a separator after the value"
    label = label_at(text)
    if label is not None and _starts_line(source, span[0]):
        return f"begins with the label {label.strip()!r} of its line"
    return None


def _starts_line(source: str, at: int) -> bool:
    """Whether offset ``at`` of ``source`` is where its line's content begins
    (after indentation and a list marker: ``agentflow.grounding.lines``)."""
    lo = source.rfind("\n", 0, at) + 1
    hi = source.find("\n", at)
    line = source[lo:] if hi < 0 else source[lo:hi]
    return any(lo + s == at for s, _ in line_spans(line))
