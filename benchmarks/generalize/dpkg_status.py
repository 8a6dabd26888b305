"""A package entry of dpkg's status database, as a newcomer would write it:
a plain pydantic model, one sentence of instructions, two worked examples
(made-up packages, not files of this machine).

    agentflow extract --schema benchmarks/generalize/dpkg_status.py:Package --input ...
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example

INSTRUCTIONS = "Extract the package's details from its dpkg status entry."


class Package(BaseModel):
    """One installed Debian package."""

    package: str | None = Field(None, description="the package name")
    version: str | None = Field(None, description="the package version")
    maintainer: str | None = Field(None, description="the maintainer's name and e-mail address")
    homepage: str | None = Field(None, description="the upstream homepage URL")
    summary: str | None = Field(None, description="the one-line description of the package")
    depends: list[str] = Field(default_factory=list,
                               description="the packages it depends on, with their versions")


EXAMPLES = [
    Example(
        text="""Package: libfrob2
Status: install ok installed
Priority: optional
Section: libs
Installed-Size: 212
Maintainer: Frob Team <frob-team@lists.example.org>
Architecture: amd64
Multi-Arch: same
Source: frob
Version: 2.4.1-3
Depends: libc6 (>= 2.34), zlib1g (>= 1:1.2.0)
Description: frobnication library - runtime files
 Frob turns lists of widgets into tidy reports.
 .
 This package contains the shared library.
Homepage: https://frob.example.org/
""",
        output=Package(package="libfrob2", version="2.4.1-3",
                       maintainer="Frob Team <frob-team@lists.example.org>",
                       homepage="https://frob.example.org/",
                       summary="frobnication library - runtime files",
                       depends=["libc6 (>= 2.34)", "zlib1g (>= 1:1.2.0)"]),
    ),
    Example(
        text="""Package: quux-data
Status: install ok installed
Priority: optional
Section: misc
Installed-Size: 1048
Maintainer: Ann Example <ann@example.net>
Architecture: all
Version: 0.9+dfsg-1
Description: data files for quux
 Maps and sounds used by the quux game.
""",
        output=Package(package="quux-data", version="0.9+dfsg-1",
                       maintainer="Ann Example <ann@example.net>", homepage=None,
                       summary="data files for quux", depends=[]),
    ),
]
