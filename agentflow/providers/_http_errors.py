"""Vendor errors over HTTP: the message, code and retry hint of an error
reply of any common shape, mapped to the ``ProviderError`` tree
(``default_error``), and the error for a refused redirect. Adapters with
their own error shapes build on ``error_message`` and ``parse_retry_after``
(``HttpClient`` takes a vendor's mapping as an ``ErrorMapper``). The wait an
error asks for is read in ``_retry_hints`` (re-exported here).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin

import orjson

from agentflow._secrets import redact_urls
from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
    RedirectError,
    ServerError,
    UnexpectedReplyError,
)
from agentflow.providers._retry_hints import implied_retry_after, parse_retry_after
from agentflow.providers._streams import ndjson_body, sse_body
from agentflow.providers._surrogates import loads_lone

__all__ = [
    "EXCERPT_BYTES",
    "HTML_TYPES",
    "NOT_JSON",
    "STREAM_TYPES",
    "BodyErrorCheck",
    "ErrorMapper",
    "default_error",
    "error_body",
    "error_message",
    "eventless_stream",
    "implied_retry_after",
    "parse_retry_after",
    "redirect_error",
    "server_verdict",
    "unexpected_reply",
    "unreadable_reply",
]

ErrorMapper = Callable[[int, Mapping[str, str], bytes], ProviderError]
"""``(status, headers, body) -> ProviderError``: a vendor's error mapping."""

BodyErrorCheck = Callable[[Mapping[str, str], bytes, Any], "ProviderError | None"]
"""``(headers, body, data) -> ProviderError | None``: finds an error a vendor
reports inside a 2xx JSON body (MiniMax: HTTP 200 + ``base_resp.status_code``);
``data`` is ``body`` parsed as JSON (the HTTP layer parses each such body
once), or ``NOT_JSON``. An ``HttpClient`` given one reads each 2xx reply that
is not a stream (``STREAM_TYPES``) whole before it returns it, so a body that
is no reply (empty, an HTML page under another type) is told too
(``unexpected_reply``)."""

NOT_JSON: Any = object()
"""A ``BodyErrorCheck``'s ``data`` for a body that is not one JSON document."""


def error_body(body: bytes) -> Any:
    """The decoded JSON of a 2xx ``body`` that may hold an error in place of a
    reply (a ``BodyErrorCheck``'s first step), or ``None``: parsed only when
    it holds the key ``"error"`` (a reply's own text has its quotes escaped,
    so most replies are never parsed twice); ``None`` too when it is no JSON."""
    if b'"error"' not in body:
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def error_message(body: bytes, *, _nested: bool = False) -> tuple[str, str | None, Any]:
    """``(message, code, parsed_json)`` from an error body of any common shape:
    ``{"error":{"message","code"|"type"}}``, ``{"error":"..."}``,
    ``{"message","code"}``, FastAPI's ``{"detail": ...}`` (``_detail``), or a
    one-element list of those; an HTML error page (a proxy's 413 or 502) by its
    ``<title>``. The body is parsed as JSON whatever its content type (DeepSeek
    sends octet-stream).

    A gateway's wrapped upstream error (OpenRouter: ``"Provider returned
    error"`` with the vendor's own body in ``error.metadata.raw``, per its
    API errors reference) reads ``"<message>: <upstream message>"``, so the
    vendor's words ("Thinking mode does not support this tool_choice") still
    classify the error; a message that is itself the upstream's whole error
    document (Gemini's OpenAI-compatible endpoint: ``"message": "{\\n
    \\"error\\": {\\"code\\": 400, \\"message\\": \\"API key not valid..."``,
    continuedev/continue#10748) reads as that document's message."""
    if not body.strip():
        return "(empty body)", None, None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body.decode(errors="replace")
        title = _HTML_TITLE.search(text[:4000])
        if title and title.group(1).strip():  # a proxy's or gateway's error page
            return f"{' '.join(title.group(1).split())} (an HTML error page)", None, None
        return text[:500] or "(empty body)", None, None
    if data is None:
        return "(null body)", None, None
    node = data[0] if isinstance(data, list) and data else data
    if isinstance(node, dict) and "detail" in node and not {"error", "message"} & set(node):
        return _detail(node["detail"]), None, data
    if isinstance(node, dict):
        err = node.get("error", node)
        if isinstance(err, str):
            return err, None, data
        if isinstance(err, dict):
            message = _message_text(err.get("message") or err.get("msg") or err)
            code = err.get("code") or err.get("type") or err.get("status")
            if not _nested and message.lstrip().startswith(("{", "[")):
                # the upstream's own error document as the message (a compatible
                # endpoint or gateway relaying it as text): its words
                inner, inner_code, inner_data = error_message(message.encode(), _nested=True)
                top = inner_data[0] if isinstance(inner_data, list) and inner_data else inner_data
                if isinstance(top, dict) and {"error", "message"} & set(top):
                    message, code = inner, code if code is not None else inner_code
            meta = err.get("metadata")
            raw = meta.get("raw") if isinstance(meta, dict) and not _nested else None
            if raw:
                inner = raw if isinstance(raw, str) else orjson.dumps(raw).decode()
                upstream = error_message(inner.encode(errors="replace"), _nested=True)[0]
                if upstream and upstream != "(empty body)" and upstream not in message:
                    message = f"{message}: {upstream}"
            return message, str(code) if code is not None else None, data
    return str(data)[:500], None, data


