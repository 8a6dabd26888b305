"""Schema for the main job: the latest entry of a Debian package changelog.

    agentflow extract --schema examples/debian_changelog.py:ChangelogEntry \\
        --input '/usr/share/doc/*/changelog.Debian.gz' --limit 20 --out changelogs.jsonl

``prepare`` keeps only the latest entry of each file (what the schema
describes); ``parse_entry`` is an independent, rule-based parser of the same
text, used by benchmarks/bench_extract.py to score the model's fields.

Every field is grounded: its value must be copied verbatim from the entry.
The header fields (package, version, distribution, urgency) come from the
header line and the trailer fields (maintainer, date) from the trailer line
(``Grounded(line=...)``), as whole tokens (never ``1.5.2-1`` out of
``2:1.5.2-1`` nor ``debian`` out of ``jelmer@debian.org``); each change is one
whole item of the entry's bulleted list with its continuation lines
(``Grounded(whole_items=True)``), the items in the order of the entry. The
two worked examples list every item of their entries, so the run learns that
``changes`` is every item of the list (``agentflow.grounding.locators``, an
``items`` rule: across ``[ name ]`` group headings; an item that holds a
nested list is its own lines, each nested item a change of its own), the
first ``max_length`` of them. On the embedded model the grammar allows
nothing else; on a vendor model an invented, token-cutting or misplaced value
is sent back and, if it persists, the record fails with ``GroundingError``.
Each record says where each value is (``spans``).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from agentflow.grounding import Grounded
from agentflow.output.examples import Example

HEADER_LINE = r"; *urgency="
"""The entry's first line (``package (version) distribution; urgency=level``)."""
TRAILER_LINE = r"^ -- "
"""The entry's last line (`` -- maintainer <e-mail>  date``)."""

OnHeader = Annotated[str, Grounded(whole_tokens=True, line=HEADER_LINE)]
"""Copied from the header line as written, whole tokens only."""
OnTrailer = Annotated[str, Grounded(whole_tokens=True, line=TRAILER_LINE)]
"""Copied from the trailer line as written, whole tokens only."""


def copied(line: str, after: str) -> Grounded:
    """Copied from a line ``line`` matches as written (whole tokens), after the
    value of field ``after``: the header line writes package, version and
    distribution in this order, the trailer line maintainer then date."""
    return Grounded(whole_tokens=True, line=line, after=after)


Change = Annotated[str, Grounded(whole_items=True)]
"""One whole item of the entry's bulleted list, with its continuation lines."""
Urgency = Literal["low", "medium", "high", "emergency", "critical"]

INSTRUCTIONS = (
    "Copy the fields of a Debian changelog entry into JSON, exactly as they are written. "
    "The first line reads: package (version) distribution; urgency=level. "
    "changes are the lines that start with '*', without the '*', each once, in order. "
    "The last line reads: -- maintainer name <email>  date."
)
"""Where each field is, in words. The worked examples follow it (``EXAMPLES``)."""
MAX_CHARS = 2500
PASSES = 3
"""Read each entry up to three times (``agentflow.extraction.recall``): the
bundled model often copies the first change or two and closes the list; a
later pass's grammar no longer offers the changes already taken, so it copies
others, and the passes' changes are merged in the order of the entry. A pass
is made only while a change is left untaken (on the tune sample: changes
token F1 0.70 -> 0.92, 1.98 requests per entry; benchmarks/RESULTS.md).
Where the learned ``items`` rule applies (a model whose grammar takes it: the
embedded one), the first pass already writes every change and no other is
made."""


class ChangelogEntry(BaseModel):
    """The latest entry of a Debian changelog.

    Fields are declared in the order the entry writes them (header line, change
    lines, trailer line): the model fills them in schema order, and copying
    along the text in order is what a small model does best (on the tune
    sample: exact 0.79 -> 0.88 against changes declared last;
    benchmarks/RESULTS.md)."""

    package: OnHeader = Field(description="source package name, the first word of the entry",
                              pattern=r"^[a-z0-9][a-z0-9+.-]+$")
    version: Annotated[str, copied(HEADER_LINE, after="package")] = Field(
        description="the version inside the parentheses",
        pattern=r"^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$")
    distribution: Annotated[str, copied(HEADER_LINE, after="version")] = Field(
        description="the word after the version, e.g. unstable",
        pattern=r"^[A-Za-z][A-Za-z0-9-]*$")
    urgency: Annotated[Urgency, Grounded(line=HEADER_LINE)]
    changes: list[Change] = Field(
        description="the change lines, without the leading '*'", max_length=8)
    maintainer: Annotated[str, Grounded(whole_tokens=True, line=TRAILER_LINE, longest=True)] = (
        Field(description="name and <e-mail> after the two dashes, as written",
              pattern=r"^[^\s<>-][^<>\n]* <[^<>\s]+>$"))
    """The whole ``Name <e-mail>`` (``longest``): never the name less its first
    names; the pattern's first character is no ``-``, so never ``-- Name``."""
    date: Annotated[str, copied(TRAILER_LINE, after="maintainer")] = Field(
        description="the date at the end of the last line, as written",
        pattern=r"^[A-Z][a-z]{2}, +[0-9]{1,2} [A-Z][a-z]{2} [0-9]{4} "
                r"[0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4}$")


