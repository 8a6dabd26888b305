"""Records a document writes as sibling blocks, not as paragraphs.

``agentflow.grounding.locator_records`` knows a record as a run of lines
between blank lines, or a block opened by a line the document writes
again. Config formats write records as **sibling blocks** too, with or
without blank lines between them, each opened by a line that names it.
A **record kind** (``record_kinds``: every kind a text writes one of) is
one of:

* ``under D KEY``: the blocks nested under one mapping key (YAML: a
  docker-compose file's ``services:`` each service, a GitHub Actions
  workflow's ``jobs:`` each job): each line one level inside the first
  line at depth ``D`` (``agentflow.grounding.depths``) that is ``KEY:``
  alone, itself a key alone (``web:``), opens one;
* ``head WORD``: the lines that begin with one keyword and an argument
  (ssh_config's ``Host build-server`` ... ``Host backup``; not a ``key:``
  or ``key=`` line, nor a long line of prose) each open one;
* ``group KIND``: INI-style group lines of one kind (``agentflow.
  grounding.groups``: ``[remote "origin"]`` and ``[remote "fork"]``,
  TOML's ``[[bin]]`` array tables) each open one;
* ``brace KIND``: the brace blocks of one kind (``agentflow.grounding.
  brace_records.kind_spans``: ``brace server``, ``brace resource
  "aws_instance"``), each from its opening line to its closing ``}``, at
  any depth, whatever blocks of other kinds come between them; ``brace
  OUTER > INNER``: the blocks of kind ``INNER`` inside the first block of
  kind ``OUTER`` (``brace server > location``);
* ``doc``: the documents of a stream between ``---`` lines (Kubernetes
  manifests), each one that holds a line that is no comment;
* ``element PATH``: in a markup document (``agentflow.grounding.markup``),
  the elements of one path (``rss/channel/item``: an RSS feed's items, a
  pom's ``project/dependencies/dependency``, a ``.csproj``'s empty
  ``<PackageReference .../>``s), each from its start tag to its end tag
  (``markup.element_spans``), whatever the blank lines or indentation
  between them;
* ``array PATH``: in a JSON document (``agentflow.grounding.brackets``),
  the items of the arrays of one path (``assets``: a release's assets),
  each from its opening brace to its closing one
  (``brackets.item_spans``), whatever the indentation.

``agentflow.grounding.locator_siblings`` learns which kind a rule's examples
show its value in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentflow.grounding.brace_records import brace_kinds, kind_spans
from agentflow.grounding.brackets import is_bracketed, item_spans
from agentflow.grounding.depths import line_depths
from agentflow.grounding.groups import group_key, group_kind
from agentflow.grounding.lines import KEY_LINE
from agentflow.grounding.markup import element_spans, is_markup

__all__ = ["INSIDE", "head_word", "record_kinds", "record_spans", "record_words", "share_keys"]

_BLOCK_KEY = re.compile(r"[ \t]*([^\s#:\-\[{\"'][^:#]*?|\"[^\"\n]+\"|'[^'\n]+'):"
                        r"[ \t]*(?:&\S+[ \t]*)?(?:#.*)?\r?\Z")
"""A YAML key alone on its line (``web:``, ``app: &defaults``): it opens a block."""
_HEAD = re.compile(r"[ \t]*([^\W\d][\w-]*)[ \t]+\S")
"""A line that begins with a keyword and an argument (``Host build-server``)."""
_MAX_HEAD_WORDS = 5  # a header line is short: a keyword and a few patterns, not prose
_SEPARATOR = "---"
INSIDE = " > "
"""Between two brace block kinds: blocks of the second inside the first's first block."""


def record_spans(lines: Sequence[str], kind: str) -> list[tuple[int, int, str]]:
    """``[start, end)`` line indexes and name of each record of ``kind`` (see
    the module docstring) in ``lines``, in order; ``[]`` where ``lines`` write
    none. ``lines`` keep their line ends or not."""
    what, _, arg = kind.partition(" ")
    if what == "under":
        depth, _, key = arg.partition(" ")
        return _under(lines, int(depth), key)
    if what == "head":
        starts = [(i, _head_name(line)) for i, line in enumerate(lines) if head_word(line) == arg]
    elif what == "group":
        starts = [(i, key) for i, line in enumerate(lines)
                  if (key := group_key(line.rstrip("\r\n"))) and (group_kind(key) or key) == arg]
    elif what == "brace":
        return _brace_spans(lines, arg)
    elif what == "doc":
        return _documents(lines)
    elif what == "element":
        bare = [line.rstrip("\r\n") for line in lines]
        return [(a, b, "") for path, a, b in element_spans(bare) if path == arg] if (
            is_markup(bare)) else []
    elif what == "array":
        bare = [line.rstrip("\r\n") for line in lines]
        return [(a, b, "") for path, a, b in item_spans(bare) if path == arg] if (
            is_bracketed(bare)) else []
    else:
        return []
    if not starts:
        return []
    ends = [i for i, _ in starts[1:]] + [len(lines)]
    return [(i, end, name) for (i, name), end in zip(starts, ends, strict=True)]


