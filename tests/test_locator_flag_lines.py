"""A value read to its line's end over a bare option line is not taken to run
on (newcomer22 probe, finding 5): logrotate's ``rotate 12`` over
``compress``, my.cnf's ``port = 3306`` over ``skip-name-resolve``. A plain
next line beginning in lower case may be a wrapped value's rest (mail, a PDF
text layer); it is not where an example writes that very line, nor, for a
rule whose examples show their value stopping above such a line, anywhere.
A line join (``\\``) still runs on."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.value_clauses import runs_on
from tests.locator_support import learned_rules, scored


class Stanza(BaseModel):
    log_path: str | None = Field(None, description="the first log path")
    rotate: str | None = Field(None, description="the count after 'rotate'")
    create: str | None = Field(None, description="the arguments of 'create'")


STANZAS = [
    Example("/var/log/myapp/*.log {\n    daily\n    rotate 7\n    compress\n    missingok\n"
            "    create 0640 myapp adm\n}\n",
            Stanza(log_path="/var/log/myapp/*.log", rotate="7", create="0640 myapp adm")),
    Example("/var/log/backup.log {\n\tweekly\n\tmissingok\n\trotate 4\n\tnotifempty\n"
            "\tcreate 644 root root\n\tpostrotate\n\t\tsystemctl reload backupd\n\tendscript\n}\n",
            Stanza(log_path="/var/log/backup.log", rotate="4", create="644 root root")),
]


def test_a_next_line_an_example_writes_is_no_run_on() -> None:
    lines = ["Subject: Laptop will not boot", "thanks", "the BIOS update"]
    assert runs_on(lines, 0, False)
    assert not runs_on(lines, 0, False, example_lines=("thanks",))
    assert runs_on(["Libs: -lwrap \\", "thanks"], 0, False, example_lines=("thanks",),
                   plain=False)  # a line join runs on whatever follows
    assert not runs_on(lines, 0, False, plain=False)


def test_a_value_over_a_bare_option_line_is_pinned() -> None:
    rules = learned_rules(STANZAS, Stanza)
    assert rules["rotate"].stops_short and rules["create"].stops_short
    for doc in ("/var/log/x.log {\n    daily\n    rotate 12\n    compress\n}\n",  # example's line
                "/var/log/x.log {\n       rotate 10\n       copytruncate\n}\n",  # a line of its own
                "/var/log/x.log {\n  rotate 8\n  create 0644 www www\n}\n",
                STANZAS[0].text):
        count = rules["rotate"].values(doc)[0]
        assert scored(Stanza(rotate=count), doc, rules, "rotate") == HELD, doc
    doc = "/var/log/x.log {\n\tcreate 0640 www-data adm\n\tsharedscripts\n}\n"
    assert scored(Stanza(create="0640 www-data adm"), doc, rules, "create") == HELD


class Ticket(BaseModel):
    subject: str | None = None
    owner: str | None = None


TICKETS = [Example("Subject: Printer jams\nOwner: Ann\nthanks\n",
                   Ticket(subject="Printer jams", owner="Ann")),
           Example("Subject: VPN drops\nOwner: Bo\nthanks\n",
                   Ticket(subject="VPN drops", owner="Bo"))]


def test_a_wrapped_value_still_runs_on_where_no_example_stops_so() -> None:
    """The examples' ``Subject:`` lines are followed by key lines only: a
    plain lower-case line under one may be its rest, unless an example
    writes that very line (``thanks``); ``Owner:`` stops above ``thanks``."""
    rules = learned_rules(TICKETS, Ticket)
    assert not rules["subject"].stops_short and rules["owner"].stops_short
    wrapped = "Subject: Laptop will not boot after\nthe BIOS update on Monday\nOwner: Cy\n"
    assert scored(Ticket(subject="Laptop will not boot after"), wrapped, rules,
                  "subject") < REVIEW_BELOW
    signed = "Subject: Laptop will not boot\nthanks\n"
    assert scored(Ticket(subject="Laptop will not boot"), signed, rules, "subject") == HELD
    owner = "Subject: Laptop\nOwner: Cy\nsee the log\n"
    assert scored(Ticket(owner="Cy"), owner, rules, "owner") == HELD
