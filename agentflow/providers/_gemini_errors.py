"""Gemini API errors as ``ProviderError``s (``providers.gemini`` re-exports
``map_error``): the Google RPC shape (``{"error":{code,message,status,details}}``,
sometimes in a one-element list), ``API_KEY_INVALID``, refused response schemas,
``google.rpc.RetryInfo`` on 429 and requests over the context window
(shared/providers.md §4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from agentflow.errors import (
    AuthenticationError,
    ProviderError,
    RateLimitedError,
    UnsupportedFeatureError,
)
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import (
    default_error,
    error_message,
    parse_retry_after,
)

__all__ = ["VENDOR", "map_error"]

VENDOR = "gemini"


def _retry_delay(details: Iterable[Any]) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"37s"``, ``"1.5s"``)."""
    for detail in details:
        if isinstance(detail, Mapping) and str(detail.get("@type", "")).endswith("RetryInfo"):
            try:
                return float(str(detail.get("retryDelay", "")).rstrip("s"))
            except ValueError:
                return None
    return None


def _refuses_response_schema(message: str) -> bool:
    """Whether a 400 refuses the native-output schema ("Invalid JSON payload
    received. Unknown name "x" at 'generation_config.response_schema'", "...
    response_schema.properties: should be non-empty for OBJECT type"): the
    engine then takes the tool path."""
    return any(name in message for name in ("response_schema", "responseschema",
                                            "response_json_schema", "responsejsonschema"))


def _refuses_parameters(message: str) -> bool:
    """Whether a 400 refuses a function declaration's parameter schema ("...
    at 'tools[0].function_declarations[1].parameters'..."): on the tool path
    the engine then takes the prompt path, once."""
    return "function_declarations" in message and "parameters" in message


def map_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """A Google RPC error (``{"error":{code,message,status,details}}``, maybe
    in a one-element list) as a ``ProviderError``: 400 ``API_KEY_INVALID`` ->
    ``AuthenticationError``; 400 "Function calling with a response mime type"
    or a refused response schema -> ``UnsupportedFeatureError("native_output")``;
    a refused function parameter schema -> ``UnsupportedFeatureError("tool_schema")``; 429 ->
    ``RateLimitedError`` with ``RetryInfo.retryDelay`` (else ``Retry-After``);
    400 "The input token count (N) exceeds the maximum number of tokens allowed
    (M)" -> ``ContextLengthError``; other statuses as usual (503 -> ``OverloadedError``)."""
    message, _, data = error_message(body)
    node = data[0] if isinstance(data, list) and data else data
    error = node.get("error") if isinstance(node, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    details = error.get("details") or []
    code = error.get("status")
    reasons = {d.get("reason") for d in details if isinstance(d, Mapping)}
    kw: dict[str, Any] = {"status": status, "code": code, "vendor": VENDOR}
    if "API_KEY_INVALID" in reasons or status == 401:
        return AuthenticationError(message, **kw)
    too_long = context_length_error(VENDOR, status, message, code, data)
    if too_long is not None:
        return too_long
    lowered = message.lower()
    if status == 400 and "function calling with a response mime type" in lowered:
        return UnsupportedFeatureError(message, feature="native_output", **kw)
    if status == 400 and _refuses_response_schema(lowered):
        return UnsupportedFeatureError(message, feature="native_output", **kw)
    if status == 400 and _refuses_parameters(lowered):
        return UnsupportedFeatureError(message, feature="tool_schema", **kw)
    if status == 400 and "function calling is not enabled" in lowered:
        return UnsupportedFeatureError(message, feature="tools", **kw)
    if status == 429:
        delay = _retry_delay(details)
        return RateLimitedError(message, retry_after=delay if delay is not None
                                else parse_retry_after(headers), **kw)
    normalized = orjson.dumps({"error": {"message": message, "code": code}})  # code: status name
    return default_error(VENDOR, status, headers, normalized)
