"""Text safe to send and store as JSON: ``clean_text`` replaces lone UTF-16
surrogates, ``clean_data`` does so in every string of decoded JSON
(``agentflow.messages`` re-exports both)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["clean_data", "clean_text"]


def clean_text(text: str) -> str:
    """``text`` with lone UTF-16 surrogates (from ``os.fsdecode`` or a vendor's
    ``\\udXXX`` escape) replaced by U+FFFD, so it can be sent and stored as JSON."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:  # via UTF-16 a pair split in two code points is joined
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def clean_data(value: Any) -> Any:
    """``value`` (decoded JSON) with ``clean_text`` applied to every string."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {clean_data(k): clean_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_data(v) for v in value]
    return value
