"""What one model's HTTP transport is set up with: its ``HttpSettings``, its
API key (``api_key_from``, only for the vendor's own host: ``own_host``), its
rate governor (``shared_governor``), its headers' values as sent
(``checked_headers``), and the credentials registered for masking: the
credential headers' values (``register_credentials``), a ``base_url``'s
password and key-named query values (``register_url_credentials``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from urllib.parse import parse_qsl, urlsplit

from agentflow._secrets import redact_urls, register_secret
from agentflow.errors import InvalidModelError
from agentflow.providers._reply_cap import DEFAULT_MAX_REPLY_BYTES
from agentflow.ratelimit import RateGovernor, RateLimitSnapshot, governor_for

__all__ = [
    "CREDENTIAL_HEADERS",
    "BaseUrl",
    "HttpSettings",
    "RateHeaders",
    "api_key_from",
    "checked_base_url",
    "checked_headers",
    "is_credential_header",
    "join_url",
    "own_host",
    "register_credentials",
    "register_url_credentials",
    "shared_governor",
]

CREDENTIAL_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key",
})
"""Header names (lower case) whose values are credentials: registered for
masking by every ``HttpClient`` (the header names vendors use: OpenAI-style
``Authorization: Bearer``, Anthropic ``x-api-key``, Gemini ``x-goog-api-key``,
Azure-style ``api-key``); ``is_credential_header`` also takes gateways' own
names (``X-Auth-Token``, ``X-Portkey-Api-Key``...)."""

_CREDENTIAL_WORDS = ("auth", "key", "token", "secret", "password", "cookie", "session")


def is_credential_header(name: str) -> bool:
    """Whether header ``name`` carries a credential: one of ``CREDENTIAL_HEADERS``,
    or a name holding ``auth``, ``key``, ``token``, ``secret``, ``password``,
    ``cookie`` or ``session`` (any case)."""
    lowered = name.lower()
    return lowered in CREDENTIAL_HEADERS or any(w in lowered for w in _CREDENTIAL_WORDS)

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""Characters no header name or value may hold (aiohttp refuses them, CR and LF
first: header injection); a tab is allowed inside a value."""

