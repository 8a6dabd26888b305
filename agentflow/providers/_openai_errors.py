"""The error classification of the OpenAI chat-completions wire, shared by every
OpenAI-style adapter: ``openai_error`` maps an HTTP error, ``payload_error``
an ``{"error": ...}`` payload inside a 200 reply or stream, and
``unsupported_feature`` makes a vendor's "feature unsupported" 400 an
``UnsupportedFeatureError`` naming the feature the engine should drop. What
an error's words say is refused (a feature, the history's form) is read in
``_openai_refusals`` (re-exported here).

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
    ContentFilteredError,
    OverloadedError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    UnsupportedFeatureError,
)
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._gemini_errors import relayed_error
from agentflow.providers._http import default_error, error_message
from agentflow.providers._ollama_errors import SPENT_PLAN
from agentflow.providers._openai_refusals import (
    _LOCAL_SERVER_WORDING,
    call_ids_refused,
    content_refused,
    engine_refused,
    reasoning_refused,
    roles_refused,
    schema_carrier,
    schema_refused,
    unsupported_feature,
)

__all__ = [
    "call_ids_refused",
    "content_refused",
    "engine_refused",
    "enveloped",
    "failed_output",
    "moderation_error",
    "openai_error",
    "payload_error",
    "reasoning_refused",
    "roles_refused",
    "schema_carrier",
    "unsupported_feature",
]

_DAILY_LIMIT = re.compile(r"per[- ]day\b|\b[RT]PD\b|daily (?:limit|quota)|"
                          + SPENT_PLAN.pattern, re.I)
"""A 429 for a daily limit: OpenAI's "Rate limit reached for gpt-4o ... on
requests per day (RPD): Limit 200, Used 200", OpenRouter's "Rate limit
exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model
requests per day" (Gitlawb/openclaude#936), or a plan's spent window
(Ollama Cloud's OpenAI-compatible endpoint: "you've reached your weekly usage
limit", ``_ollama_errors.SPENT_PLAN``). No wait within a call frees it:
a ``QuotaExceededError``, never retried."""


_SPENT_ACCOUNT_CODES = frozenset({"exceeded_current_quota_error"})
"""Error types for an account whose balance is spent: Moonshot's (Kimi) 429 or
403 ``exceeded_current_quota_error``, "Your account ... is not active,
organization ... exceeded current quota" (MoonshotAI/Kimi-K2#5)."""
_SPENT_ACCOUNT = re.compile(
    r"suspended due to insufficient balance|exceeded current quota", re.I)
"""The same words relayed by a gateway under its own code (OpenRouter's 429
"Provider returned error" holding Moonshot's "Your account ... is suspended
due to insufficient balance", anomalyco/opencode#24462). Retried, such an
error fails alike until someone pays: a ``QuotaExceededError``."""


def _param(data: Any) -> str | None:
    err = data.get("error") if isinstance(data, dict) else None
    param = err.get("param") if isinstance(err, dict) else None
    return param if isinstance(param, str) else None


def openai_error(
    vendor: str, status: int, headers: Mapping[str, str], body: bytes
) -> ProviderError:
    """Map an OpenAI-style HTTP error: ``UnsupportedFeatureError`` for a 400/422
    that refuses a feature (``unsupported_feature``), else by status
    (``default_error``: 429 ``insufficient_quota`` -> ``QuotaExceededError``).

    A 500 in a self-hosted server's own wording for a refused feature (llama.cpp
    answers a schema it cannot convert, a response format type it does not take
    and tools without ``--jinja`` with 500 ``server_error`` in many builds) is an
    ``UnsupportedFeatureError`` too, never retried as a server fault. A request
    over the context window (400/413/422, or llama.cpp's 500; a 429 for one
    request over the per-minute token budget) is a ``ContextLengthError``
    (``_context_errors``), never retried either; a 429 for a daily limit
    (``_DAILY_LIMIT``) and a 403 or 429 for a spent account (``_SPENT_ACCOUNT``)
    are ``QuotaExceededError``s; a 500 in which a chat template
    refuses the history's tool-call ids or roles (``call_ids_refused``,
    ``roles_refused``) a ``BadRequestError``. A Google RPC error (Gemini's
    OpenAI-compatible endpoint relays its own) is mapped as Gemini's
    (``relayed_error``)."""
    if b'"status"' in body and (relayed := relayed_error(vendor, status, headers, body)):
        return relayed
    if status in (400, 413, 422, 429, 500):
        message, code, data = error_message(body)
        too_long = context_length_error(vendor, status, message, code, data)
        if too_long is not None:
            return too_long
    if status == 500:
        message, code, data = error_message(body)
        if any(p.search(message) for p in _LOCAL_SERVER_WORDING):
            feature = unsupported_feature(message, _param(data))
            if feature is not None:
                return UnsupportedFeatureError(message, feature=feature, status=status,
                                               code=code, vendor=vendor,
                                               schema_only=schema_refused(message))
        if call_ids_refused(message) or roles_refused(message) or content_refused(message):
            # a chat template's or the server's refusal of the request: never retried
            return BadRequestError(message, status=status, code=code, vendor=vendor)
    if status in (403, 429):
        message, code, _ = error_message(body)
        if (code in _SPENT_ACCOUNT_CODES or _SPENT_ACCOUNT.search(message)
                or (status == 429 and _DAILY_LIMIT.search(message))):
            return QuotaExceededError(message, status=status, code=code, vendor=vendor)
    if status in (400, 422):
        message, code, data = error_message(body)
        feature = unsupported_feature(message, _param(data))
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, status=status, code=code,
                                           vendor=vendor, schema_only=schema_refused(message))
    return default_error(vendor, status, headers, body)


