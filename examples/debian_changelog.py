"""Schema for the main job: the latest entry of a Debian package changelog.

    agentflow extract --schema examples/debian_changelog.py:ChangelogEntry \\
        --input '/usr/share/doc/*/changelog.Debian.gz' --limit 20 --out changelogs.jsonl

``prepare`` keeps only the latest entry of each file (what the schema
describes); ``parse_entry`` is an independent, rule-based parser of the same
text, used by benchmarks/bench_extract.py to score the model's fields.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

INSTRUCTIONS = (
    "You read one entry of a Debian package changelog and return its fields as JSON. "
    "The first line reads: package (version) distribution; urgency=level. "
    "package is the first word of that line, version is the text inside the parentheses, "
    "distribution is the word after the closing parenthesis, urgency follows 'urgency='. "
    "The last line reads: -- maintainer name <email>  date. "
    "maintainer is the name and <email> after the two dashes, date is the rest of that line. "
    "changes are the lines that start with '*'."
)
"""Where each field is, in words (the bundled base model never sees the schema's
descriptions). No worked example: the 270M model copies an example's values."""
MAX_CHARS = 2500


class ChangelogEntry(BaseModel):
    """The latest entry of a Debian changelog."""

    package: str = Field(description="source package name, the first word of the entry")
    version: str = Field(description="the version inside the parentheses")
    distribution: str = Field(description="the word after the version, e.g. unstable")
    urgency: Literal["low", "medium", "high", "emergency", "critical"]
    maintainer: str = Field(description="name and e-mail after the two dashes")
    date: str = Field(description="the date at the end of the last line")
    changes: list[str] = Field(description="the change lines, without the leading '*'",
                               max_length=8)


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
    return ChangelogEntry(
        package=header.group(1), version=header.group(2), distribution=header.group(3).strip(),
        urgency=urgency,  # type: ignore[arg-type]
        maintainer=trailer.group(1).strip(), date=trailer.group(2).strip(), changes=changes[:8],
    )
