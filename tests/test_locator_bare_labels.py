"""A label without a separator (``Port ``, ``Subsystem sftp ``, nginx's
``listen ``) written with other blanks or with a separator the examples do
not write (newcomer23 probe, finding 6): a tab or a run of spaces between its
words or after it (``Subsystem\\tsftp\\t/usr/lib/ssh/sftp-server``, CentOS's
aligned ``Subsystem       sftp    internal-sftp``, ``listen\\t80;``) is the same
label, and so is one followed by ``=`` or ``:`` (sshd_config's optional
``=``: ``Port = 2222``, ``PermitRootLogin=no``): the value is after the
separator, never ``= 2222``. A value that begins with ``::`` or a ``:`` glued
to it (``::1``, ``:memory:``), or ``==`` / ``=>``, is the value's own text."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD
from agentflow.grounding.list_heading import key_mentioned
from tests.locator_support import learned_rules, scored


class Sshd(BaseModel):
    port: str | None = Field(None, description="the first Port value")
    permit_root_login: str | None = Field(None, description="PermitRootLogin value")
    listen_address: str | None = Field(None, description="ListenAddress value")
    sftp_subsystem: str | None = Field(None, description="the command after 'Subsystem sftp'")


SSHD = [
    Example("# build host\nPort 2222\nListenAddress 10.0.0.1\nPermitRootLogin prohibit-password\n"
            "Subsystem sftp /usr/lib/openssh/sftp-server\n",
            Sshd(port="2222", listen_address="10.0.0.1", permit_root_login="prohibit-password",
                 sftp_subsystem="/usr/lib/openssh/sftp-server")),
    Example("Port 22\nAddressFamily inet\nListenAddress 0.0.0.0\nPermitRootLogin no\n"
            "UsePAM yes\nSubsystem sftp internal-sftp\n",
            Sshd(port="22", listen_address="0.0.0.0", permit_root_login="no",
                 sftp_subsystem="internal-sftp")),
]


def _found(doc: str) -> dict[str, list[str]]:
    rules = learned_rules(SSHD, Sshd)
    return {name: rule.values(doc) for name, rule in rules.items()}


def test_tabs_and_runs_of_spaces_in_and_after_a_label_are_its_blanks() -> None:
    rules = learned_rules(SSHD, Sshd)
    assert rules["sftp_subsystem"].left == "Subsystem sftp "
    tabbed = "Port\t2200\nPermitRootLogin\tno\nSubsystem\tsftp\t/usr/lib/ssh/sftp-server\n"
    assert _found(tabbed) == {"port": ["2200"], "permit_root_login": ["no"],
                              "listen_address": [],
                              "sftp_subsystem": ["/usr/lib/ssh/sftp-server"]}
    aligned = "Port    2200\nSubsystem       sftp    internal-sftp\n"
    assert _found(aligned)["sftp_subsystem"] == ["internal-sftp"]
    assert scored(Sshd(sftp_subsystem="/usr/lib/ssh/sftp-server"), tabbed, rules,
                  "sftp_subsystem") == HELD
    assert scored(Sshd(port="2200"), aligned, rules, "port") == HELD
    assert _found("Subsystem\tsftp-server /x\nPorts 22\n") == {
        "port": [], "permit_root_login": [], "listen_address": [], "sftp_subsystem": []}


def test_a_separator_the_examples_do_not_write_separates() -> None:
    rules = learned_rules(SSHD, Sshd)
    spaced = "Port = 2222\nPermitRootLogin = no\nSubsystem = sftp internal-sftp\n"
    assert _found(spaced) == {"port": ["2222"], "permit_root_login": ["no"],
                              "listen_address": [], "sftp_subsystem": ["internal-sftp"]}
    glued = "Port=2022\nPermitRootLogin=without-password\nSubsystem sftp=internal-sftp\n"
    assert _found(glued) == {"port": ["2022"], "permit_root_login": ["without-password"],
                             "listen_address": [], "sftp_subsystem": ["internal-sftp"]}
    assert _found("Port: 22\n")["port"] == ["22"]
    assert scored(Sshd(port="2222"), spaced, rules, "port") == HELD


def test_a_value_beginning_with_a_colon_or_a_double_sign_is_its_own() -> None:
    assert _found("ListenAddress ::1\n")["listen_address"] == ["::1"]
    assert _found("PermitRootLogin :memory:\n")["permit_root_login"] == [":memory:"]
    assert _found("PermitRootLogin == no\n")["permit_root_login"] == ["== no"]
    assert _found("PermitRootLogin => no\n")["permit_root_login"] == ["=> no"]


class Server(BaseModel):
    listen: str | None = Field(None, description="the first listen value")
    root: str | None = Field(None, description="the server's root")


SERVERS = [
    Example("server {\n    listen 80;\n    root /var/www/html;\n}\n",
            Server(listen="80", root="/var/www/html")),
    Example("server {\n    listen 8080 default_server;\n    server_name _;\n"
            "    root /srv/app;\n}\n", Server(listen="8080 default_server", root="/srv/app")),
]


def test_a_tab_after_a_label_ended_by_a_text_is_its_blank() -> None:
    rules = learned_rules(SERVERS, Server)
    doc = "server {\n\tlisten\t80;\n\troot\t\t/srv/www;\n}\n"
    assert rules["listen"].values(doc) == ["80"] and rules["root"].values(doc) == ["/srv/www"]
    assert scored(Server(root="/srv/www"), doc, rules, "root") == HELD


def test_a_key_written_with_other_blanks_is_mentioned() -> None:
    """A key a rule does not read is a mention whatever blanks its words
    have: a null is then not sure (``LocatorSigns.mentioned``)."""
    assert key_mentioned("Match all\n\tSubsystem\tsftp\tinternal-sftp\n", "Subsystem sftp")
    assert not key_mentioned("Subsystem\tsftp-server x\n", "Subsystem sftp")