EXAMPLES = [
    Example("""\
barbaz (1:0.9~rc2-1+deb12u1) bookworm-security; urgency=high

  * Non-maintainer upload by the Security Team.
  * Fix a heap overflow in the option parser (CVE-2099-0001).
    Backported from upstream.

 -- Zoë Example-Maintainer <zoe@example.org>  Tue, 02 Jan 2024 10:20:30 +0100""",
            ChangelogEntry(
                package="barbaz", version="1:0.9~rc2-1+deb12u1", distribution="bookworm-security",
                urgency="high", maintainer="Zoë Example-Maintainer <zoe@example.org>",
                date="Tue, 02 Jan 2024 10:20:30 +0100",
                changes=["Non-maintainer upload by the Security Team.",
                         "Fix a heap overflow in the option parser (CVE-2099-0001).\n"
                         "    Backported from upstream."])),
    Example("""\
quuxutils (4.12-2) unstable; urgency=medium

  [ Jane Q. Hacker ]
  * New upstream release.
  * d/control: Bump Standards-Version to 4.6.2.
  * d/patches: Drop the build fix, applied upstream.
    (Closes: #999001)
  * d/rules: Enable all hardening flags.

 -- Jane Q. Hacker <jqh@example.net>  Mon, 05 Feb 2024 18:02:11 +0000""",
            ChangelogEntry(
                package="quuxutils", version="4.12-2", distribution="unstable", urgency="medium",
                maintainer="Jane Q. Hacker <jqh@example.net>",
                date="Mon, 05 Feb 2024 18:02:11 +0000",
                changes=["New upstream release.", "d/control: Bump Standards-Version to 4.6.2.",
                         "d/patches: Drop the build fix, applied upstream.\n"
                         "    (Closes: #999001)",
                         "d/rules: Enable all hardening flags."])),
]
"""Two worked examples, written by hand (in no changelog on any machine): the
CLI and the benchmark show them before each entry (``agentflow.extraction.
examples``), which the bundled base model reads as "entry, ``JSON:``, object"
pairs. Their values are not in the documents, so grounding forbids copying
them: the model can only learn the pattern."""


_HEADER = re.compile(r"^(\S+) \(([^)]+)\) ([^;]+); .*?urgency=(\w+)", re.MULTILINE)
_TRAILER = re.compile(r"^ -- (.+?)  (.+)$", re.MULTILINE)


def prepare(text: str) -> str:
    """The latest entry only: from the top to its ``-- maintainer  date`` line."""
    match = _TRAILER.search(text)
    return text[: match.end()].strip() if match else text.strip()


def parse_entry(text: str) -> ChangelogEntry | None:
    """Rule-based parse of a changelog entry (the reference for accuracy)."""
    entry = prepare(text)
    header, trailer = _HEADER.search(entry), _TRAILER.search(entry)
    if not header or not trailer:
        return None
    changes: list[str] = []
    for line in entry.splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith(("* ", "- ")):
            changes.append(stripped[2:].strip())
        elif stripped and changes and line.startswith("    ") and not stripped.startswith("--"):
            changes[-1] += " " + stripped  # continuation of the previous change
    urgency = header.group(4).lower()
    if urgency not in ("low", "medium", "high", "emergency", "critical"):
        return None
    return ChangelogEntry.model_construct(  # the reference, as written: not validated
        package=header.group(1), version=header.group(2), distribution=header.group(3).strip(),
        urgency=urgency,  # type: ignore[arg-type]
        maintainer=trailer.group(1).strip(), date=trailer.group(2).strip(), changes=changes[:8],
    )
