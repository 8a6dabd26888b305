"""A systemd service unit file, as a newcomer would write it: a plain
pydantic model, one sentence of instructions, two worked examples (made-up
services). This is a reporting kind of the benchmark: not to be tuned on.

    agentflow extract --schema benchmarks/generalize/systemd_unit.py:Service --input ...
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example

INSTRUCTIONS = "Extract the service's settings from its systemd unit file."


class Service(BaseModel):
    """A systemd service."""

    description: str | None = Field(None, description="what the service is")
    documentation: list[str] = Field(default_factory=list,
                                     description="documentation links (man pages, URLs)")
    after: list[str] = Field(default_factory=list, description="units it starts after")
    type: str | None = Field(None, description="the service type")
    exec_start: str | None = Field(None, description="the command it runs")
    wanted_by: list[str] = Field(default_factory=list, description="targets that want it")


EXAMPLES = [
    Example(
        text="""[Unit]
Description=Widget inventory daemon
Documentation=man:widgetd(8) https://widgets.example.org/docs
After=network.target remote-fs.target

[Service]
Type=notify
ExecStart=/usr/sbin/widgetd --foreground
Restart=on-failure

[Install]
WantedBy=multi-user.target
""",
        output=Service(description="Widget inventory daemon",
                       documentation=["man:widgetd(8)", "https://widgets.example.org/docs"],
                       after=["network.target", "remote-fs.target"], type="notify",
                       exec_start="/usr/sbin/widgetd --foreground",
                       wanted_by=["multi-user.target"]),
    ),
    Example(
        text="""#  This file is part of gizmo.
[Unit]
Description=Clean up gizmo caches
ConditionPathExists=/var/cache/gizmo

[Service]
ExecStart=/usr/bin/gizmo-clean
""",
        output=Service(description="Clean up gizmo caches", documentation=[], after=[],
                       type=None, exec_start="/usr/bin/gizmo-clean", wanted_by=[]),
    ),
]
