"""One masking mechanism for credentials, shared by every adapter.

Adapters never decide on their own what to hide: the HTTP layer registers
each credential it is given (``register_secret``), and every place that
turns data into text a person or a file may see masks through
``mask_secrets``: ``ProviderError`` messages (so every vendor's error, from
an HTTP body, a stream event or a transport failure), log records, the
CLI's JSONL records and its error line.

What is masked: each registered secret, and any run of text that is a
prefix of one of at least ``MIN_PREFIX`` characters (servers echo a key's
first characters: ``invalid x-api-key sk-ant-api03-AbC…``). A masked run
becomes ``***``. Values shorter than ``MIN_SECRET`` characters are not
registered: no vendor issues such keys, and masking them would garble
ordinary words.

The registry holds the strings of the keys this process was given (it
grows by one entry per distinct key, never per request).
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["MASK", "MIN_PREFIX", "MIN_SECRET", "mask_secrets", "mask_value", "register_secret"]

MASK = "***"
"""What a masked run becomes."""

MIN_SECRET = 8
"""Shortest value registered as a secret, in characters."""

MIN_PREFIX = 8
"""Shortest echoed prefix of a secret that is masked, in characters."""

_lock = threading.Lock()
_secrets: dict[str, None] = {}  # insertion-ordered set; longest-first order in _ordered
_ordered: tuple[str, ...] = ()


def register_secret(value: str | None) -> None:
    """Mask ``value`` (and its echoed prefixes) from now on.

    A ``"Bearer <key>"`` header value registers ``<key>``. ``None``, empty and
    short values (< ``MIN_SECRET`` characters) are ignored.
    """
    global _ordered
    if not value:
        return
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() in ("bearer", "basic", "token"):
        value = rest.strip()
    if len(value) < MIN_SECRET or value in _secrets:
        return
    with _lock:
        _secrets[value] = None
        _ordered = tuple(sorted(_secrets, key=len, reverse=True))


def mask_secrets(text: str) -> str:
    """``text`` with every registered secret, and every echoed prefix of one
    (at least ``MIN_PREFIX`` characters), replaced by ``***``."""
    for secret in _ordered:
        text = _mask_one(text, secret)
    return text


def _mask_one(text: str, secret: str) -> str:
    head = secret[:MIN_PREFIX]
    start = text.find(head)
    if start < 0:
        return text
    parts: list[str] = []
    done = 0
    while start >= 0:
        end = start + len(head)
        limit = min(len(text), start + len(secret))
        while end < limit and text[end] == secret[end - start]:
            end += 1
        parts.append(text[done:start])
        parts.append(MASK)
        done = end
        start = text.find(head, end)
    parts.append(text[done:])
    return "".join(parts)


def mask_value(value: Any) -> Any:
    """``value`` with secrets masked in every string it holds (dicts, lists,
    tuples walked; other objects as they are)."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(mask_value(v) for v in value)
    return value
