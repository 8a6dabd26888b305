"""One masking mechanism for credentials, shared by every adapter.

Adapters never decide on their own what to hide: the HTTP layer registers
each credential it is given (``register_secret``), and every place that
turns data into text a person or a file may see masks through
``mask_secrets``: ``ProviderError`` messages (so every vendor's error, from
an HTTP body, a stream event or a transport failure), log records, reprs,
the CLI's error line and a failed record's error.

Two parts. ``mask_keys`` masks the registered credentials (below), in any
text: also in what a document says, so an extracted value that quotes a key
is written masked (``agentflow.extraction.masked`` flags its field).
``redact_urls`` cuts every URL's query, fragment and user info: a presigned
URL's credential, echoed by a vendor that could not fetch it; it applies to
text a vendor or agentflow wrote (errors, logs, reprs), never to a record's
extracted values, which are the document's data written as validated.

What is masked: each registered secret, and any run of text of at least
``MIN_PREFIX`` characters that appears anywhere in one, letter case ignored
(servers echo a key's first characters — ``invalid x-api-key sk-ant-api03-AbC…``
—, its last ones — ``Incorrect API key provided: ****…Xyz0`` —, a middle part,
or the key upper-cased). A masked run becomes ``***``. Values shorter than
``MIN_SECRET`` characters are not registered: no vendor issues such keys,
and masking them would garble ordinary words.

The registry holds the strings of the keys this process was given (it
grows by one entry per distinct key, never per request).
"""

from __future__ import annotations

import re
import threading
from typing import Any

__all__ = [
    "MASK", "MIN_PREFIX", "MIN_SECRET", "mask_keys", "mask_secrets", "mask_value",
    "redact_urls", "register_secret", "registered",
]

MASK = "***"
"""What a masked run becomes."""

MIN_SECRET = 8
"""Shortest value registered as a secret, in characters."""

MIN_PREFIX = 8
"""Shortest echoed prefix of a secret that is masked, in characters."""

_lock = threading.Lock()
_secrets: dict[str, None] = {}  # insertion-ordered set
_grams: frozenset[str] = frozenset()
"""Every run of ``MIN_PREFIX`` characters of every secret, lower-cased."""


def register_secret(value: str | None) -> None:
    """Mask ``value`` (and its echoed prefixes) from now on.

    A ``"Bearer <key>"`` header value registers ``<key>``. ``None``, empty and
    short values (< ``MIN_SECRET`` characters) are ignored.
    """
    global _grams
    if not value:
        return
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() in ("bearer", "basic", "token"):
        value = rest.strip()
    if len(value) < MIN_SECRET or value in _secrets:
        return
    folded = value.lower()
    with _lock:
        _secrets[value] = None
        _grams = _grams | {folded[i:i + MIN_PREFIX]
                           for i in range(len(folded) - MIN_PREFIX + 1)}


_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)(?:[^\s/?#@\"'<>]*@)?([^\s?#\"'<>]*)"
                  r"([?#][^\s\"'<>]*?)?(?=[.,;:!)\]]*(?:[\s\"'<>]|$))")
"""A URL in free text: scheme, userinfo (dropped), host and path, query and fragment."""


def _redact_url(match: re.Match[str]) -> str:
    tail = "?\u2026" if match.group(3) and len(match.group(3)) > 1 else (match.group(3) or "")
    return f"{match.group(1)}{match.group(2)}{tail}"


def redact_urls(text: str) -> str:
    """``text`` with every URL's query, fragment and ``user:password@`` part
    cut (``https://h/p?X-Amz-Signature=...`` -> ``https://h/p?\u2026``): a
    presigned URL carries its credentials there, and vendors echo the URL of
    an image or document they could not fetch in their error message (OpenAI:
    ``"Error while downloading https://..."``)."""
    if "://" not in text:
        return text
    return _URL.sub(_redact_url, text)


def mask_secrets(text: str) -> str:
    """``text`` with URLs' queries, fragments and user info cut
    (``redact_urls``) and every run of at least ``MIN_PREFIX`` characters
    that appears in a registered secret masked (``mask_keys``): for text a
    vendor or agentflow wrote (errors, logs, reprs)."""
    return mask_keys(redact_urls(text))


def registered() -> bool:
    """Whether any secret is registered (``register_secret``): without one,
    ``mask_keys`` leaves every text as it is."""
    return bool(_grams)


def mask_keys(text: str) -> str:
    """``text`` with every run of at least ``MIN_PREFIX`` characters that
    appears in a registered secret (letter case ignored) replaced by ``***``:
    the whole secret, an echoed prefix, suffix or middle part of one. Nothing
    else changes (URLs are kept whole: ``mask_secrets`` cuts them)."""
    grams = _grams
    if not grams or len(text) < MIN_PREFIX:
        return text
    folded = text.lower()
    if len(folded) != len(text):  # a character that lower-cases to two ('İ'): keep offsets
        folded = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    k = MIN_PREFIX
    spans: list[list[int]] = []
    for i in range(len(folded) - k + 1):
        if folded[i:i + k] in grams:
            if spans and i <= spans[-1][1]:
                spans[-1][1] = i + k
            else:
                spans.append([i, i + k])
    if not spans:
        return text
    parts: list[str] = []
    done = 0
    for start, end in spans:
        parts.append(text[done:start])
        parts.append(MASK)
        done = end
    parts.append(text[done:])
    return "".join(parts)


def mask_value(value: Any, *, urls: bool = True) -> Any:
    """``value`` with secrets masked in every string it holds (dicts, lists,
    tuples walked; an exception as its masked ``repr``; other objects as
    they are): ``mask_secrets``, or with ``urls=False`` ``mask_keys`` only,
    in dict keys too (a document's values: URLs kept whole)."""
    if type(value) in _PLAIN:  # a null, a number, a boolean: nothing to mask, no tests
        return value
    if isinstance(value, str):
        return mask_secrets(value) if urls else mask_keys(value)
    if isinstance(value, BaseException):
        return mask_secrets(repr(value)) if urls else mask_keys(repr(value))
    if isinstance(value, dict):
        if not urls:  # a document's dict: its keys are its text too
            return {mask_keys(k) if isinstance(k, str) else k: mask_value(v, urls=False)
                    for k, v in value.items()}
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, _SEQUENCES):
        return type(value)(mask_value(v, urls=urls) for v in value)
    return value


_PLAIN = frozenset({type(None), bool, int, float})
_SEQUENCES = (list, tuple)
