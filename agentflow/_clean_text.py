"""Text safe to send and store as JSON: ``clean_text`` replaces lone UTF-16
surrogates, ``clean_data`` does so in every string of decoded JSON
(``agentflow.messages`` re-exports both), and ``json_bytes`` serializes
any JSON value, also one orjson refuses."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import orjson

__all__ = ["clean_data", "clean_text", "json_bytes"]


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


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as ``None`` (what orjson writes)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def json_bytes(value: Any, *, option: int | None = None,
               default: Callable[[Any], Any] | None = None) -> bytes:
    """``orjson.dumps(value, default=default, option=option)``; a value orjson refuses that
    JSON carries all the same is written too: a string holding a lone UTF-16
    surrogate (a client's ``"\\ud83d"``, an emoji cut in two) with U+FFFD
    in its place, an integer beyond 64 bits (a 25-digit invoice number read
    into an ``int`` field) with its exact digits. So a value Python's own
    JSON parser gave, or a model's output, never fails a request, a stream or
    a save.

    Raises:
        TypeError: ``value`` holds something JSON cannot carry (orjson's error).
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError as refused:
        cleaned = clean_data(value)
        try:
            return orjson.dumps(cleaned, default=default, option=option)
        except TypeError:
            pass
        sort = bool(option and option & orjson.OPT_SORT_KEYS)
        try:  # integers beyond 64 bits: the standard library writes their digits
            return json.dumps(_finite(cleaned), ensure_ascii=False, separators=(",", ":"),
                              allow_nan=False, sort_keys=sort, default=default).encode()
        except (TypeError, ValueError):
            raise refused from None
