"""Schema for a long document: the whole history of a Debian package changelog.

    agentflow extract --schema examples/debian_changelog_history.py:ChangelogHistory \\
        --input /usr/share/doc/tmux/changelog.Debian.gz --out history.jsonl

A changelog with dozens of entries does not fit a small model's context, so
``extract`` splits it into chunks, extracts each, and merges them by the rules
declared here: ``entries`` are deduplicated by ``version`` (an entry seen
twice in the overlap of two chunks is one entry), and ``package`` is the
value most chunks agree on. The text fields are grounded: each must be a
verbatim span of its chunk (a value not found goes back to the model as a
validation error), and the record's ``spans`` give their places in the whole
file. ``parse_history`` is an independent, rule-based parser of the same
text, used by benchmarks/bench_history.py to score the model's entries.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from agentflow import Merge
from agentflow.extraction.grounding import Grounded

INSTRUCTIONS = (
    "You read part of a Debian package changelog and list every entry in it as JSON. "
    "An entry starts with a line: package (version) distribution; urgency=level. "
    "version is the text inside the parentheses, distribution is the word after the "
    "closing parenthesis, urgency follows 'urgency='. "
    "An entry ends with a line: -- maintainer name <email>  date. "
    "maintainer is the name and <email> after the two dashes, date is the rest of that line. "
    "List the entries in the order they appear; skip an entry whose first line is not in "
    "the text."
)
"""Where each field is, in words (the bundled base model never sees the schema's
descriptions)."""

Urgency = Literal["low", "medium", "high", "emergency", "critical"]


class Entry(BaseModel):
    """One entry of the changelog."""

    version: Annotated[str, Grounded()] = Field(
        description="the version inside the parentheses")
    distribution: Annotated[str, Grounded()] = Field(
        description="the word after the version, e.g. unstable")
    urgency: Urgency
    maintainer: Annotated[str, Grounded()] = Field(
        description="name and e-mail after the two dashes")
    date: Annotated[str, Grounded()] = Field(
        description="the date at the end of the entry's last line")


class ChangelogHistory(BaseModel):
    """Every entry of a Debian changelog, newest first."""

    package: Annotated[str, Merge.majority(), Grounded()] = Field(
        description="source package name, the first word of each entry")
    entries: Annotated[list[Entry], Merge.by_key("version")] = Field(
        description="every entry, in the order of the file")


_HEADER = re.compile(r"^(\S+) \(([^)]+)\) ([^;]+); .*?urgency=(\w+)", re.MULTILINE)
_TRAILER = re.compile(r"^ -- (.+?)  (.+)$", re.MULTILINE)


def parse_history(text: str) -> ChangelogHistory:
    """Rule-based parse of a whole changelog (the reference for the benchmark):
    each header line opens an entry, the next trailer line closes it. Entries
    whose urgency is not a known level keep the lower-cased word anyway
    (``model_construct``), so the reference never drops an entry."""
    entries: list[Entry] = []
    package = ""
    for header in _HEADER.finditer(text):
        trailer = _TRAILER.search(text, header.end())
        package = package or header.group(1)
        entries.append(Entry.model_construct(
            version=header.group(2), distribution=header.group(3).strip(),
            urgency=header.group(4).lower(),
            maintainer=trailer.group(1).strip() if trailer else "",
            date=trailer.group(2).strip() if trailer else ""))
    return ChangelogHistory.model_construct(package=package, entries=entries)
