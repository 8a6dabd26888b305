"""The main job's schema with its hand-written locating rules removed: the
header and trailer fields are plain ``str`` (no ``line=``, ``after=``,
``pattern``, ``longest``), grounded by the extraction default, and placed by
the locators learned from the two worked examples
(``agentflow.grounding.locators``). The changes keep their whole-item marker
and the urgency its choice. A variant for ``bench_extract.py --schema
benchmarks/changelog_learned.py:ChangelogEntry`` (issue 30: which hand rules
do the learned locators make unnecessary).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import debian_changelog as hand

from agentflow.grounding import Grounded
from agentflow.output.examples import Example

INSTRUCTIONS = hand.INSTRUCTIONS
MAX_CHARS = hand.MAX_CHARS
PASSES = hand.PASSES
prepare = hand.prepare
parse_entry = hand.parse_entry


class ChangelogEntry(BaseModel):
    """The latest entry of a Debian changelog, without hand-written locating rules."""

    package: str = Field(description="source package name, the first word of the entry")
    version: str = Field(description="the version inside the parentheses")
    distribution: str = Field(description="the word after the version, e.g. unstable")
    urgency: Annotated[hand.Urgency, Grounded(line=hand.HEADER_LINE)]
    changes: list[hand.Change] = Field(
        description="the change lines, without the leading '*'", max_length=8)
    maintainer: str = Field(description="name and <e-mail> after the two dashes, as written")
    date: str = Field(description="the date at the end of the last line, as written")


EXAMPLES = [Example(e.text, ChangelogEntry(**e.output.model_dump())) for e in hand.EXAMPLES]
