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
    BadRequestError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
    UnsupportedFeatureError,
)
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import (
    default_error,
    error_body,
    error_message,
    parse_retry_after,
)

__all__ = ["MISSING_SIGNATURE", "TOO_MANY_STATES", "VENDOR", "body_error", "map_error",
           "missing_signature", "payload_error", "relayed_error"]

VENDOR = "gemini"

_RPC_STATUS: dict[str, int] = {
    "CANCELLED": 499, "UNKNOWN": 500, "INVALID_ARGUMENT": 400, "DEADLINE_EXCEEDED": 504,
    "NOT_FOUND": 404, "ALREADY_EXISTS": 409, "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401, "RESOURCE_EXHAUSTED": 429, "FAILED_PRECONDITION": 400,
    "ABORTED": 409, "OUT_OF_RANGE": 400, "UNIMPLEMENTED": 501, "INTERNAL": 500,
    "UNAVAILABLE": 503, "DATA_LOSS": 500,
}
"""The HTTP status of each ``google.rpc.Code`` name (googleapis/googleapis
``google/rpc/code.proto``, each code's "HTTP Mapping"), for an error object
that carries its ``status`` but no numeric ``code``."""


def _retry_delay(details: Iterable[Any]) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"37s"``, ``"1.5s"``)."""
    for detail in details:
        if isinstance(detail, Mapping) and str(detail.get("@type", "")).endswith("RetryInfo"):
            try:
                return float(str(detail.get("retryDelay", "")).rstrip("s"))
            except ValueError:
                return None
    return None


def _quota_spent(details: Iterable[Any], message: str) -> bool:
    """Whether a 429 names a quota no wait within a call restores: a
    ``google.rpc.QuotaFailure`` violation of a daily quota (its ``quotaId``
    ``...PerDay...``) or of a quota of 0 (a model without a free tier:
    "Quota exceeded for metric: ..._free_tier_requests, limit: 0",
    google-gemini/gemini-cli#22486; "Gemini 2.5 Pro Preview doesn't have a free
    quota tier", retried 20 times in ai-christianson/RA.Aid#182)."""
    for detail in details:
        if not (isinstance(detail, Mapping)
                and str(detail.get("@type", "")).endswith("QuotaFailure")):
            continue
        for violation in detail.get("violations") or ():
            if isinstance(violation, Mapping) and (
                    "PerDay" in str(violation.get("quotaId", ""))
                    or str(violation.get("quotaValue", "")) == "0"):
                return True
    return "limit: 0," in message or "doesn't have a free quota tier" in message


def _refuses_response_schema(message: str) -> bool:
    """Whether a 400 refuses the native-output schema ("Invalid JSON payload
    received. Unknown name "x" at 'generation_config.response_schema'", "...
    response_schema.properties: should be non-empty for OBJECT type"): the
    engine then takes the tool path."""
    return any(name in message for name in ("response_schema", "responseschema",
                                            "response_json_schema", "responsejsonschema"))


TOO_MANY_STATES = "too many states for serving"
"""Gemini's 400 for a schema whose constraint is too big to serve ("The
specified schema produces a constraint that has too many states for serving.
Typical causes of this error are schemas with lots of text ..., long array
length limits ..., or complex value matchers"; googleapis/python-genai#660,
cline/cline#7897): a valid schema Gemini will not constrain decoding by. It
names no part of the request: ``native_output`` here (the response schema,
the usual carrier); ``GeminiChatModel.stream`` makes it ``tool_schema`` for a
request that had none, so the engine steps down a strategy either way."""


def _refuses_parameters(message: str) -> bool:
    """Whether a 400 refuses a function declaration's parameter schema ("...
    at 'tools[0].function_declarations[1].parameters'..."): on the tool path
    the engine then takes the prompt path, once."""
    return "function_declarations" in message and "parameters" in message


MISSING_SIGNATURE = "MISSING_THOUGHT_SIGNATURE"
"""``ProviderError.code`` of a request whose history holds a ``functionCall``
part without its ``thoughtSignature``: the 400 "Function call is missing a
thought_signature in functionCall parts", or a reply ended by finish reason
``MISSING_THOUGHT_SIGNATURE`` (ai.google.dev/gemini-api/docs/thought-signatures).
Sent again as it is, it fails the same way: not retried."""


def missing_signature(message: str, *, status: int | None = None) -> BadRequestError:
    """The ``BadRequestError`` (code ``MISSING_SIGNATURE``) of a history that
    lost a function call's thought signature, naming what to do."""
    return BadRequestError(
        f"{message}: the history sent back holds a functionCall part without its "
        "thoughtSignature; keep the provider_data of the model's ToolUseBlock and "
        "ThinkingBlock (gemini_thought_signature) when replaying a conversation",
        status=status, code=MISSING_SIGNATURE, vendor=VENDOR)


def map_error(status: int, headers: Mapping[str, str], body: bytes, *,
              vendor: str = VENDOR) -> ProviderError:
    """A Google RPC error (``{"error":{code,message,status,details}}``, maybe
    in a one-element list) as a ``ProviderError``: 400 ``API_KEY_INVALID`` ->
    ``AuthenticationError``; 400 "Function calling with a response mime type"
    or a refused response schema -> ``UnsupportedFeatureError("native_output")``;
    a refused function parameter schema -> ``UnsupportedFeatureError("tool_schema")``; 429 ->
    ``RateLimitedError`` with ``RetryInfo.retryDelay`` (else ``Retry-After``),
    ``QuotaExceededError`` for a daily quota or a quota of 0 (``_quota_spent``);
    400 "The input token count (N) exceeds the maximum number of tokens allowed
    (M)" -> ``ContextLengthError``; 400 "Function call is missing a
    thought_signature" -> ``missing_signature``; other statuses as usual (503 ->
    ``OverloadedError``)."""
    message, _, data = error_message(body)
    node = data[0] if isinstance(data, list) and data else data
    error = node.get("error") if isinstance(node, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    details = error.get("details") or []
    code = error.get("status")
    reasons = {d.get("reason") for d in details if isinstance(d, Mapping)}
    kw: dict[str, Any] = {"status": status, "code": code, "vendor": vendor}
    if "API_KEY_INVALID" in reasons or status == 401:
        return AuthenticationError(message, **kw)
    too_long = context_length_error(vendor, status, message, code, data)
    if too_long is not None:
        return too_long
    lowered = message.lower()
    if status == 400 and "missing a thought_signature" in lowered:
        return missing_signature(message, status=status)
    if status == 400 and "function calling with a response mime type" in lowered:
        return UnsupportedFeatureError(message, feature="native_output", **kw)
    if status == 400 and (_refuses_response_schema(lowered) or TOO_MANY_STATES in lowered):
        # this schema refused (a keyword, its size), not response schemas as such
        return UnsupportedFeatureError(message, feature="native_output", schema_only=True, **kw)
    if status == 400 and _refuses_parameters(lowered):
        return UnsupportedFeatureError(message, feature="tool_schema", **kw)
    if status == 400 and "function calling is not enabled" in lowered:
        return UnsupportedFeatureError(message, feature="tools", **kw)
    if status == 429 and _quota_spent(details, message):
        return QuotaExceededError(message, **kw)
    if status == 429:
        delay = _retry_delay(details)
        return RateLimitedError(message, retry_after=delay if delay is not None
                                else parse_retry_after(headers), **kw)
    normalized = orjson.dumps({"error": {"message": message, "code": code}})  # code: status name
    return default_error(vendor, status, headers, normalized)


def relayed_error(vendor: str, status: int, headers: Mapping[str, str],
                  body: bytes) -> ProviderError | None:
    """A Google RPC error an OpenAI-compatible endpoint relays, mapped as the
    native API's (``map_error``: 400 ``API_KEY_INVALID`` ->
    ``AuthenticationError``, a daily quota -> ``QuotaExceededError``, 429 with
    ``RetryInfo.retryDelay``), or ``None`` for any other body. Gemini's own
    ``/v1beta/openai`` endpoint sends the RPC error as a one-element list, or
    as the text of an OpenAI-style ``error.message`` (``{"error": {"message":
    "{\\n  \\"error\\": {\\"code\\": 400, ... \\"reason\\": \\"API_KEY_INVALID\\"...",
    "code": 400, "status": "Bad Request"}}``, continuedev/continue#10748): an
    invalid key was a ``BadRequestError`` whose message was that JSON, and a
    daily quota was retried."""
    node = _rpc_node(body)
    return None if node is None else map_error(status, headers, orjson.dumps(node),
                                               vendor=vendor)


def _rpc_node(body: bytes) -> Mapping[str, Any] | None:
    """The ``{"error": {code, message, status, details}}`` object of a Google
    RPC error in ``body`` (maybe in a list, maybe as the text of an outer
    error's ``message``), or ``None``."""
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    for _ in range(2):  # the body, then the document its message holds
        node = data[0] if isinstance(data, list) and data else data
        if not isinstance(node, Mapping) or not isinstance(error := node.get("error"), Mapping):
            return None
        if str(error.get("status")) in _RPC_STATUS and (
                isinstance(error.get("details"), list) or isinstance(error.get("code"), int)):
            return node
        text = error.get("message")
        if not (isinstance(text, str) and text.lstrip().startswith(("{", "["))):
            return None
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
    return None


def payload_error(data: Any) -> ProviderError | None:
    """The error an ``{"error": {code, message, status}}`` object (maybe in a
    one-element list) reports inside a 200 reply, a stream event or a
    stream's bare JSON text, mapped as its HTTP twin (``map_error``: by
    ``code``, else by the ``status`` name's HTTP mapping, else 500); ``None``
    for any other payload. The official SDK raises such a chunk as the
    ``APIError`` of its ``code`` (googleapis/python-genai ``_api_client.py``
    ``request_streamed``: a chunk starting ``{"error":``)."""
    node = data[0] if isinstance(data, list) and len(data) == 1 else data
    if not isinstance(node, Mapping) or "error" not in node:
        return None
    error = node["error"]
    code = error.get("code") if isinstance(error, Mapping) else None
    if not isinstance(code, int) or isinstance(code, bool) or not 400 <= code < 600:
        status = error.get("status") if isinstance(error, Mapping) else None
        code = _RPC_STATUS.get(str(status), 500)
    return map_error(code, {}, orjson.dumps(node))


def body_error(headers: Mapping[str, str], body: bytes, data: Any) -> ProviderError | None:
    """The error a 2xx body holds instead of a reply (``payload_error``), so
    the HTTP layer retries it like its HTTP twin when that is retryable
    (``UNAVAILABLE``, ``INTERNAL``, ``RESOURCE_EXHAUSTED``) and raises it at
    once otherwise. Only a body holding the key ``"error"`` is parsed (a
    reply's own text has its quotes escaped: ``error_body``); ``data``, the
    HTTP layer's parse, answers an object without ``error`` at once."""
    if type(data) is dict and "error" not in data:  # a reply: no scan of the body
        return None
    return payload_error(error_body(body))
