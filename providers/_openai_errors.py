"""The error classification of the OpenAI chat-completions wire, shared by every
OpenAI-style adapter: ``openai_error`` maps an HTTP error, ``payload_error``
an ``{"error": ...}`` payload inside a 200 reply or stream, and
``unsupported_feature`` makes a vendor's "feature unsupported" 400 an
``UnsupportedFeatureError`` naming the feature the engine should drop.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    OverloadedError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    UnsupportedFeature,
    UnsupportedFeatureError,
)
from agentflow.providers._http import default_error, error_message

__all__ = ["openai_error", "payload_error", "unsupported_feature"]

_REFUSAL = re.compile(
    r"not support|unsupported|unavailable|not available|not allowed|must be auto|"
    r"isn't supported|is not enabled|must be set to false", re.I)
_NATIVE_WORDS = re.compile(
    r"response[_ ]?format|response[_ ]?mime[_ ]?type|response[_ ]?schema|json[_ ]schema|"
    r"json[_ ]object|json output|json mode|structured output", re.I)
"""Words naming the response format (native structured output)."""
_FEATURE_WORDS: tuple[tuple[UnsupportedFeature, re.Pattern[str]], ...] = (
    ("tool_choice", re.compile(r"tool[_ ]choice", re.I)),
    ("native_output", _NATIVE_WORDS),
    ("tools", re.compile(r"function[_ ]call|tool use|\btools\b|\btool\b", re.I)),
    ("thinking", re.compile(r"thinking|reasoning", re.I)),
)
_SCHEMA_REFUSAL = re.compile(r"invalid schema for response_format", re.I)
"""A schema the native path refuses ("Invalid schema for response_format 'X':
In context=(), 'additionalProperties' is required to be supplied and to be
false."; platform.openai.com/docs/guides/structured-outputs): the tool path
takes it, so it is an unsupported native output, not a bad request."""
_PARAM_FEATURE: dict[str, UnsupportedFeature] = {
    "tool_choice": "tool_choice", "response_format": "native_output", "tools": "tools",
}


def unsupported_feature(message: str, param: Any = None) -> UnsupportedFeature | None:
    """Which feature a 400 refuses as unsupported, or ``None`` for any other 400.

    The message must say the thing is unsupported/unavailable/not allowed;
    the feature is then read from ``param`` (OpenAI's ``error.param``) or from
    the words of the message, tool_choice first ("Thinking mode does not
    support this tool_choice" is about tool_choice, not thinking), then the
    response format before tools: a refused combination of the two (Gemini:
    "Function calling with a response mime type: 'application/json' is
    unsupported") is ``native_output``, even with ``param="tools"``, so the
    engine drops the response format and keeps the caller's tools. A
    response-format schema refused as invalid is ``native_output`` too.
    """
    if _SCHEMA_REFUSAL.search(message):
        return "native_output"
    if not _REFUSAL.search(message):
        return None
    named = _PARAM_FEATURE.get(param) if isinstance(param, str) else None
    if named == "tools" and _NATIVE_WORDS.search(message):
        return "native_output"
    if named is not None:
        return named
    for feature, words in _FEATURE_WORDS:
        if words.search(message):
            return feature
    return None


def _param(data: Any) -> str | None:
    err = data.get("error") if isinstance(data, dict) else None
    param = err.get("param") if isinstance(err, dict) else None
    return param if isinstance(param, str) else None


def openai_error(
    vendor: str, status: int, headers: Mapping[str, str], body: bytes
) -> ProviderError:
    """Map an OpenAI-style HTTP error: ``UnsupportedFeatureError`` for a 400/422
    that refuses a feature (``unsupported_feature``), else by status
    (``default_error``: 429 ``insufficient_quota`` -> ``QuotaExceededError``)."""
    if status in (400, 422):
        message, code, data = error_message(body)
        feature = unsupported_feature(message, _param(data))
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, status=status, code=code,
                                           vendor=vendor)
    return default_error(vendor, status, headers, body)


def payload_error(vendor: str, payload: Mapping[str, Any]) -> ProviderError | None:
    """The typed error of a payload carrying ``{"error": ...}`` (a mid-stream
    error data line, or an error inside a 200 body), else ``None``."""
    err = payload.get("error")
    if not err:
        return None
    if not isinstance(err, Mapping):
        return ServerError(str(err), vendor=vendor)
    code = err.get("code")
    if isinstance(code, int) and 400 <= code < 600:
        return openai_error(vendor, code, {}, orjson.dumps({"error": dict(err)}))
    message = str(err.get("message") or err)
    label = str(code or err.get("type") or "") or None
    kind = f"{err.get('type')} {code}".lower()
    kw: dict[str, Any] = {"code": label, "vendor": vendor}
    if "insufficient_quota" in kind:
        return QuotaExceededError(message, **kw)
    if "rate_limit" in kind:
        return RateLimitedError(message, **kw)
    if "overloaded" in kind:
        return OverloadedError(message, **kw)
    if "auth" in kind or "api_key" in kind:
        return AuthenticationError(message, **kw)
    if "invalid_request" in kind:
        feature = unsupported_feature(message, err.get("param"))
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, **kw)
        return BadRequestError(message, **kw)
    return ServerError(message, **kw)
