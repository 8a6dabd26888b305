"""A ``base_url`` no request can go to is refused when the model is made, by
every vendor, as a typed ``InvalidModelError`` naming the URL (its credentials
masked): without its scheme, another scheme, no host, a port past 65535 or no
number, an unclosed IPv6 bracket. Each was taken, then failed at the first
request as a retried "cannot reach" error (a batch wrote a failed record for
every input, exit 1) or as a bare ``ValueError`` traceback; ``agentflow
extract`` now exits 2 before reading any input."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow.errors import InvalidModelError
from agentflow.providers.registry import get_model
from tests.test_cli import SCHEMA, agentflow, one_line

VENDORS = ["openai", "anthropic", "gemini", "ollama", "deepseek", "glm", "minimax", "dashscope"]
BAD = {
    "127.0.0.1:8000/v1": "not an http:// or https:// URL; did you mean 'http://127.0.0.1:8000/v1'",
    "localhost": "not an http:// or https:// URL; did you mean 'http://localhost'",
    "ftp://127.0.0.1/v1": "not an http:// or https:// URL",
    "file:///etc/passwd": "not an http:// or https:// URL",
    "http://": "names no host",
    "http://127.0.0.1:99999/v1": "is not a URL (Port out of range",
    "http://127.0.0.1:80a/v1": "is not a URL (Port could not be cast",
    "http://[::1/v1": "is not a URL (Invalid IPv6 URL)",
    "http://gw:pw-0123456789abcdef@[::1/v1": "is not a URL (Invalid IPv6 URL)",
}


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("url", list(BAD))
def test_a_base_url_no_request_can_go_to_is_refused_at_construction(vendor: str,
                                                                    url: str) -> None:
    if vendor == "ollama" and "://" not in url:  # read as the official client reads a host
        return  # (tests/test_ollama_host.py)
    with pytest.raises(InvalidModelError) as info:
        get_model(f"{vendor}:m", base_url=url, api_key="k-0123456789abcdef")
    message = str(info.value)
    assert message.startswith(f"{vendor}: base_url ") and BAD[url] in message, message
    assert "0123456789abcdef" not in message


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/v1", "https://[::1]:8443/v1?key=k",
                                 "HTTPS://Example.org", "http://gw:pw@127.0.0.1:9"])
def test_urls_requests_can_go_to_are_taken(url: str) -> None:
    model = get_model("ollama:m", base_url=url)  # no API key: user info is Basic auth
    assert model.model_name == "m"


async def test_the_cli_exits_2_on_such_a_base_url_before_reading_any_input(
        tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    status, _, stderr = await agentflow(
        "extract", "--schema", f"{SCHEMA}:Contact", "--input", str(doc), "--model",
        "openai:gpt-4o-mini", "--base-url", "127.0.0.1:9/v1", "--api-key", "k", "--out",
        str(out))
    assert status == 2, stderr
    assert one_line(stderr) == (
        "agentflow: error: openai: base_url '127.0.0.1:9/v1' is not an http:// or https:// "
        "URL; did you mean 'http://127.0.0.1:9/v1'?")
    assert not out.exists() or not out.read_bytes()


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_base_url_is_checked_once_per_model(vendor: str) -> None:
    """The model class checks its URL (it reads it first: its own host, the
    rate governor's key); its HTTP client takes that ``BaseUrl`` and checks it
    no more. It was checked two or three times (``OpenAIChatModel``: its
    class, the compatible base, the client)."""
    from agentflow.providers._http_settings import BaseUrl, checked_base_url

    model = get_model(f"{vendor}:m", base_url="http://127.0.0.1:9/v1/", api_key="k")
    client = model._http if hasattr(model, "_http") else model._client
    assert isinstance(client.base_url, BaseUrl) and client.base_url == "http://127.0.0.1:9/v1"
    assert checked_base_url(vendor, client.base_url) is client.base_url  # taken as checked
