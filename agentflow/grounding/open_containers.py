"""Which containers are open where each line's content begins.

A document that says what a line belongs to by its punctuation, not its
indentation (JSON's braces and brackets, ``agentflow.grounding.brackets``;
markup's tags, ``agentflow.grounding.markup``), is read the same way
whatever its format: walk its tokens in order, and at the start of each
line's content ask which containers are open (``line_paths``). What a token
opens or closes, and what a line that begins by closing one is inside, is
the format's (its ``Opener``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

__all__ = ["Opener", "line_paths"]


class Opener(Protocol):
    """A format's reading of its tokens: the containers open so far."""

    def step(self, token: re.Match[str]) -> None:
        """Take ``token`` (the next in the document): open or close what it
        opens or closes."""

    def path(self, head: re.Match[str] | None, at: int) -> tuple[str, ...]:
        """The names of the containers open now, nearest first, for a line
        whose content begins at offset ``at`` with ``head`` (``None``: with
        no token): one that begins by closing a container is outside it, and
        so is one after a container that ends before ``at`` (markup's
        ``<x .../>`` written over lines: its attribute lines are inside it)."""


def line_paths(lines: Sequence[str], tokens: Sequence[re.Match[str]],
               opener: Opener) -> tuple[tuple[str, ...], ...]:
    """For each of ``lines``, the containers open where its content begins
    (``opener.path``), after ``opener`` has taken every token of
    ``tokens`` (found in ``"\\n".join(lines)``, in order) that starts
    before it; a blank line: those of the line before it."""
    out: list[tuple[str, ...]] = []
    k = at = 0
    for line in lines:
        begin = at + len(line) - len(line.lstrip())
        at += len(line) + 1
        if not line.strip():
            out.append(out[-1] if out else ())
            continue
        while k < len(tokens) and tokens[k].start() < begin:
            opener.step(tokens[k])
            k += 1
        head = tokens[k] if k < len(tokens) and tokens[k].start() == begin else None
        out.append(opener.path(head, begin))
    return tuple(out)
