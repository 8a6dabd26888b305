"""A value read to its line's end over a bare option line is not taken to run
on (newcomer22 probe, finding 5; a lower-case key line: newcomer23, finding 7):
logrotate's ``rotate 12`` over ``compress``, my.cnf's ``port = 3306`` over
``skip-name-resolve``, sshd's ``PermitRootLogin no`` over ``usepam yes``. A plain
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


class Sshd(BaseModel):
    port: str | None = Field(None, description="the first Port value")
    permit_root_login: str | None = Field(None, description="PermitRootLogin value")


SSHD = [Example("# build host\nPort 2222\nPermitRootLogin prohibit-password\nUsePAM yes\n",
                Sshd(port="2222", permit_root_login="prohibit-password")),
        Example("Port 22\nAddressFamily inet\nPermitRootLogin no\nX11Forwarding yes\n",
                Sshd(port="22", permit_root_login="no"))]


def test_a_one_word_value_over_a_key_line_in_lower_case_does_not_run_on() -> None:
    """A keyword format's next key line (newcomer23 probe, finding 7): the
    examples write ``Keyword value`` lines and one-word values; a one-word
    value over a lower-case line of that shape (``usepam yes``: sshd reads
    keywords in any case, redis.conf and resolv.conf write them so) does not
    run on, though no example writes that line nor stops above a plain one."""
    assert not runs_on(["PermitRootLogin no", "usepam yes"], 0, False, keyword=True)
    assert runs_on(["PermitRootLogin no", "usepam yes"], 0, False)
    assert runs_on(["PermitRootLogin no \\", "usepam yes"], 0, False, keyword=True)  # a join
    assert runs_on(["PermitRootLogin no", "compress"], 0, False, keyword=True)  # no value


def test_a_learned_keyword_rule_pins_a_value_over_a_lower_case_key_line() -> None:
    rules = learned_rules(SSHD, Sshd)
    assert not rules["permit_root_login"].stops_short
    for nxt in ("permitemptypasswords no", "maxauthtries 3", "x11forwarding\tyes", "usepam yes"):
        doc = f"Port 2200\nPermitRootLogin no\n{nxt}\n"
        assert scored(Sshd(permit_root_login="no"), doc, rules, "permit_root_login") == HELD, nxt
    doc = "Port 2200\nPermitRootLogin no\nusepam yes\n"
    assert scored(Sshd(port="2200"), doc, rules, "port") == HELD


class Form(BaseModel):
    subject: str | None = None
    owner: str | None = None


FORMS = [Example("Subject Printer jams\nOwner Ann\n", Form(subject="Printer jams", owner="Ann")),
         Example("Subject VPN drops\nOwner Bo\n", Form(subject="VPN drops", owner="Bo"))]


def test_a_value_of_several_words_over_a_line_of_that_shape_still_runs_on() -> None:
    """A value the examples show of several words, wrapped at a fixed width
    (a form's text layer), may go on onto a line of a word and more words:
    its rule still does not pin it."""
    rules = learned_rules(FORMS, Form)
    assert rules["subject"].left == "Subject " and rules["subject"].spaced
    wrapped = "Subject Laptop will not boot after\nthe BIOS update on Monday\nOwner Cy\n"
    assert scored(Form(subject="Laptop will not boot after"), wrapped, rules,
                  "subject") < REVIEW_BELOW