_FAILED_OUTPUT_CODES = frozenset({"tool_use_failed", "json_validate_failed"})
"""Error codes saying the server could not read or validate what the model
generated: Groq's 400 ``tool_use_failed`` ("Failed to call a function. Please
adjust your prompt. See 'failed_generation' for more details.", or "tool call
validation failed: ..."; groq/groq-typescript#28, huggingface/smolagents#1119,
over HTTP or as a stream's ``event: error``: anomalyco/opencode#1018) and
``json_validate_failed`` in JSON mode ("Failed to generate JSON. Please adjust
your prompt."; thepersonalaicompany/amurex-backend#38, build-with-groq/g1#23)."""


def failed_output(error: ProviderError) -> bool:
    """Whether ``error`` (a 400, or an error event inside a stream) says the
    vendor failed the generation at the model's output: the request was sound,
    the model wrote a tool call or JSON the server could not parse or match to
    the request (``_FAILED_OUTPUT_CODES``). Like Gemini's
    ``MALFORMED_FUNCTION_CALL`` it is a failed generation (finish reason
    ``error``), not a bad request: the same request, sampled again, usually
    succeeds."""
    return isinstance(error, BadRequestError) and error.code in _FAILED_OUTPUT_CODES


def moderation_error(vendor: str, payload: Mapping[str, Any], codes: frozenset[str]
                     ) -> ContentFilteredError | None:
    """A ``ContentFilteredError`` when ``payload``'s ``{"error": ...}`` carries
    one of the vendor's moderation ``codes`` (its ``code`` or ``type``, compared
    as strings): the vendor's filter stopped the input or the reply, and the
    same request is filtered again, so it is never retried. Else ``None``."""
    err = payload.get("error")
    if not codes or not isinstance(err, Mapping):
        return None
    for key in ("code", "type"):
        value = err.get(key)
        if value is not None and str(value) in codes:
            return ContentFilteredError(str(err.get("message") or value), code=str(value),
                                        vendor=vendor)
    return None


def enveloped(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """``payload`` with a bare error object put in its ``{"error": ...}``
    envelope: vLLM's ``ErrorResponse`` as older servers stream it, a data
    line ``{"object": "error", "message", "type", "param", "code"}`` (the same
    object its HTTP errors carry, modelscope/ms-agent#489: "Error code: 400 -
    {'object': 'error', 'message': ..., 'type': 'BadRequestError', 'param':
    None, 'code': 400}"; current vLLM wraps it in ``"error"``). Any other
    payload as it is."""
    if "error" in payload or payload.get("object") != "error" or "message" not in payload:
        return payload
    return {"error": {k: v for k, v in payload.items() if k != "object"}}


def payload_error(vendor: str, payload: Mapping[str, Any]) -> ProviderError | None:
    """The typed error of a payload carrying ``{"error": ...}`` (a mid-stream
    error data line, or an error inside a 200 body), or a bare vLLM error
    object (``enveloped``), typed by its ``code`` as its HTTP twin; else ``None``."""
    payload = enveloped(payload)
    err = payload.get("error")
    if not err:
        return None
    if not isinstance(err, Mapping):
        # a bare string (``{"error": "..."}``: LM Studio, llama.cpp forks) is read for
        # a context overflow too: LM Studio answers a prompt over the loaded window
        # so over HTTP 200 (lmstudio-ai/lmstudio-bug-tracker#2322, #546), which was
        # retried as a server error and never said to chunk the input
        return (context_length_error(vendor, None, str(err), None)
                or ServerError(str(err), vendor=vendor))
    code = err.get("code")
    if isinstance(code, int) and 400 <= code < 600:
        return openai_error(vendor, code, {}, orjson.dumps({"error": dict(err)}))
    message = str(err.get("message") or err)
    label = str(code or err.get("type") or "") or None
    kind = f"{err.get('type')} {code}".lower()
    kw: dict[str, Any] = {"code": label, "vendor": vendor}
    too_long = context_length_error(vendor, None, message, str(err.get("type") or label or ""),
                                    {"error": dict(err)})
    if too_long is not None:
        return too_long
    if "insufficient_quota" in kind or "exceeded_current_quota" in kind:
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
            return UnsupportedFeatureError(message, feature=feature,
                                           schema_only=schema_refused(message), **kw)
        return BadRequestError(message, **kw)
    return ServerError(message, **kw)