RateHeaders = Callable[[Mapping[str, str]], "RateLimitSnapshot | None"]
"""``headers -> RateLimitSnapshot | None``: a vendor's rate-limit header reader."""


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Transport settings of one model.

    Attributes:
        connect_timeout: seconds to establish a connection.
        read_timeout: seconds between two reads of the reply (a stream that
            stalls longer fails with ``ProviderTimeoutError``). A whole
            (non-streamed) reply sends nothing until the model is done, so
            its wait is bounded by ``deadline`` instead (by ``read_timeout``
            when there is no deadline).
        max_retries: retries after the first attempt (0 disables them).
        backoff_initial / backoff_max: seconds, for exponential backoff with jitter.
        max_retry_after: longest server-requested wait honoured, in seconds: an
            error asking for a longer one (``Retry-After: 3600``, a spent
            hourly quota) is raised at once, its ``retry_after`` saying when,
            as the vendors' SDKs do, never slept on and sent again.
        connection_limit: concurrent connections of the session's connector.
        force_close: open a new connection per request (for servers that close
            connections they advertise as keep-alive, like llama.cpp's after a stream).
        deadline: seconds for one whole request: connecting, retries and
            reading every byte of the reply (default 600; ``None``: no limit).
            ``read_timeout`` alone cannot stop a server that keeps sending
            keep-alive comments; this can (``DeadlineExceededError``).
            The embedded model (``LocalModel``) lets a deadline left at the
            default follow each request's reply budget (``_local_deadline``).
        extra_headers: sent with every request; a credential's value
            (``is_credential_header``) is masked in errors and logs and shows as
            ``***`` in this repr.
        rate_governor: admit requests through the process's shared
            ``RateGovernor`` of the account and model family (``shared_governor``).
        max_reply_bytes: the most bytes one model reply may hold, whole or
            streamed, error bodies too, counted after decompression (default
            64 MiB, ``DEFAULT_MAX_REPLY_BYTES``; ``None``: no limit). Past it
            the reply fails with ``ReplyTooLargeError`` (never retried): a
            server that streams without end, or a 2 GB body, is cut off
            there instead of filling the memory (``_reply_cap``). A vendor
            batch API's files are no model reply: not capped.
    """

    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_retries: int = 3
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    max_retry_after: float = 120.0
    connection_limit: int = 128
    force_close: bool = False
    deadline: float | None = 600.0
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    rate_governor: bool = True
    max_reply_bytes: int | None = DEFAULT_MAX_REPLY_BYTES

    def __repr__(self) -> str:
        """The settings, a credential header's value shown as ``***``."""
        shown = {name: "***" if is_credential_header(name) else value
                 for name, value in self.extra_headers.items()}
        parts = (f"{f.name}={shown if f.name == 'extra_headers' else getattr(self, f.name)!r}"
                 for f in fields(self))
        return f"HttpSettings({', '.join(parts)})"


def api_key_from(explicit: str | None, env_var: str) -> str | None:
    """``explicit`` or the vendor's usual environment variable (``""``: none),
    without outer whitespace (a key pasted with a space, or read from a file or a
    ``.env`` with CRLF line ends); ``None`` when neither holds a key."""
    key = explicit or (os.environ.get(env_var) if env_var else None)
    return key.strip() or None if key else None


def shared_governor(
    vendor: str, base_url: str, api_key: str | None, family: str, settings: HttpSettings | None,
) -> RateGovernor | None:
    """The process's governor for (vendor, API root, key, model family), or ``None``
    when ``settings.rate_governor`` is off."""
    if settings is not None and not settings.rate_governor:
        return None
    return governor_for(vendor, base_url=base_url, api_key=api_key, family=family)


def join_url(base_url: str, path: str) -> str:
    """The URL of ``path`` under ``base_url``. A base URL's query string stays
    the query of every request (Azure OpenAI's ``?api-version=``, a gateway's
    ``?key=``), joined with the path's own (``?alt=sse``): appended after it,
    the path became part of the query value (``api-version=2024-10-21/chat/
    completions``) and the server answered 404 "Resource not found" or refused
    the version (ThinkInAIXYZ/deepchat#262)."""
    root, has_query, query = base_url.partition("?")
    if not has_query:
        return f"{base_url}/{path.lstrip('/')}"
    route, _, own = path.lstrip("/").partition("?")
    both = "&".join(q for q in (own, query) if q)
    return f"{root.rstrip('/')}/{route}" + (f"?{both}" if both else "")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_of(url: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of ``url`` (a bare ``host[:port]`` too), the host in
    lower case and a scheme's default port (``:443`` of ``https``) as none;
    ``None`` when it names no host or a port that is no number."""
    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
        port = parts.port
    except ValueError:  # not a URL (an unclosed IPv6 bracket, a port that is no number)
        return None
    if not parts.hostname:
        return None
    return parts.hostname, None if port == _DEFAULT_PORTS.get(parts.scheme.lower()) else port


class BaseUrl(str):
    """A ``base_url`` that ``checked_base_url`` took (no trailing slash): the
    proof that it was checked, so it is checked once per model. ``HttpClient``
    takes only this type; a model class checks its URL first, since it reads
    it before (``own_host``, the rate governor's key)."""

    __slots__ = ()


def checked_base_url(vendor: str, base_url: str) -> BaseUrl:
    """``base_url`` without a trailing slash, once it is a URL a request can go
    to (a ``BaseUrl`` is returned as it is: checked already): ``http`` or
    ``https``, a host, a port that is a number up to 65535. Each other was
    taken at construction and failed only at the first request, as a
    "cannot reach" ``ProviderConnectionError`` retried like a network fault
    (``127.0.0.1:8000/v1`` without its scheme, ``ftp://``, port ``99999``), or
    as a bare ``ValueError`` traceback (``http://[::1``, an unclosed IPv6
    bracket); a batch then wrote a failed record for every input.

    Raises:
        InvalidModelError: naming the URL (its credentials masked) and what
            is wrong with it.
    """
    if isinstance(base_url, BaseUrl):
        return base_url
    if not isinstance(base_url, str):
        raise InvalidModelError(f"{vendor}: base_url must be a str, got "
                                f"{type(base_url).__name__}")
    shown = redact_urls(base_url)
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018  (raises for a port that is no number, or past 65535)
    except ValueError as exc:  # an unclosed IPv6 bracket, a port that is no number
        raise InvalidModelError(f"{vendor}: base_url {shown!r} is not a URL ({exc}); "
                                "write it as http(s)://host[:port]/path") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        hint = f"; did you mean 'http://{shown}'?" if "://" not in base_url else ""
        raise InvalidModelError(
            f"{vendor}: base_url {shown!r} is not an http:// or https:// URL{hint}")
    if not parts.hostname:
        raise InvalidModelError(f"{vendor}: base_url {shown!r} names no host; write it as "
                                f"{scheme}://host[:port]/path")
    return BaseUrl(base_url.rstrip("/"))


def own_host(base_url: str, *vendor_urls: str) -> bool:
    """Whether ``base_url`` is on the vendor's own host (one of
    ``vendor_urls``: its default URL, or a bare host name it also serves
    from): only then is a key taken from the environment, so it never
    reaches a third-party server. Hosts compare as URLs do: letter case
    aside, a scheme's default port written out (``https://ollama.com:443``,
    as ``OLLAMA_HOST=https://ollama.com`` is read) or not (it was another
    host, and the key in the environment was not sent)."""
    host = _host_of(base_url)
    return host is not None and any(_host_of(url) == host for url in vendor_urls if url)


def checked_headers(vendor: str, headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` as they are sent: each value without its outer whitespace (not
    part of a field value, RFC 9110 section 5.5; a key read from a file or a
    ``.env`` with CRLF line ends carries a trailing ``\\r`` or ``\\n``).

    Raises:
        InvalidModelError: a name or value holds a control character inside it
            (aiohttp refuses it at the first request, as a bare ``ValueError``
            naming no header); a credential header is named as the API key, and
            its value is never shown.
    """
    sent: dict[str, str] = {}
    for name, value in headers.items():
        value = value.strip() if isinstance(value, str) else value
        if _CONTROL.search(name) or (isinstance(value, str) and _CONTROL.search(value)):
            what = ("the API key" if is_credential_header(name)
                    else f"the value of header {name!r}")
            raise InvalidModelError(
                f"{vendor}: {what} holds a control character (a line break or a NUL); "
                "remove it")
        sent[name] = value
    return sent


def register_credentials(headers: Mapping[str, str]) -> None:
    """Register the values of ``headers``' credential headers
    (``is_credential_header``) for masking in every error, log and repr."""
    for name, value in headers.items():
        if is_credential_header(name):
            register_secret(value)


def register_url_credentials(url: str) -> None:
    """Register ``url``'s password (``user:password@``) and the values of its
    query parameters named as a credential (``?key=...``, ``?token=...``:
    ``is_credential_header``'s words) for masking, so they are masked where
    ``redact_urls`` does not cut them (a record's values, a URL written
    without its query)."""
    parts = urlsplit(url)
    register_secret(parts.password)
    for name, value in parse_qsl(parts.query):
        if is_credential_header(name):
            register_secret(value)
