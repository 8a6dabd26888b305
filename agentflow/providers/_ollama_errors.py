"""Ollama error classification (used by ``providers.ollama`` and its reply
reader): an HTTP error body ``{"error": "..."}`` or such a line after the 200
status as a ``ProviderError`` (shared/providers.md §6). A model without the
tools capability: 400 ``"... does not support tools"`` ->
``UnsupportedFeatureError("tools")``, so the structured-output engine falls
back to the prompt strategy; an older server's refusal of a field's form
(a JSON schema in ``format`` before Ollama 0.5) names the feature the same
way. A model the server has not the memory to load
or run (a 500 "model requires more system memory (5.0 GiB) than is available
(3.9 GiB)", "llama runner process has terminated: CUDA error: out of
memory", "... unable to allocate CUDA0 buffer") -> ``OutOfMemoryError``,
never retried, saying what to check. Ollama Cloud's 429 for a spent plan
window ("... reached your weekly usage limit") -> ``QuotaExceededError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentflow.errors import (
    OutOfMemoryError,
    ProviderError,
    QuotaExceededError,
    ServerError,
    UnsupportedFeature,
    UnsupportedFeatureError,
)
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import default_error, error_body, error_message

__all__ = ["VENDOR", "body_error", "map_error", "payload_error"]

VENDOR = "ollama"


_OLD_SERVER_FIELD = re.compile(
    r"cannot unmarshal \w+ into Go struct field \w*Request\.(format|think|tools)\b", re.I)
"""An Ollama older than a request field's form refusing it as its Go decoder
does: a JSON schema in ``format`` before 0.5 ("json: cannot unmarshal object
into Go struct field ChatRequest.format of type string", ollama/ollama#7991,
Kiln-AI/Kiln#186), a ``think`` level (``"high"``) where only ``true``/``false``
was taken. The feature that field carries is unsupported there, so the engine
steps down a strategy instead of failing the call."""
_FIELD_FEATURE: dict[str, UnsupportedFeature] = {
    "format": "native_output", "think": "thinking", "tools": "tools"}


def _unsupported(message: str) -> UnsupportedFeature | None:
    text = message.lower()
    if "does not support tools" in text:
        return "tools"
    if "does not support thinking" in text:
        return "thinking"
    old = _OLD_SERVER_FIELD.search(message)
    return _FIELD_FEATURE[old.group(1).lower()] if old else None


_OUT_OF_MEMORY = ("requires more system memory", "out of memory", "unable to allocate",
                  "failed to allocate", "insufficient memory")
"""Ollama's words for a model that does not fit its server's memory: its own
check before loading (llm/server.go), and llama.cpp's allocation failures
the runner reports as it dies (ollama/ollama#5941, #8597, #9782, #11733)."""

MEMORY_HINT = ("the Ollama server has not the memory for this model; a retry meets the same "
               "limit: free memory on it ('ollama ps' lists the models loaded, 'ollama stop "
               "MODEL' unloads one; other programs), use a smaller model or quantization, or "
               "a smaller num_ctx (the context's cache grows with it)")


def _out_of_memory(message: str, status: int | None) -> OutOfMemoryError | None:
    text = message.lower()
    if not any(words in text for words in _OUT_OF_MEMORY):
        return None
    return OutOfMemoryError(message, hint=MEMORY_HINT, status=status, vendor=VENDOR)


SPENT_PLAN = re.compile(r"\b(?:hourly|session|daily|weekly|monthly) usage limit\b", re.I)
"""Ollama Cloud's 429 for a plan's spent window ("you've reached your hourly
usage limit, please wait or upgrade to continue", continuedev/continue#9233;
"you (user) have reached your session usage limit, upgrade for higher
limits", continuedev/continue#11444; "... weekly usage limit ...",
NousResearch/hermes-agent#68832): hours or days away, so no retry within a
call frees it: a ``QuotaExceededError``, never retried."""


def _spent(message: str, status: int | None) -> QuotaExceededError | None:
    if not SPENT_PLAN.search(message):
        return None
    return QuotaExceededError(message, status=status, vendor=VENDOR)


def map_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """An Ollama error (``{"error": "..."}``) as a ``ProviderError``: a 400
    "does not support tools" / "does not support thinking" ->
    ``UnsupportedFeatureError``; otherwise by status (404 unknown model,
    503 "server busy" -> ``OverloadedError``...); an input over the context
    length (when Ollama refuses it instead of truncating) -> ``ContextLengthError``;
    a 5xx for memory the model does not fit in -> ``OutOfMemoryError``."""
    message, _, data = error_message(body)
    too_long = context_length_error(VENDOR, status, message, None, data)
    if too_long is not None:
        return too_long
    no_memory = _out_of_memory(message, status) if status >= 500 else None
    if no_memory is not None:
        return no_memory
    feature = _unsupported(message) if status == 400 else None
    if feature is not None:
        return UnsupportedFeatureError(message, feature=feature, vendor=VENDOR)
    spent = _spent(message, status) if status in (402, 403, 429) else None
    return spent or default_error(VENDOR, status, headers, body)


def body_error(headers: Mapping[str, str], body: bytes, data: Any) -> ProviderError | None:
    """The error a 2xx whole reply holds instead of a reply (``{"error":
    "..."}``, as a proxy relays it with its 200), as ``payload_error`` reads
    it; ``None`` for a reply. Only a body holding the key ``"error"`` is
    parsed (``error_body``; ``data``, the HTTP layer's parse, answers an
    object without an ``error`` at once)."""
    if type(data) is dict and not data.get("error"):  # a reply: no scan of the body
        return None
    data = error_body(body)
    if not isinstance(data, dict) or not data.get("error"):
        return None
    return payload_error(str(data["error"]))


def payload_error(message: str) -> ProviderError:
    """An ``{"error": ...}`` line after the 200 status."""
    too_long = context_length_error(VENDOR, None, message, None)
    if too_long is not None:
        return too_long
    no_memory = _out_of_memory(message, None)
    if no_memory is not None:
        return no_memory
    feature = _unsupported(message)
    if feature is not None:
        return UnsupportedFeatureError(message, feature=feature, status=None, vendor=VENDOR)
    return _spent(message, None) or ServerError(message, vendor=VENDOR)
