"""Schema for a long document: the whole history of a Debian package changelog.

    agentflow extract --schema examples/debian_changelog_history.py:ChangelogHistory \\
        --input /usr/share/doc/tmux/changelog.Debian.gz --out history.jsonl

A changelog with dozens of entries does not fit a small model's context, so
``extract`` reads it entry by entry (``CHUNKING``: map over items), extracts
each chunk, and merges them by the rules declared here: ``entries`` are
deduplicated by ``version`` (an entry seen twice is one entry), and
``package`` is the value most chunks agree on. The text fields are grounded as
whole tokens (``Grounded(whole_tokens=True)``): each must be a verbatim span of
its chunk that cuts no token (a value not found, or cutting a token, goes back to
the model as a validation error), and the record's ``spans`` give their places
in the whole file. ``parse_history`` is an independent, rule-based parser of the same
text, used by benchmarks/bench_history.py to score the model's entries.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from agentflow import Chunking, Merge
from agentflow.grounding import Grounded

_EXAMPLES = (
    ("""\
frobnitz (2.4.1-3) experimental; urgency=low

  * Cherry-pick commit 5e0c1d2f from upstream 2.5 to fix the build.
  * d/watch: Track the new upstream tarball names (version 4).

 -- Pat Q. Sample <pat@example.invalid>  Wed, 14 Aug 2019 08:15:42 +0200""",
     {"package": "frobnitz", "entries": [
         {"version": "2.4.1-3", "distribution": "experimental", "urgency": "low",
          "maintainer": "Pat Q. Sample <pat@example.invalid>",
          "date": "Wed, 14 Aug 2019 08:15:42 +0200"}]}),
    ("""\
zorblib (1:0.17+dfsg-2) sid; urgency=high

  [ Lee Example ]
  * Fix a crash on empty input (Closes: #1234567)

 -- Lee Example <lee@example.invalid>  Fri, 01 Mar 2013 23:59:01 -0500""",
     {"package": "zorblib", "entries": [
         {"version": "1:0.17+dfsg-2", "distribution": "sid", "urgency": "high",
          "maintainer": "Lee Example <lee@example.invalid>",
          "date": "Fri, 01 Mar 2013 23:59:01 -0500"}]}),
)

INSTRUCTIONS = (
    "You read part of a Debian package changelog and list every entry in it as JSON. "
    "An entry starts with a line: package (version) distribution; urgency=level. "
    "version is the text inside the parentheses, distribution is the word after the "
    "closing parenthesis, urgency follows 'urgency='. "
    "An entry ends with a line: -- maintainer name <email>  date. "
    "maintainer is the name and <email> after the two dashes, date is the rest of that line. "
    "List the entries in the order they appear; skip an entry whose first line is not in "
    "the text.\n\n"
    + "\n\n".join(f"{text}\n\nJSON:\n{json.dumps(fields, ensure_ascii=False)}"
                   for text, fields in _EXAMPLES)
)
"""Where each field is, in words, then two worked examples in the form the
bundled base model completes (text, ``JSON:``, the object). Their values are
invented and occur in no document, so grounding forbids copying them; the
first one's change lines mention a commit and another version, as real
entries do, and the version is still the one in parentheses."""

CHUNKING = Chunking(items="entries")
"""Read the changelog entry by entry (map over items): each chunk is whole
top-level blocks (an entry starts at an unindented line after a blank line),
as many per chunk as the model reads well (one on the embedded model), and
the entries of all chunks are merged by ``version``. ``agentflow extract``
uses this for this schema."""

Token = Grounded(whole_tokens=True)
"""Copied from the chunk as whole tokens: never ``1.5.2-1`` out of ``2:1.5.2-1``
nor ``debian`` out of an e-mail address."""

HEADER_LINE = r"; *urgency="
"""The line an entry starts with (``package (version) distribution; urgency=
level``): ``version`` and ``distribution`` are copied from such a line, never
from a change line that names another version (an upstream patch level) or a
distribution."""

TRAILER_LINE = r"^ -- "
"""The line an entry ends with (`` -- name <e-mail>  date``): ``maintainer``
and ``date`` are copied from such a line."""

OnHeader = Grounded(whole_tokens=True, line=HEADER_LINE)
OnTrailer = Grounded(whole_tokens=True, line=TRAILER_LINE)
AfterVersion = Grounded(whole_tokens=True, line=HEADER_LINE, after="version")
"""On the header line, after the version: never the package name that starts the
line (``nvidia-settings (…) unstable``)."""
WholeName = Grounded(whole_tokens=True, line=TRAILER_LINE, longest=True)
"""On the trailer line, the whole ``Name <e-mail>`` the pattern allows: never
the name less its first names (``Klose <doko@debian.org>``)."""
AfterMaintainer = Grounded(whole_tokens=True, line=TRAILER_LINE, after="maintainer")
"""On the trailer line, after the maintainer."""

VERSION_PATTERN = r"^([0-9]+:)?[0-9][A-Za-z0-9+~]*([.-][A-Za-z0-9+~]+)+$"
"""A Debian version as written: an optional epoch, then parts joined by ``.`` or
``-``, at least two of them (``2:1.5.2-1``, ``3.3a-3``, ``1.9-0.2``). The grammar
holds the version to tokens of the chunk that look like one (never a time of day
such as ``10:49:58``, a year, or a bare number), and a chunk with none of them (a
trailing note) can only give an empty list."""

DISTRIBUTION_PATTERN = r"^[A-Za-z][A-Za-z0-9-]*$"
"""A distribution name as written (``unstable``, ``bookworm-security``): one word,
never a version, a number or text with punctuation. (Entries of the 1990s that
name several, ``frozen unstable``, can only give the first.)"""

MAINTAINER_PATTERN = r"^[^\s<>-][^<>\n]* <[^<>\s]+>$"
"""``Name <e-mail>`` as written on the trailer line: the grammar lists the spans of
the chunk that have this shape, so the model can no longer stop at the name or
begin at the e-mail address; a name never begins with ``-`` (never ``-- Name``),
and with ``longest`` it is the whole name, first names included."""

Urgency = Literal["low", "medium", "high", "emergency", "critical"]


class Entry(BaseModel):
    """One entry of the changelog."""

    version: Annotated[str, OnHeader] = Field(
        description="the version inside the parentheses",
        pattern=VERSION_PATTERN)
    distribution: Annotated[str, AfterVersion] = Field(
        description="the word after the version, e.g. unstable",
        pattern=DISTRIBUTION_PATTERN)
    urgency: Annotated[Urgency, Grounded(line=HEADER_LINE)]
    maintainer: Annotated[str, WholeName] = Field(
        description="name and e-mail after the two dashes",
        pattern=MAINTAINER_PATTERN)
    date: Annotated[str, AfterMaintainer] = Field(
        description="the date at the end of the entry's last line")


class ChangelogHistory(BaseModel):
    """Every entry of a Debian changelog, newest first."""

    package: Annotated[str, Merge.majority(), Grounded(whole_tokens=True)] = Field(
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
