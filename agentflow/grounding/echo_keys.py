"""Other keys every example writes a value after: the value's echoes.

An example may write its value after two keys (a Kubernetes workload's
``name: shop`` and its ``app: shop`` label; a package's ``Name:`` and its
``Source:``): a rule learned from one of them holds on every example, and
the examples cannot tell whether its key is the field's or only agrees with
it there by the habit of their authors. A rule from the other key's place
may not hold (``name:`` of a Service before the Deployment), so it is no
twin (``agentflow.grounding.locator_twins``); the key is kept as an
**echo** (``Locator.echoes``, ``echo_keys``): on a document that writes
that key but never with the value the rule reads (``app: media`` beside
``name: thumbnailer``), the rule's value may be the coincidence's, and the
field is not pinned (``echo_differs``, asked by ``Locator.twins_agree``).
A document that does not write the key says nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["echo_differs", "echo_keys", "keyed_values"]

_KEYED = re.compile(r"[ \t]*(?:-[ \t]+)?[\"']?([^\W\d][\w.-]*)[\"']?[ \t]*[:=][ \t]*(.*?)[ \t]*\Z")
"""A line that begins with a key (bare or quoted, also a list item's first:
``- name: web``) and the text after it."""
_EDGES = " \t,;\"'"


def keyed_values(text: str) -> dict[str, set[str]]:
    """Each key ``text``'s lines begin with (letter case folded) -> the values
    written after it, whitespace folded, less quotes and a trailing ``,``."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        m = _KEYED.match(line)
        if m is not None:
            value = " ".join(m.group(2).strip(_EDGES).split())
            out.setdefault(m.group(1).casefold(), set()).add(value)
    return out


def echo_keys(values: Sequence[tuple[str, str]], own: Sequence[str]) -> tuple[str, ...]:
    """The keys every example (``values``: each one's text and its single
    value) writes its value after, less the rule's ``own`` keys (letter case
    folded); ``()`` for fewer than two examples."""
    if len(values) < 2:
        return ()
    common: set[str] | None = None
    for text, value in values:
        folded = " ".join(value.split())
        keys = {k for k, vs in keyed_values(text).items() if folded in vs}
        common = keys if common is None else common & keys
    return tuple(sorted((common or set()) - {k.casefold() for k in own}))


def echo_differs(keys: Sequence[str], value: str, text: str) -> bool:
    """Whether ``text`` writes one of ``keys`` with values, never ``value``
    (whitespace folded, quotes and a trailing ``,`` aside)."""
    if not keys:
        return False
    written = keyed_values(text)
    folded = " ".join(value.strip(_EDGES).split())
    return any(written.get(k) and folded not in written[k] for k in keys)