_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


def _message_text(value: Any) -> str:
    """An error's ``message`` as text. Mistral's API answers a 422 with the
    validation errors as an object, ``"message": {"detail": [{"loc", "msg",
    ...}]}`` (mistralai/platform-docs-public#212): read as ``detail`` is
    (``body.top_p: Input should be a valid number``), never as a Python repr."""
    if isinstance(value, dict) and "detail" in value:
        return _detail(value["detail"])
    if isinstance(value, list):
        return _detail(value)
    if isinstance(value, dict):
        return orjson.dumps(value).decode()[:500]
    return str(value)


def _detail(detail: Any) -> str:
    """The message of a FastAPI-style ``{"detail": ...}`` body (llama-cpp-python,
    proxies built on FastAPI): the text, or each validation error as
    ``loc: msg`` (``{"loc": ["body", "messages"], "msg": "field required"}``)."""
    if isinstance(detail, str):
        return detail or "(empty detail)"
    if isinstance(detail, list):
        parts = []
        for item in detail[:10]:
            if isinstance(item, dict) and "msg" in item:
                loc = ".".join(str(x) for x in item.get("loc") or ())
                parts.append(f"{loc}: {item['msg']}" if loc else str(item["msg"]))
            else:
                parts.append(str(item))
        return "; ".join(parts)[:500] or "(empty detail)"
    return str(detail)[:500]


def default_error(
    vendor: str, status: int, headers: Mapping[str, str], body: bytes
) -> ProviderError:
    """Map an HTTP error to the ``ProviderError`` tree by status."""
    message, code, _ = error_message(body)
    kw: dict[str, Any] = {"status": status, "code": code, "vendor": vendor}
    if status == 429:
        if code in ("insufficient_quota", "billing_error"):
            return QuotaExceededError(message, **kw)
        return RateLimitedError(message, retry_after=parse_retry_after(headers), **kw)
    if status in (400, 422):
        return BadRequestError(message, **kw)
    if status == 401:
        return AuthenticationError(message, **kw)
    if status == 402:
        return QuotaExceededError(message, **kw)
    if status == 403:
        return PermissionDeniedError(message, **kw)
    if status == 404:
        return NotFoundError(message, **kw)
    error: ProviderError
    if status in (503, 529):
        error = OverloadedError(message, **kw)
    elif status in (408, 409) or status >= 500:
        error = ServerError(message, **kw)
    else:
        return BadRequestError(message, **kw)
    hint = parse_retry_after(headers)
    if hint is not None:  # honoured by the retry wait, as for 429
        error.retry_after = hint
    return error


def server_verdict(error: ProviderError, headers: Mapping[str, str]) -> ProviderError:
    """``error`` with the server's own word on retrying it: ``x-should-retry:
    true`` or ``false`` (not a standard header; OpenAI and Anthropic send it,
    and proxies in front of them say ``false`` once their own retries are
    spent, earendil-works/pi#6586) overrides what the status alone says, as
    the vendors' SDKs obey it (openai-python and anthropic-sdk-python
    ``_base_client._should_retry``: "If the server explicitly says whether or
    not to retry, obey"). Any other value, or none, leaves ``error`` as it is."""
    verdict = headers.get("x-should-retry") or headers.get("X-Should-Retry")
    if verdict:
        word = verdict.strip().lower()
        if word in ("true", "false"):
            error.retryable = word == "true"
    return error


def redirect_error(vendor: str, status: int, url: str, location: str) -> RedirectError:
    """The error for a 3xx reply to ``url`` pointing at ``location``."""
    target = urljoin(url, location) if location else "(no Location header)"
    return RedirectError(
        f"{url} answered {status} redirecting to {target}; redirects are not followed "
        f"(the request's credentials must not reach another origin): set base_url to the "
        f"target if you trust it", location=target, status=status, vendor=vendor)


HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
"""Content types of a web page, never of an API reply."""

