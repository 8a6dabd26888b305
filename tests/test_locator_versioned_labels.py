"""A line's leading token that carries a protocol or product version
(``HTTP/1.1``, ``SIP/2.0``) is the same label whatever version a document
writes (newcomer22 probe, finding 7): examples that both write ``HTTP/1.1
200 OK`` read ``HTTP/1.0 301`` and ``HTTP/2 200`` too; other words of a
label stay exact."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD
from agentflow.grounding.lines import arguments_after
from tests.locator_support import learned_rules, scored


class Response(BaseModel):
    status: str | None = None
    server: str | None = None


RESPONSES = [
    Example("HTTP/1.1 200 OK\nServer: nginx\nContent-Length: 12\n\nhello world\n",
            Response(status="200", server="nginx")),
    Example("HTTP/1.1 302 Found\nServer: Apache\nLocation: /next\n\n",
            Response(status="302", server="Apache")),
]


def test_a_version_in_a_lines_head_may_vary() -> None:
    assert arguments_after("HTTP/2 200", "HTTP/1.1") == [(7, 10)]
    assert arguments_after("SIP/2.0 180 Ringing", "SIP/1.0") == [(8, 11), (12, 19)]
    assert arguments_after("HTTPS/1.1 200", "HTTP/1.1") is None  # another name
    assert arguments_after("sha512 abc", "sha256") is None  # not a version after ``/``
    assert arguments_after("HTTP/1.1a 200", "HTTP/1.1") is None
    assert arguments_after(".TH LS 1", ".TH") == [(4, 6), (7, 8)]


def test_a_status_line_of_another_version_is_read() -> None:
    rules = learned_rules(RESPONSES, Response)
    for doc, status in (("HTTP/1.0 301 Moved Permanently\nServer: Apache\n", "301"),
                        ("HTTP/2 200\nserver: cloudflare\n", "200"),
                        ("HTTP/1.1 404 Not Found\nServer: nginx\n", "404")):
        assert rules["status"].values(doc) == [status], doc
        assert scored(Response(status=status), doc, rules, "status") == HELD, doc
