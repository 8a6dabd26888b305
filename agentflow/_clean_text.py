"""Text safe to send and store as JSON: ``clean_text`` replaces lone UTF-16
surrogates, ``clean_data`` does so in every string of decoded JSON
(``agentflow.messages`` re-exports both); ``json_bytes`` serializes any
JSON value, also one orjson refuses, and ``loads_exact`` reads an integer
beyond 64 bits exactly; ``clean_tool_name`` is a call's tool name without
chat-template residue."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson

__all__ = ["clean_data", "clean_text", "clean_tool_name", "json_bytes", "loads_exact",
           "no_constant"]


def clean_tool_name(name: str | None) -> str:
    """A call's tool name without chat-template residue: cut at a special
    token (gpt-oss's ``query_dataset<|channel|>commentary`` from vLLM and
    Ollama, vllm-project/vllm#32587, ollama/ollama#12132) and stripped of
    outer blanks; no tool name holds either."""
    if not name:
        return ""
    at = name.find("<|")
    return (name if at < 0 else name[:at]).strip()


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
        TypeError: ``value`` holds something JSON cannot carry, or nests too
            deeply for any writer (orjson's error).
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError as refused:
        try:
            cleaned = clean_data(value)
        except RecursionError:  # nested past what any writer walks (orjson stops at 255)
            raise refused from None
        try:
            return orjson.dumps(cleaned, default=default, option=option)
        except TypeError:
            pass
        sort = bool(option and option & orjson.OPT_SORT_KEYS)
        try:  # integers beyond 64 bits: the standard library writes their digits
            return json.dumps(_finite(cleaned), ensure_ascii=False, separators=(",", ":"),
                              allow_nan=False, sort_keys=sort, default=default).encode()
        except (TypeError, ValueError, RecursionError):
            raise refused from None


_LONG_DIGITS = re.compile(r"(?<![.0-9])[0-9]{19}(?![.eE])")
_LONG_DIGITS_BYTES = re.compile(rb"(?<![.0-9])[0-9]{19}(?![.eE])")
"""An integer literal long enough to be beyond orjson's 64 bits (19 digits
or more, not a fraction's or an exponent's)."""


def no_constant(name: str) -> Any:
    """Refuse ``NaN``, ``Infinity`` or ``-Infinity`` (``name``): JSON has no
    such constants (the standard library's ``parse_constant`` reads them).

    Raises:
        ValueError: always.
    """
    raise ValueError(f"{name} is not JSON")


def loads_exact(text: str | bytes) -> Any:
    """``orjson.loads(text)``, except that an integer beyond 64 bits keeps its
    digits: orjson reads it as a float (``1.2345678901234568e+24``), which
    loses them and which an ``int`` field refuses (pydantic's
    ``int_parsing_size``: a 25-digit invoice number in a tool's arguments
    could never be valid); such text is read again by the standard library.

    Raises:
        orjson.JSONDecodeError: ``text`` is not JSON.
    """
    value = orjson.loads(text)
    long = (_LONG_DIGITS.search(text) if isinstance(text, str)
            else _LONG_DIGITS_BYTES.search(text))
    if long is not None:
        with contextlib.suppress(ValueError, RecursionError):
            return json.loads(text, parse_constant=no_constant)
    return value
