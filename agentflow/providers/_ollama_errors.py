"""Ollama error classification (used by ``providers.ollama`` and its reply
reader): an HTTP error body ``{"error": "..."}`` or such a line after the 200
status as a ``ProviderError`` (shared/providers.md §6). A model without the
tools capability: 400 ``"... does not support tools"`` ->
``UnsupportedFeatureError("tools")``, so the structured-output engine falls
back to the prompt strategy.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentflow.errors import (
    ProviderError,
    ServerError,
    UnsupportedFeature,
    UnsupportedFeatureError,
)
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import default_error, error_message

__all__ = ["VENDOR", "map_error", "payload_error"]

VENDOR = "ollama"


def _unsupported(message: str) -> UnsupportedFeature | None:
    text = message.lower()
    if "does not support tools" in text:
        return "tools"
    if "does not support thinking" in text:
        return "thinking"
    return None


def map_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """An Ollama error (``{"error": "..."}``) as a ``ProviderError``: a 400
    "does not support tools" / "does not support thinking" ->
    ``UnsupportedFeatureError``; otherwise by status (404 unknown model,
    503 "server busy" -> ``OverloadedError``...); an input over the context
    length (when Ollama refuses it instead of truncating) -> ``ContextLengthError``."""
    message, _, data = error_message(body)
    too_long = context_length_error(VENDOR, status, message, None, data)
    if too_long is not None:
        return too_long
    feature = _unsupported(message) if status == 400 else None
    if feature is not None:
        return UnsupportedFeatureError(message, feature=feature, vendor=VENDOR)
    return default_error(VENDOR, status, headers, body)


def payload_error(message: str) -> ProviderError:
    """An ``{"error": ...}`` line after the 200 status."""
    too_long = context_length_error(VENDOR, None, message, None)
    if too_long is not None:
        return too_long
    feature = _unsupported(message)
    if feature is not None:
        return UnsupportedFeatureError(message, feature=feature, status=None, vendor=VENDOR)
    return ServerError(message, vendor=VENDOR)