STREAM_TYPES = frozenset({"text/event-stream", "application/x-ndjson"})
"""Content types of a streamed reply (SSE; Ollama's NDJSON): read as it comes,
never whole for a ``BodyErrorCheck``."""

EXCERPT_BYTES = 16384
"""What is read of an HTML reply to name it (its head and the start of its text)."""

_TAGS = re.compile(rb"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>", re.I | re.S)


def unexpected_reply(vendor: str, status: int, content_type: str,
                     body: bytes) -> UnexpectedReplyError | None:
    """The error for a 2xx ``body`` that is no API reply: empty (or blank), or
    an HTML page (``content_type`` says so, or the body opens as one whatever
    the type); ``None`` for any other body. ``body`` may be the page's start
    only (``EXCERPT_BYTES``)."""
    mime = content_type.split(";")[0].strip().lower()
    if body[:1] == b"{" and mime not in HTML_TYPES:  # a JSON object: neither blank nor a page
        return None
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if not body.strip():
        what, excerpt = "an empty body", ""
    elif mime in HTML_TYPES or head.startswith((b"<!doctype html", b"<html")):
        what, excerpt = "an HTML page", _page_excerpt(body)
    else:
        return None
    shown = f": {excerpt!r}" if excerpt else ""
    return UnexpectedReplyError(
        f"a {status} reply with {what} (content type {content_type or '(none)'}){shown}: "
        "not the API's reply; a proxy, gateway or CDN between here and the API answered "
        "(or the API sent nothing): retried; if it lasts, check base_url and any proxy",
        content_type=content_type, excerpt=excerpt, status=status, vendor=vendor)


def eventless_stream(vendor: str, status: int, content_type: str,
                     body: bytes) -> UnexpectedReplyError:
    """The error for a 2xx event stream (``STREAM_TYPES``) that ended with no
    event: nothing at all, or only comments and blank lines (``body``: all of
    it). Retried as an empty body is: nothing of a reply was read."""
    text = " ".join(body.decode(errors="replace").split())
    what = f"only comments and blank lines ({len(body)} bytes)" if text else "nothing in it"
    return UnexpectedReplyError(
        f"a {status} event stream (content type {content_type}) that ended with no event, "
        f"{what}: not the API's reply; a proxy or gateway cut it, or the server sent "
        "nothing: retried; if it lasts, check base_url and any proxy",
        content_type=content_type, excerpt=redact_urls(text[:160]), status=status,
        vendor=vendor)


def unreadable_reply(vendor: str, status: int, content_type: str,
                     body: bytes) -> UnexpectedReplyError | None:
    """The error for a whole 2xx ``body`` that should be one JSON document and
    is not: cut off (it ends mid-value: a proxy or a crashed server closed
    the reply early) or malformed; retried as a 5xx is (the same request
    usually reads whole the next time). ``None`` for a JSON body, and for a
    stream under another content type (SSE fields, NDJSON lines), which the
    adapter reads as one."""
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if sse_body(body) or ndjson_body(body) or loads_lone(body)[0]:
            return None
        text = body.decode(errors="replace").strip()
        cut = exc.pos >= len(body.rstrip()) or exc.msg.startswith("unexpected end")
        what = "cut off (it ends mid-value)" if cut else f"malformed ({exc.msg} at byte {exc.pos})"
        excerpt = redact_urls(" ".join(text.split()))
        if len(excerpt) > 160:
            excerpt = f"{excerpt[:100].rstrip()} ... {excerpt[-50:].lstrip()}"
        return UnexpectedReplyError(
            f"a {status} reply whose JSON body is {what} ({len(body)} bytes, content type "
            f"{content_type or '(none)'}): {excerpt!r}: not a whole API reply; a proxy or the "
            "server ended it early or mangled it: retried; if it lasts, check base_url and "
            "any proxy", content_type=content_type, excerpt=excerpt, status=status,
            vendor=vendor)
    return None


def _page_excerpt(body: bytes, limit: int = 160) -> str:
    """An HTML page's title and the start of its text, whitespace collapsed,
    URLs' queries dropped, at most ``limit`` characters."""
    title = _HTML_TITLE.search(body[:EXCERPT_BYTES].decode(errors="replace"))
    name = " ".join(title.group(1).split()) if title else ""
    start = body.find(b"<body")
    text = _TAGS.sub(b" ", body[start if start >= 0 else 0:EXCERPT_BYTES])
    words = " ".join(text.decode(errors="replace").split())
    if name and words.startswith(name):
        words = words[len(name):].lstrip(" -:|")
    excerpt = f"{name} | {words}" if name and words else name or words
    excerpt = redact_urls(excerpt)
    return excerpt if len(excerpt) <= limit else excerpt[:limit - 3].rstrip() + "..."