def _brace_spans(lines: Sequence[str], kind: str) -> list[tuple[int, int, str]]:
    """The blocks of brace block ``kind``; of ``OUTER > INNER``, the blocks
    of kind ``INNER`` inside the first block of kind ``OUTER`` (the
    ``location`` blocks of the first ``server``)."""
    outer, nested, inner = kind.partition(INSIDE)
    spans = kind_spans(lines, outer)
    if not nested or not spans:
        return spans
    a, b, _ = spans[0]
    return [(a + s, a + e, name) for s, e, name in kind_spans(lines[a:b], inner) if s]


def _under(lines: Sequence[str], depth: int, key: str) -> list[tuple[int, int, str]]:
    """The blocks one level under the first line at ``depth`` whose key alone
    is ``key`` (``services:``): each opened by a key alone."""
    depths = line_depths([line.rstrip("\r\n") for line in lines])
    parent = next((i for i, line in enumerate(lines) if depths[i] == depth and (
        m := _BLOCK_KEY.match(line.rstrip("\r\n"))) and m.group(1).strip() == key), None)
    if parent is None:
        return []
    starts: list[tuple[int, str]] = []
    end = len(lines)
    for i in range(parent + 1, len(lines)):
        line = lines[i].rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if depths[i] <= depth:
            end = i
            break
        if depths[i] == depth + 1 and (m := _BLOCK_KEY.match(line)):
            starts.append((i, m.group(1).strip()))
    if not starts:
        return []
    ends = [i for i, _ in starts[1:]] + [end]
    return [(i, e, name) for (i, name), e in zip(starts, ends, strict=True)]


def head_word(line: str) -> str:
    """The keyword ``line`` begins with as a header line (``host`` of ``Host
    x``), letter case folded; ``""`` where it is none (a ``key:`` or
    ``key=`` line, a long line of prose)."""
    m = _HEAD.match(line)
    if m is None or KEY_LINE.match(line) or len(line.split()) > _MAX_HEAD_WORDS:
        return ""
    return m.group(1).casefold()


def _head_name(line: str) -> str:
    """A header line's argument(s), whitespace folded."""
    return " ".join(line.split()[1:])


def _documents(lines: Sequence[str]) -> list[tuple[int, int, str]]:
    """The documents between ``---`` lines that hold a line that is no comment."""
    cuts = [i for i, line in enumerate(lines) if line.strip() == _SEPARATOR]
    if not cuts:
        return []
    bounds = zip([0, *(c + 1 for c in cuts)], [*cuts, len(lines)], strict=True)
    return [(a, b, "") for a, b in bounds if any(
        line.strip() and not line.lstrip().startswith("#") for line in lines[a:b])]


def record_kinds(lines: Sequence[str]) -> list[str]:
    """Every record kind ``lines`` write at least one record of."""
    out: list[str] = []
    depths = line_depths([line.rstrip("\r\n") for line in lines])
    for i, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        if (m := _BLOCK_KEY.match(bare)) is not None:
            out.append(f"under {depths[i]} {m.group(1).strip()}")
        if word := head_word(bare):
            out.append(f"head {word}")
        if key := group_key(bare):
            out.append(f"group {group_kind(key) or key}")
    if any(line.strip() == _SEPARATOR for line in lines):
        out.append("doc")
    out += [f"brace {kind}" for kind in brace_kinds(lines)]
    rows = [line.rstrip("\r\n") for line in lines]
    if is_markup(rows):
        out += [f"element {path}" for path, _, _ in element_spans(rows)]
    elif is_bracketed(rows):
        out += [f"array {path}" for path, _, _ in item_spans(rows)]
    return list(dict.fromkeys(out))


def share_keys(lines: Sequence[str], spans: list[tuple[int, int, str]]) -> bool:
    """Whether two of the records ``spans`` hold a key line of the same key."""
    keys = [{m.group(1).casefold() for line in lines[a + 1:b] if (m := KEY_LINE.match(line))}
            for a, b, _ in spans]
    return any(keys[i] & keys[j] for i in range(len(keys)) for j in range(i + 1, len(keys)))


def record_words(kind: str) -> str:
    """``kind`` in words, for a rule's description: ``the first block under
    'services:'``."""
    what, _, arg = kind.partition(" ")
    if what == "under":
        return f"the first block under {arg.partition(' ')[2] + ':'!r}"
    if what == "head":
        return f"the first block opened by {arg!r}"
    if what == "group":
        return f"the first group {arg!r}"
    if what == "brace":
        outer, nested, inner = arg.partition(INSIDE)
        words = f"the first block {outer + ' {'!r}"
        return f"the first block {inner + ' {'!r} of {words}" if nested else words
    if what == "element":
        return f"the first element {arg!r}"
    if what == "array":
        return f"the first item of {arg!r}" if arg else "the first item of the outer array"
    return "the first '---' document"
