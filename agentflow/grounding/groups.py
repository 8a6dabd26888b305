"""INI-style groups: the ``[Group]`` header lines a document's keys sit under.

Many key-value formats split a document into groups, each opened by a
**group line**: a line that is one bracketed name and nothing else
(``[Desktop Entry]`` and ``[Desktop Action new]`` of a freedesktop
``.desktop`` file, ``[Unit]`` / ``[Service]`` / ``[Install]`` of a systemd
unit, ``[remote "origin"]`` of a git config, ``[tool.poetry]`` and the
array table ``[[bin]]`` of TOML). The same key means different things in
different groups: ``Exec=`` of a ``.desktop`` file's ``[Desktop Action
new]`` is not the application's command. A learned locator
(``agentflow.grounding.locators``) whose every worked example writes the
field under the same group line reads only inside groups of that name
(``Locator.group``): a document whose group lacks the key but whose other
group writes it gives the rule nothing there, never the other group's
value.

A group line begins at the line's start (no indentation: a Debian
changelog's ``  [ Jane Doe ]`` names a maintainer, not a group), holds one
name in single or double brackets with no bracket inside, and may end with
a ``#`` or ``;`` comment. Its **key** (``group_key``) is that line with
whitespace and letter case folded (``[desktop entry]``). A group runs from
its line up to the next group line (any name) or the text's end; lines
before the first group line are in no group. A text with no group line at
all is one that does not write groups (a flat ``key=value`` file, a
document chunk inside one group): it is read whole (``in_group``).

A group line may name an instance of a kind of group: git config's
``[submodule "vendor/fmt"]``, ``[remote "origin"]`` write the kind's word and
the instance's name in quotes. The group's **kind** (``group_kind``) is its
key with each quoted name read as ``"*"`` (``[submodule "*"]``): a rule whose
examples write the field under different groups of one kind reads inside
every group of that kind (``in_group`` with a kind), never another kind's
(``url =`` of an ``[lfs]`` group is no submodule's).
"""

from __future__ import annotations

import functools
import re

__all__ = ["group_key", "group_kind", "group_of", "in_group"]

_GROUP_LINE = re.compile(r"(\[\[?)([^\[\]\n]+)(\]\]?)[ \t]*(?:[#;][^\n]*)?\r?\Z")


def group_key(line: str) -> str:
    """The key of ``line`` read as a group line (see the module docstring):
    ``[desktop entry]`` of ``[Desktop  Entry]``; ``""`` when it is none."""
    match = _GROUP_LINE.match(line)
    if match is None or len(match.group(1)) != len(match.group(3)) or not match.group(2).strip():
        return ""
    return " ".join(line[: match.end(3)].split()).casefold()


_QUOTED = re.compile(r'"[^"\n]*"')


def group_kind(key: str) -> str:
    """The kind of group key ``key`` (see the module docstring): each quoted
    name read as ``"*"`` (``[submodule "*"]`` of ``[submodule "vendor/fmt"]``);
    ``""`` where ``key`` names no instance (``[desktop entry]``: its kind is
    itself)."""
    kind = _QUOTED.sub('"*"', key)
    return kind if kind != key else ""


def group_of(text: str, at: int) -> str:
    """The key of the group that offset ``at`` of ``text`` lies in: that of the
    nearest group line that begins at or before it; ``""`` where none does."""
    stop = text.find("\n", at)
    for line in reversed(text[: len(text) if stop < 0 else stop].split("\n")):
        key = group_key(line) if line[:1] == "[" else ""
        if key:
            return key
    return ""


@functools.lru_cache(maxsize=16)
def in_group(text: str, key: str) -> str:
    """``text`` with every line outside the groups of key ``key`` blanked
    (each character but a line break replaced by a space: offsets and line
    numbers are unchanged), their group lines kept (``key`` a kind, ``[submodule
    "*"]``: every group of that kind, ``group_kind``); ``text`` itself when it
    has no group line (see the module docstring). Kept for the last texts:
    a grouped rule reads one document several times (its values, an empty
    label, a line that runs on, a value below its label)."""
    lines = text.split("\n")
    keys = [group_key(line) if line[:1] == "[" else "" for line in lines]
    if not any(keys):
        return text
    out = []
    inside = False
    for line, found in zip(lines, keys, strict=True):
        if found:
            inside = found == key or group_kind(found) == key
        out.append(line if inside else " " * len(line))
    return "\n".join(out)
