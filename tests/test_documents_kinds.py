"""What kind of document a file is (agentflow.documents.kinds)."""

from __future__ import annotations

import pytest

from agentflow.documents.kinds import sniff_kind


@pytest.mark.parametrize(("head", "name", "kind"), [
    (b"%PDF-1.7\n...", "scan.bin", "pdf"),              # magic bytes win over the name
    (b"\r\n" * 100 + b"%PDF-1.4", "x", "pdf"),          # junk before the header (< 1024 bytes)
    (b"not a pdf", "report.PDF", "pdf"),                # the name says PDF: fails as corrupt
    (b"plain words", "page.html", "html"),
    (b"plain words", "page.htm.gz", "html"),            # .gz is looked through
    (b"<!doctype html><p>x", "page", "html"),
    (b"\xef\xbb\xbf  \n<HTML lang=en>", "index", "html"),
    (b"<p>hello", "", "html"),                          # stdin: sniffed
    (b"<!-- a comment -->", "x", "html"),
    (b"<p>markup quoted in notes", "notes.txt", "text"),  # a text suffix is never sniffed
    (b"<pre>x", "x", "text"),                           # not one of the standard's tags
    (b"<paragraph>", "x", "text"),                      # <p must end at a space or >
    (b"hello (2.10-3) unstable; urgency=medium", "changelog.Debian.gz", "text"),
    (b"", "", "text"),
])
def test_the_decision_table(head: bytes, name: str, kind: str) -> None:
    assert sniff_kind(head, name) == kind
