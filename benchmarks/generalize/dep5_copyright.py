"""A Debian machine-readable copyright file (DEP-5), as a newcomer would
write it: a plain pydantic model, one sentence of instructions, two worked
examples (made-up packages). This is a reporting kind of the benchmark: not
to be tuned on.

    agentflow extract --schema benchmarks/generalize/dep5_copyright.py:CopyrightFile --input ...
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example

INSTRUCTIONS = "Extract the upstream project and its main license from the copyright file."


class CopyrightFile(BaseModel):
    """The upstream project of a Debian package and the license of its files."""

    upstream_name: str | None = Field(None, description="the upstream project's name")
    upstream_contact: str | None = Field(None, description="who to contact upstream")
    source: str | None = Field(None, description="where the upstream source comes from")
    license: str | None = Field(None, description="the license of most files (Files: *)")
    copyright: list[str] = Field(default_factory=list,
                                 description="the copyright holders of most files")


EXAMPLES = [
    Example(
        text="""Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: frob
Upstream-Contact: Frob Team <frob-team@lists.example.org>
Source: https://frob.example.org/releases/

Files: *
Copyright: 2015-2023 Jane Roe <jane@example.org>
           2019 Acme Widgets Ltd.
License: LGPL-2.1+

Files: debian/*
Copyright: 2020 Ann Example <ann@example.net>
License: LGPL-2.1+

License: LGPL-2.1+
 This library is free software; you can redistribute it and/or
 modify it under the terms of the GNU Lesser General Public License.
""",
        output=CopyrightFile(upstream_name="frob",
                             upstream_contact="Frob Team <frob-team@lists.example.org>",
                             source="https://frob.example.org/releases/", license="LGPL-2.1+",
                             copyright=["2015-2023 Jane Roe <jane@example.org>",
                                        "2019 Acme Widgets Ltd."]),
    ),
    Example(
        text="""Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Source: https://git.example.com/quux

Files: *
Copyright: 1999 Sam Poe
License: Expat
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software, to deal in the Software without restriction.
""",
        output=CopyrightFile(upstream_name=None, upstream_contact=None,
                             source="https://git.example.com/quux", license="Expat",
                             copyright=["1999 Sam Poe"]),
    ),
]
