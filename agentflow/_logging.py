"""agentflow's loggers: structlog over the stdlib logger ``"agentflow"``.

A library must not print on its own: records go to the stdlib logging tree,
so the application's logging configuration decides (by default only
warnings and above reach stderr). Each call's logger is bound to the agent
name, agent id and call id. Nothing is logged per chunk at INFO, and no
record ever holds an API key: every value passes through the shared mask
(``agentflow._secrets``) before rendering, an exception's traceback
(``exc_info``) too: it is formatted first, then masked, so a logged failure
whose message quotes a URL with its password shows the traceback without it.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import structlog

from agentflow._secrets import mask_value

__all__ = ["get_logger"]


def _mask(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: credentials masked in every value."""
    return {key: mask_value(value) for key, value in event.items()}


def get_logger(name: str = "agentflow") -> structlog.stdlib.BoundLogger:
    """A structlog logger writing to the stdlib logger ``name``."""
    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        logging.getLogger(name),
        processors=[
            structlog.stdlib.filter_by_level,
            structlog.processors.format_exc_info,  # the traceback as text, then masked
            _mask,
            structlog.processors.KeyValueRenderer(key_order=["event"], sort_keys=True),
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
    )
    return logger
