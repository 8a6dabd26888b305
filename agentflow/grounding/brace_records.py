"""Records written as brace blocks: a line that names the block and ends in
``{``, its lines, and a lone ``}`` that closes it.

Configuration formats write their records so, one after another, each
opened by a line of its own name: logrotate's stanzas (``/var/log/a.log
{``), nginx's ``location /a {`` and ``server {``, HCL's ``resource "x" "a"
{``, BIND's ``zone "a" {`` (closed by ``};``), dhcpd's ``host a {``, CSS
rules. The name differs from block to block (``agentflow.grounding.
locator_records._reopened`` wants the same opening line), and a block's
last line is a lone ``}``, no key line (``_blank_end`` wants one). A
**braced record** (``braced_end``) is a block opened at the top level (no
block open around it) by a line ending in ``{`` (its name on that line or
on the line above: ``{`` alone) and closed by a line that is a lone ``}``
(``};`` and ``},`` too), where another such block opens after it: the
first record ends with its closing line. Blocks inside it (an nginx
``server``'s ``location`` blocks) are its own, and a blank line inside an
open block ends no record (``open_depths``). A brace written inside a line
(``location / { return 404; }``, roff's ``\\{``, a ``${var}``) opens and
closes nothing here, nor does a JSON document's brace (``agentflow.
grounding.brackets``: its records are an array's items).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentflow.grounding.brackets import is_bracketed

__all__ = ["braced_end", "open_depths"]

_CLOSER = re.compile(r"[ \t]*\}[ \t]*[;,]?[ \t]*\Z")
"""A line that is a lone ``}`` (``};`` of BIND, ``},``)."""


def _opens(line: str) -> bool:
    """Whether ``line`` ends in a ``{`` that opens a block (never ``\\{``,
    ``${``), and begins by closing none (``} else {``)."""
    text = line.rstrip()
    return text.endswith("{") and text[-2:-1] not in ("\\", "$") and not text.lstrip(
        ).startswith("}")


def open_depths(lines: Sequence[str]) -> list[int]:
    """For each of ``lines``, how many brace blocks are open where it begins
    (a line opening one: those around it; a lone ``}``: those around the
    block it closes)."""
    out: list[int] = []
    depth = 0
    for line in lines:
        if _CLOSER.match(line.rstrip("\r\n")):
            depth = max(depth - 1, 0)
            out.append(depth)
            continue
        out.append(depth)
        if _opens(line):
            depth += 1
    return out


def braced_end(lines: Sequence[str]) -> int | None:
    """The index of the line after the lone ``}`` that closes the first
    block ``lines`` open at the top level, where another block opens at the
    top level after it (a braced record, see the module docstring); else
    ``None``."""
    if is_bracketed(lines):
        return None
    depth = 0
    end = None
    for i, line in enumerate(lines):
        if _CLOSER.match(line.rstrip("\r\n")):
            if depth == 1 and end is None:
                end = i + 1
            depth = max(depth - 1, 0)
        elif _opens(line):
            if not depth and end is not None:
                return end
            depth += 1
    return None
