"""A record's extracted values are the document's data, written as validated
(newcomer probe 20, finding 1): the URL redaction meant for error text
(a query, a fragment, ``user:password@`` cut) never rewrites a value, which
kept its confidence while the record said otherwise. Only a credential
agentflow was given is masked in a value, and that field is then flagged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import Example
from agentflow._secrets import mask_keys, mask_secrets, register_secret
from agentflow.batch import ExtractResult, extract_many
from agentflow.errors import GroundingError
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.extraction.masked import MASKED, MASKED_REASON
from agentflow.extraction.records import to_record
from agentflow.extraction.report import render_report
from agentflow.providers._http import HttpClient
from agentflow.testing import FunctionModel, RecordedRequest
from agentflow.usage import Usage


class Meta(BaseModel):
    name: str | None = None
    url: str | None = None


EXAMPLES = [
    Example("[metadata]\nname = frob\nurl = https://frob.example/home\nlicense = MIT\n",
            Meta(name="frob", url="https://frob.example/home")),
    Example("[metadata]\nname = quux\nurl = https://github.com/ann/quux\nlicense = BSD\n",
            Meta(name="quux", url="https://github.com/ann/quux")),
]

URLS = [
    "https://github.com/sortiz/quux-hub#readme",                      # a fragment
    "https://docs.example.org/index.php?title=Shortlink&lang=en",     # a query
    "https://h.example/p?query=1",
    "git+ssh://git@github.com/kimlee/sshtool.git",                    # user@host
    "https://ann:pa55word@host.example/x",                            # user:pass@ (the document's)
]


async def _extract(doc: str, reply: dict[str, Any]) -> ExtractResult[Meta]:
    def answer(request: RecordedRequest) -> str:
        return json.dumps(reply)

    results = [r async for r in extract_many(FunctionModel(answer), [doc], Meta,
                                             examples=EXAMPLES, concurrency=1)]
    return results[0]


@pytest.mark.parametrize("url", URLS)
async def test_a_url_is_written_byte_identical_and_stays_confident(url: str) -> None:
    doc = f"[metadata]\nname = acme\nurl = {url}\nlicense = MIT\n"
    result = await _extract(doc, {"name": "acme", "url": url})
    assert result.ok and result.confidence["url"] == HELD
    record = to_record(result)
    assert record["output"] == {"name": "acme", "url": url}
    assert record["confidence"]["url"] == HELD and record["needs_review"] == []
    assert "masked" not in record
    start, end = record["spans"]["url"][0]
    assert doc[start:end] == record["output"]["url"]  # the span and the value agree
    page = render_report([record], {"0": doc})
    assert url.replace("&", "&amp;") in page and "?\u2026" not in page


class Link(BaseModel):
    label: str
    href: str


class Card(BaseModel):
    title: str
    links: list[Link]
    mirrors: list[str]
    extra: dict[str, str]


def test_nested_models_lists_and_dicts_are_written_as_validated() -> None:
    card = Card(title="see https://a.example/x?y=1#z",
                links=[Link(label="home", href="https://a.example/#readme"),
                       Link(label="repo", href="git+ssh://git@github.com/a/b.git")],
                mirrors=["https://u:p@m.example/?k=v", "ftp://m2.example/f#top"],
                extra={"issues": "https://a.example/issues?state=open"})
    result = ExtractResult(0, "a", card, None, Usage(), 1, 0.0,
                           repeated_items={"mirrors": [{"item": "https://m.example/?k=v",
                                                        "listed": 2, "written": 1}]},
                           dropped={"title": "'https://a.example/?q' is not in the document"})
    record = to_record(result)
    assert record["output"] == card.model_dump(mode="json")
    assert record["repeated_items"]["mirrors"][0]["item"] == "https://m.example/?k=v"
    assert record["dropped"]["title"] == "'https://a.example/?q' is not in the document"
    assert "masked" not in record and "needs_review" not in record


async def test_a_configured_key_in_a_value_is_masked_and_its_field_flagged() -> None:
    key = "sk-live-Zq8Rk2Lm4Np6Tx9Vb3Wc"
    register_secret(key)
    url = f"https://h.example/hook?token={key}#readme"
    doc = f"[metadata]\nname = acme\nurl = {url}\nlicense = MIT\n"
    result = await _extract(doc, {"name": "acme", "url": url})
    assert result.ok and result.output is not None and result.output.url == url
    record = to_record(result)
    assert record["output"] == {"name": "acme", "url": "https://h.example/hook?token=***#readme"}
    assert record["confidence"]["url"] == MASKED < REVIEW_BELOW
    assert record["confidence"]["name"] == HELD and record["needs_review"] == ["url"]
    assert record["masked"] == {"url": MASKED_REASON}
    assert key[:12] not in json.dumps(record)
    page = render_report([record], {"0": doc.replace(key, "***")})
    assert "credential agentflow was given" in page
    hidden = Card(title="t", links=[], mirrors=[], extra={f"key {key}": "x"})
    other = to_record(ExtractResult(0, "b", hidden, None, Usage(), 1, 0.0))
    assert other["output"]["extra"] == {"key ***": "x"} and other["masked"] == {
        "extra": MASKED_REASON} and other["needs_review"] == ["extra"]


def test_error_text_keeps_its_url_redaction() -> None:
    # a vendor's error echoes a presigned URL: its query is a credential
    error = GroundingError("fetch https://b.example/a.png?X-Amz-Signature=abc123 failed")
    record = to_record(ExtractResult(0, "a", None, error, Usage(), 1, 0.0))
    assert "abc123" not in record["error"]["message"]
    assert "https://b.example/a.png?\u2026" in record["error"]["message"]


def test_a_base_urls_credentials_are_masked_without_its_query_names() -> None:
    HttpClient("https://svc:Pa55-w0rd-Long@llm.example/v1?key=AIzaSyQ8x7w6v5u4t3s2r1"
               "&api-version=2024-06-01", vendor="openai")
    text = "see Pa55-w0rd-Long and AIzaSyQ8x7w6v5u4t3s2r1 on 2024-06-01"
    assert mask_keys(text) == "see *** and *** on 2024-06-01"
    assert mask_secrets("https://llm.example/v1?api-version=2024-06-01") == (
        "https://llm.example/v1?\u2026")


def test_a_credential_that_is_a_top_level_key_names_no_field_in_the_record() -> None:
    """An output that is a mapping whose key holds a registered credential: the
    key is masked in the output and wherever the record names a field by it."""
    key = "sk-live-Hd7Ks9Pq2Rt5Vw8Xy1Zb"
    register_secret(key)
    output = {key: "v", "plain": "w"}
    result = ExtractResult(0, "c", output, None, Usage(), 1, 0.0,
                           confidence={key: HELD, "plain": HELD},
                           spans={key: [(0, 1)], "plain": [(2, 3)]},
                           ungrounded=(key,))
    record = to_record(result)
    assert key[:12] not in json.dumps(record)
    assert record["output"] == {"***": "v", "plain": "w"}
    assert record["confidence"]["***"] == MASKED and record["confidence"]["plain"] == HELD
    assert record["needs_review"] == ["***"] and record["masked"] == {"***": MASKED_REASON}
    assert set(record["spans"]) == {"***", "plain"} and record["ungrounded"] == ["***"]
