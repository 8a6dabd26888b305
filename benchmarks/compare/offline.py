"""The environment that keeps every framework off the network (stdlib only)."""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["OFFLINE_ENV", "apply_offline_env"]

OFFLINE_ENV: Mapping[str, str] = {
    "OPENAI_API_KEY": "sk-bench-dummy",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "OPENAI_AGENTS_DONT_LOG_MODEL_DATA": "1",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGCHAIN_TRACING": "false",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LANGCHAIN_CALLBACKS_BACKGROUND": "false",
    "OTEL_SDK_DISABLED": "true",
    "LOGFIRE_SEND_TO_LOGFIRE": "false",
    "DO_NOT_TRACK": "1",
    "HF_HUB_OFFLINE": "1",
    # anything that still tries the network through a proxy hits a dead local port
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}
"""Tracing and telemetry off, a dummy key, and a dead proxy for anything not on loopback."""

_SECRETS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LOGFIRE_TOKEN", "OPENAI_BASE_URL")


def apply_offline_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's ``os.environ``) with ``OFFLINE_ENV``
    set and tracing keys removed; returns it."""
    target: dict[str, str] = os.environ if env is None else env  # type: ignore[assignment]
    target.update(OFFLINE_ENV)
    for key in _SECRETS:
        target.pop(key, None)
    return target
