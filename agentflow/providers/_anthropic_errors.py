"""Anthropic error classification (used by ``providers.anthropic`` and its
stream reader): an HTTP error body ``{"type":"error","error":{"type","message"}}``,
a mid-stream ``event: error`` or such an envelope in a 200 body as a
``ProviderError`` (shared/providers.md §3; docs.anthropic.com/en/api/errors).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from agentflow.errors import (
    ProviderError,
    QuotaExceededError,
    UnsupportedFeature,
    UnsupportedFeatureError,
)
from agentflow.providers._anthropic_batch import STATUS_OF_ERROR_TYPE
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import default_error, error_body, error_message

__all__ = ["VENDOR", "body_error", "detail_code", "map_error", "stream_error"]

VENDOR = "anthropic"


_GRAMMAR_LIMITS = ("compiled grammar is too large", "too complex for compilation",
                   "too many optional parameters")
"""Anthropic's 400s for a structured-output schema its constrained decoding will
not compile ("The compiled grammar is too large, which would cause performance
issues. Simplify your tool schemas or reduce the number of strict tools.",
anthropics/anthropic-sdk-python#1185; "Schema is too complex for compilation";
"Schemas contains too many optional parameters", anthropics/claude-code#55539):
the grammar comes from ``output_config.format`` (this adapter sends no strict
tools), so it is the native output that is refused and the tool path takes it."""


def _unsupported(message: str) -> UnsupportedFeature | None:
    """The feature a 400 message says the model refuses, or ``None``."""
    text = message.lower()
    if "tool_choice forces tool use" in text:
        return "tool_choice"
    if any(words in text for words in _GRAMMAR_LIMITS):
        return "native_output"
    if ("output_config" in text or "output_format" in text or "structured output" in text) and (
        "not support" in text or "unsupported" in text or "not available" in text
        or "schema" in text  # a schema feature refused ("...format.schema: For 'object'...")
    ):
        return "native_output"
    if "input_schema" in text:  # a tool's schema refused ("tools.0.custom.input_schema: ...")
        return "tool_schema"
    if "thinking" in text and ("not support" in text or "unsupported" in text):
        return "thinking"
    return None


_SPENT = ("credit balance is too low", "reached your specified api usage limits",
          "extra usage is required")
"""Messages of a spent balance or spending limit that Anthropic sends as a 400
``invalid_request_error`` ("Your credit balance is too low to access the
Anthropic API", anthropics/claude-quickstarts#229; "You have reached your
specified API usage limits. You will regain access on ...",
anthropics/claude-code#2127) or a 429 ``rate_limit_error`` ("Extra usage is
required for long context requests.", anthropics/claude-code#29584): no retry
helps, and none is the request's fault."""


_SPENT_CODES = frozenset({
    "contract_spend_limit_reached", "enforced_spend_limit_reached",
    "linked_organization_spend_limit_reached", "linked_organization_billing_unavailable",
})
"""``error.details.error_code`` values of a spent contract, tier threshold or
linked organization's limit (anthropic-sdk-python 2.10 ``_error_classes.py``
``ERROR_CLASSES``: ``(429, "enforced_spend_limit_reached")`` "The organization
has crossed the monthly API usage threshold of its API tier", ``(429,
"contract_spend_limit_reached")`` "...reached the spend limit of its
contract"; ``(402, "linked_organization_*")``): 429s the SDK retries by status
alone, but no wait refills a monthly limit, so they are raised at once. A
``ramp_limit_exceeded`` 429 ("Retry after the time in the ``retry-after``
header") stays a ``RateLimitedError``."""


def detail_code(data: Any) -> str | None:
    """``error.details.error_code`` of an Anthropic error body, or ``None``
    (anthropic-sdk-python 2.10 ``_exceptions.extract_error_code``)."""
    error = data.get("error") if isinstance(data, Mapping) else None
    details = error.get("details") if isinstance(error, Mapping) else None
    code = details.get("error_code") if isinstance(details, Mapping) else None
    return code if isinstance(code, str) else None


def map_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """An Anthropic error (``{"type":"error","error":{"type","message"}}``) as a
    ``ProviderError``: by status (529 -> ``OverloadedError``, 429 ->
    ``RateLimitedError`` with ``retry-after``...), and a 400 naming a refused
    feature -> ``UnsupportedFeatureError``; a 400/413 "prompt is too long: N tokens >
    M maximum" (or "input length and `max_tokens` exceed context limit") ->
    ``ContextLengthError``; a 400 or 429 saying the balance or spending limit
    is spent (``_SPENT``), or whose ``error.details.error_code`` says a spend
    limit is reached (``_SPENT_CODES``) -> ``QuotaExceededError`` (never retried)."""
    message, code, data = error_message(body)
    too_long = context_length_error(VENDOR, status, message, code, data)
    if too_long is not None:
        return too_long
    detail = detail_code(data)
    if detail in _SPENT_CODES or (
            status in (400, 429) and any(words in message.lower() for words in _SPENT)):
        return QuotaExceededError(message, status=status, code=detail or code, vendor=VENDOR)
    if status == 400:
        feature = _unsupported(message)
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, code=code, vendor=VENDOR)
    return default_error(VENDOR, status, headers, body)


def stream_error(data: Mapping[str, Any]) -> ProviderError:
    """A mid-stream ``event: error`` mapped as if it were the HTTP error."""
    error = data.get("error")
    kind = error.get("type") if isinstance(error, Mapping) else None
    return map_error(STATUS_OF_ERROR_TYPE.get(str(kind), 500), {}, orjson.dumps(data))


def body_error(headers: Mapping[str, str], body: bytes, data: Any) -> ProviderError | None:
    """The error a 2xx body holds instead of a ``message`` (the error envelope
    ``{"type": "error", "error": {"type", "message"}}``, as a gateway or proxy
    relays it with its 200), mapped by its type as its HTTP twin
    (``stream_error``), so the HTTP layer retries ``overloaded_error``,
    ``api_error``, ``rate_limit_error``... like the 529/500/429 they stand
    for (anthropic-sdk-python ``_base_client``: 408/409/429/5xx are retried)
    and raises the others at once. Only a body holding the key ``"error"``
    is parsed (``error_body``); ``data``, the HTTP layer's parse, answers a
    reply (``"type"`` other than ``"error"``) at once."""
    if type(data) is dict and data.get("type") != "error":  # no scan of the body
        return None
    data = error_body(body)
    if not isinstance(data, dict) or data.get("type") != "error" or not isinstance(
            data.get("error"), Mapping):
        return None
    return stream_error(data)
