"""A Python distribution's core metadata (the header block of a
``METADATA``/``PKG-INFO`` file), as a newcomer would write it: a plain
pydantic model, one sentence of instructions, two worked examples (made-up
distributions).

    agentflow extract --schema benchmarks/generalize/python_metadata.py:Distribution --input ...
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example

INSTRUCTIONS = "Extract the Python package's metadata."


class Distribution(BaseModel):
    """A Python distribution (package) and its requirements."""

    name: str | None = Field(None, description="the distribution name")
    version: str | None = Field(None, description="the version")
    summary: str | None = Field(None, description="the one-line summary")
    author_email: str | None = Field(None, description="the author's e-mail")
    requires_python: str | None = Field(None, description="the supported Python versions")
    requires_dist: list[str] = Field(default_factory=list,
                                     description="the packages it requires")


EXAMPLES = [
    Example(
        text="""Metadata-Version: 2.1
Name: widgetkit
Version: 3.2.0
Summary: Tools for building widgets
Author-email: Jane Roe <jane@widgetkit.example>
License: MIT
Classifier: Programming Language :: Python :: 3
Classifier: License :: OSI Approved :: MIT License
Requires-Python: >=3.9
Requires-Dist: attrs>=22.1
Requires-Dist: colorama; sys_platform == "win32"
Requires-Dist: pytest>=7; extra == "test"
Provides-Extra: test
Description-Content-Type: text/markdown""",
        output=Distribution(name="widgetkit", version="3.2.0",
                            summary="Tools for building widgets",
                            author_email="Jane Roe <jane@widgetkit.example>",
                            requires_python=">=3.9",
                            requires_dist=["attrs>=22.1", 'colorama; sys_platform == "win32"',
                                           'pytest>=7; extra == "test"']),
    ),
    Example(
        text="""Metadata-Version: 2.4
Name: tinyparse
Version: 0.4
Summary: A tiny parser
Home-page: https://example.com/tinyparse
Author: Sam Poe
License-Expression: BSD-3-Clause
Platform: any""",
        output=Distribution(name="tinyparse", version="0.4", summary="A tiny parser",
                            author_email=None, requires_python=None, requires_dist=[]),
    ),
]
