"""A setting written only inside a keyword section is not the global one
(newcomer23 probe, finding 2): the examples write their global settings
above an indented ``Match Group admins`` block; a document that writes its
``Match`` block flush left (sshd needs no indentation) had the block's
``PermitRootLogin yes`` and ``ChrootDirectory`` pinned at 0.99 as global
settings, where indented they were 0.8. Now the rule learns the section
keyword its examples write the value above, and a value found only below
the first such line is offered beside null, never pinned."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, UNLOCATED_NULL
from agentflow.grounding.locator_sections import below_section_only
from tests.locator_support import learned_rules, scored


class Sshd(BaseModel):
    port: str | None = Field(None, description="Port")
    permit_root_login: str | None = Field(None, description="global PermitRootLogin")
    chroot_directory: str | None = Field(None, description="global ChrootDirectory")


SSHD = [
    Example("# build host\nPort 2222\nPermitRootLogin prohibit-password\n"
            "ChrootDirectory /srv/jail\n",
            Sshd(port="2222", permit_root_login="prohibit-password", chroot_directory="/srv/jail")),
    Example("Port 22\nPermitRootLogin no\nChrootDirectory /home/%u\nX11Forwarding yes\n\n"
            "Match Group admins\n    X11Forwarding no\n    ForceCommand internal-sftp\n",
            Sshd(port="22", permit_root_login="no", chroot_directory="/home/%u")),
]


def test_a_flush_left_match_blocks_values_are_not_pinned_as_global() -> None:
    rules = learned_rules(SSHD, Sshd)
    assert rules["permit_root_login"].section == "match"
    doc = ("Port 2200\nX11Forwarding no\n\nMatch Group admins\nPermitRootLogin yes\n"
           "ChrootDirectory /srv/admins\n")
    for name, value in (("permit_root_login", "yes"), ("chroot_directory", "/srv/admins")):
        assert below_section_only(rules[name], doc)
        assert scored(Sshd(**{name: value}), doc, rules, name) < HELD  # was HELD
        assert scored(Sshd(), doc, rules, name) == UNLOCATED_NULL  # was DISAGREES
    # the global value above the Match line, and a file without one, stay pinned
    glob = doc.replace("X11Forwarding no\n", "X11Forwarding no\nChrootDirectory /srv/all\n"
                       ).replace("ChrootDirectory /srv/admins\n", "")
    assert scored(Sshd(chroot_directory="/srv/all"), glob, rules, "chroot_directory") == HELD
    bare = doc.replace("Match Group admins\n", "")
    assert scored(Sshd(permit_root_login="yes"), bare, rules, "permit_root_login") == HELD
    assert scored(Sshd(port="2200"), doc, rules, "port") == HELD


class Client(BaseModel):
    user: str | None = Field(None, description="the global User")


def test_ssh_config_host_sections_are_the_same_kind() -> None:
    examples = [Example("User deploy\nForwardAgent no\n", Client(user="deploy")),
                Example("User admin\nServerAliveInterval 60\n\nHost bastion\n"
                        "  HostName 10.0.0.2\n  User jump\n", Client(user="admin"))]
    rules = learned_rules(examples, Client)
    assert rules["user"].section == "host"
    doc = "ServerAliveInterval 30\nHost gitlab\nHostName gitlab.example.com\nUser git\n"
    assert scored(Client(user="git"), doc, rules, "user") < HELD
    # examples that indent nothing under a keyword line learn no section
    flat = [Example(e.text.replace("  ", ""), e.output) for e in examples]
    assert learned_rules(flat, Client)["user"].section == ""


def test_a_brace_blocks_opening_line_opens_no_section() -> None:
    """``resource "aws_instance" "a" {`` indents its lines too, but its block
    ends with its ``}``: a provider's region written after it is no
    section's."""

    class Region(BaseModel):
        region: str | None = None

    examples = [Example(f'provider "aws" {{\n  region = "{r}"\n}}\n\n'
                        'resource "aws_instance" "a" {\n  ami = "ami-1"\n}\n', Region(region=r))
                for r in ("eu-west-1", "us-east-2")]
    assert learned_rules(examples, Region)["region"].section == ""
