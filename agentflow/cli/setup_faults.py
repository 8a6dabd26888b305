"""Set-up faults met at run time: an endpoint the first requests cannot reach.

``agentflow extract`` checks what it can before any request (the schema, the
key, the flags), but a wrong ``--base-url``, a server that is not running, a
host name that does not resolve or a certificate that does not verify only
show when the first requests go out. Such a fault is the same for every input,
so the run stops at the first one (exit 2, the URL and what to check named)
instead of failing each input after its retries. Once a request has gone
through, a connection failure is transient: that input is retried and, if it
still fails, recorded as failed like any other.
"""

from __future__ import annotations

import socket
import ssl
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["endpoint_of", "setup_fault"]

_CHECKS = {
    "dns": "the host name does not resolve: check the URL's host (a typo? a VPN?)",
    "tls": "the TLS handshake failed (certificate not trusted, expired, or for another "
           "host): check the URL's scheme and host, or the certificate store (SSL_CERT_FILE)",
    "refused": "nothing answers there: check that the server is running and listens on "
               "that host and port",
}


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _kind(exc: BaseException) -> str | None:
    """``"dns"``, ``"tls"``, ``"refused"`` when ``exc`` (or what caused it)
    says the endpoint cannot be reached at all; ``None`` otherwise."""
    for cause in _chain(exc):
        names = {cls.__name__ for cls in type(cause).__mro__}
        if isinstance(cause, socket.gaierror) or "ClientConnectorDNSError" in names:
            return "dns"
        if isinstance(cause, ssl.SSLError | ssl.CertificateError) or (
                names & {"ClientConnectorCertificateError", "ClientSSLError"}):
            return "tls"
    for cause in _chain(exc):
        names = {cls.__name__ for cls in type(cause).__mro__}
        if isinstance(cause, ConnectionRefusedError) or (
                names & {"ClientConnectorError", "ConnectError"}):
            return "refused"
    return None


def endpoint_of(model: Any, given: str | None = None) -> str:
    """The URL ``model`` sends its requests to, without credentials or query
    (``given``: the ``--base-url``, when the model does not tell)."""
    url = getattr(model, "base_url", None) or given  # every HTTP adapter has base_url
    if not url:
        return "the model's endpoint"
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def setup_fault(error: BaseException | None, model: Any, given: str | None = None
                ) -> str | None:
    """The message that stops the run when ``error`` (an input's failure)
    means the endpoint cannot be reached; ``None`` for any other failure."""
    if error is None:
        return None
    kind = _kind(error)
    if kind is None:
        return None
    return (f"cannot reach {endpoint_of(model, given)}: {type(error).__name__}: {error}; "
            f"{_CHECKS[kind]} (the run stopped before trying every input)")
