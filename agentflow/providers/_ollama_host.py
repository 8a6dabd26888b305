"""The Ollama server a model talks to when no ``base_url`` is given:
``$OLLAMA_HOST``, read as the ollama CLI and the official Python client read
it, else ``http://localhost:11434``.

The ollama SDK (ollama-python 0.6 ``_client.py``: ``Client.__init__`` takes
``host or os.getenv('OLLAMA_HOST')`` through ``_parse_host``) and the CLI
(ollama/ollama ``envconfig.Host``) both follow ``OLLAMA_HOST``; a user who
set it for a server on another machine or port had every agentflow request
refused by localhost while ``ollama run`` and the SDK worked.
"""

from __future__ import annotations

import ipaddress
import os
import urllib.parse

from agentflow._secrets import mask_secrets
from agentflow.errors import InvalidModelError

__all__ = ["DEFAULT_BASE_URL", "HOST_VARIABLE", "ollama_host", "server_url"]

DEFAULT_BASE_URL = "http://localhost:11434"
HOST_VARIABLE = "OLLAMA_HOST"

_UNSPECIFIED = frozenset({"0.0.0.0", "::"})
"""Bind-all addresses: ``OLLAMA_HOST=0.0.0.0`` is how the docs tell a *server*
to listen on every interface (docs.ollama.com/faq); a client reading the same
variable connects to the loopback instead (connecting to 0.0.0.0 fails on
Windows)."""


def server_url(base_url: str | None) -> str:
    """The Ollama server for a model's ``base_url``: ``ollama_host()`` when none
    is given; one written without a scheme (``localhost:11434``, ``gpu-box``)
    read as ``OLLAMA_HOST`` is (``ollama_host``), as the official client reads
    its ``host=`` and the variable alike (ollama-python ``Client(host)``:
    ``_parse_host(host or os.getenv('OLLAMA_HOST'))``); a URL as given (the
    caller checks it: ``_http_settings.checked_base_url``).

    Raises:
        InvalidModelError: a scheme-less ``base_url`` (or, with none,
            ``OLLAMA_HOST``) whose port is no number or out of range; the
            value is shown with any ``user:password@`` masked.
    """
    if not isinstance(base_url, str | None) or (base_url and "://" in base_url):
        return base_url
    try:
        return ollama_host(base_url, named="base_url") if base_url else ollama_host()
    except ValueError as exc:
        raise InvalidModelError(f"ollama: {exc}") from None


def ollama_host(value: str | None = None, *, named: str = HOST_VARIABLE) -> str:
    """The base URL for ``value`` (default: ``$OLLAMA_HOST``), parsed as
    ollama-python's ``_parse_host`` parses it: a missing scheme is ``http``,
    a missing port is 11434 (80 / 443 when the scheme is given), a path is
    kept without its trailing ``/``; a bare IPv6 address (``::1``, with no
    brackets and so no port) is read as the host; a bind-all address
    (``0.0.0.0``, ``::``) is the loopback; nothing set gives ``DEFAULT_BASE_URL``.

    Raises:
        ValueError: a port that is no number or out of range (as the SDK's
            parse raises), the message naming ``named`` (``OLLAMA_HOST``) and
            its value, any ``user:password@`` in it masked.
    """
    raw = (os.environ.get(HOST_VARIABLE) if value is None else value) or ""
    raw = raw.strip()
    if not raw:
        return DEFAULT_BASE_URL
    port = 11434
    scheme, _, hostport = raw.partition("://")
    if not hostport:
        scheme, hostport = "http", raw
    elif scheme == "http":
        port = 80
    elif scheme == "https":
        port = 443
    authority, slash, path = hostport.partition("/")
    if _bare_ipv6(authority):  # (urllib would read its last group as a port)
        hostport = f"[{authority}]{slash}{path}"
    try:
        split = urllib.parse.urlsplit(f"{scheme}://{hostport}")
        port = split.port or port
    except ValueError as exc:
        raise ValueError(f"{named}={_shown(raw)!r} is no Ollama server address: {exc} "
                         "(write host:port, [IPv6 address]:port or a URL)") from exc
    host = split.hostname or "127.0.0.1"
    if host in _UNSPECIFIED:
        host = "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}{split.path.rstrip('/')}"


def _shown(raw: str) -> str:
    """``raw`` as an error may show it: credentials before the host
    (``user:password@``) masked, and any key-like text (``mask_secrets``)."""
    scheme, sep, rest = raw.rpartition("://")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    return mask_secrets(f"{scheme}{sep}{authority}{slash}{path}")


def _bare_ipv6(authority: str) -> bool:
    """Whether ``authority`` is an IPv6 address without brackets (``::``, ``::1``)."""
    try:
        return isinstance(ipaddress.ip_address(authority), ipaddress.IPv6Address)
    except ValueError:
        return False
