"""The head of a man page's roff source (its ``.TH`` title line and NAME
section), as a newcomer would write it: a plain pydantic model, one sentence
of instructions, two worked examples (made-up pages). A reporting kind of
the benchmark, added after the others were tuned: never tuned on.

    agentflow extract --schema benchmarks/generalize/man_page.py:ManPage --input ...
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example

INSTRUCTIONS = "Extract the man page's title line and its one-line summary."


class ManPage(BaseModel):
    """A manual page: what it documents and where it belongs."""

    title: str | None = Field(None, description="the page's title")
    section: str | None = Field(None, description="the manual section number")
    date: str | None = Field(None, description="the date of the page")
    source: str | None = Field(None, description="the software (and version) it documents")
    manual: str | None = Field(None, description="the manual it belongs to")
    summary: str | None = Field(None, description="the one-line description of the command")


EXAMPLES = [
    Example(
        text=""".TH FROBCTL "1" "March 2021" "frobctl 2.3.1" "User Commands"
.SH NAME
frobctl \\- control the frob daemon
.SH SYNOPSIS
.B frobctl
[\\fI\\,OPTION\\/\\fR]... \\fICOMMAND\\fR
""",
        output=ManPage(title="FROBCTL", section="1", date="March 2021", source="frobctl 2.3.1",
                       manual="User Commands", summary="control the frob daemon"),
    ),
    Example(
        text=""".TH "QUUX.CONF" "5" "2020-05-14" "quux 0.9" "File Formats Manual"
.SH "NAME"
quux.conf \\- configuration file for the quux
mail filter
.SH "SYNOPSIS"
.PP
/etc/quux/quux\\&.conf
""",
        output=ManPage(title="QUUX.CONF", section="5", date="2020-05-14", source="quux 0.9",
                       manual="File Formats Manual",
                       summary="configuration file for the quux mail filter"),
    ),
]
