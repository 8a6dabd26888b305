"""agentflow's loggers: structlog over the stdlib logger ``"agentflow"``.

A library must not print on its own: records go to the stdlib logging tree,
so the application's logging configuration decides (by default only
warnings and above reach stderr). Each call's logger is bound to the agent
name, agent id and call id. Nothing is logged per chunk at INFO, and no
record ever holds an API key: every value passes through the shared mask
(``agentflow._secrets``) before rendering, an exception's traceback
(``exc_info``) too: it is formatted first, then masked, so a logged failure
whose message quotes a URL with its password shows the traceback without it.

``mask_records`` puts the same mask on the loggers of libraries agentflow
drives (the MCP SDK's transports, its HTTP client): their records quote the
URL they send to, query and key-like path segments included (in a logged
exception's traceback too: httpx2's ``HTTPStatusError`` quotes the URL).
``add_record_mask`` adds a mask of another kind to those records (the MCP
streamable HTTP session ids, ``mcp._session_ids``): one filter, one walk of
each logger family, message, traceback and stack alike. A library's logger
under a name an application may use as well (the MCP SDK's client session
logs on ``"client"``) is masked for the records the library's own code emits
only (``mask_records_from``).

A masked record carries its traceback as text (``exc_text``, masked), not
its ``exc_info``, as agentflow's own records do: every stdlib formatter
prints ``exc_text``, while a handler that formats the exception itself (a
JSON formatter's ``formatException``, an error tracker reading the
exception) would show the unmasked text.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, MutableMapping
from typing import Any

import structlog

from agentflow._secrets import mask_secrets, mask_value

__all__ = ["add_record_mask", "get_logger", "mask_records", "mask_records_from"]


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


_FORMATTER = logging.Formatter()
"""Formats a record's exception as every stdlib handler would (``formatException``)."""

_MASKS: list[Callable[[str], str]] = [mask_secrets]
"""What ``mask_records``' filter does to a record's texts, in order."""


def add_record_mask(mask: Callable[[str], str]) -> None:
    """Run ``mask`` (text in, text with its credentials masked out) on every
    text of each record ``mask_records`` masks, after ``mask_secrets``
    (idempotent: a mask added twice runs once)."""
    if mask not in _MASKS:
        _MASKS.append(mask)


def _masked(text: str) -> str:
    for mask in _MASKS:
        text = mask(text)
    return text


class _MaskRecords(logging.Filter):
    """A logger filter: the record's message with URLs' queries, fragments and
    user info cut and registered secrets masked (``mask_secrets``), and its
    exception's traceback too: formatted here, masked, and kept as the
    record's ``exc_text`` (which every ``logging.Formatter`` prints) in place
    of its ``exc_info``. A library logs a failure with ``exc_info=True``
    (the MCP SDK: ``GET stream error`` at DEBUG), and the exception's message
    quotes the URL it sent to, query included (httpx2's ``HTTPStatusError``:
    ``Client error '404 Not Found' for url 'http://host/mcp?api_key=<key>'``).
    The masks ``add_record_mask`` added run after ``mask_secrets``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = _masked(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = _masked(
                record.exc_text or _FORMATTER.formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = _masked(record.exc_text)
        if record.stack_info:
            record.stack_info = _masked(record.stack_info)
        return True


_MASK = _MaskRecords()


class _MaskRecordsFrom(_MaskRecords):
    """``_MaskRecords`` for the records emitted by the code under one
    directory (a package's) only."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        self.directory = os.path.join(os.path.normcase(os.path.abspath(directory)), "")

    def filter(self, record: logging.LogRecord) -> bool:
        if os.path.normcase(record.pathname).startswith(self.directory):
            return super().filter(record)
        return True


_FROM: dict[tuple[str, str], _MaskRecordsFrom] = {}
"""The filters ``mask_records_from`` put, by logger name and directory."""


def mask_records_from(name: str, directory: str) -> None:
    """Mask the records the stdlib logger ``name`` gets from the code under
    ``directory`` (a library's package), as ``mask_records`` does, and leave
    the others as they are: a library that logs on a name an application may
    use too (the MCP SDK's client session: ``"client"``). Idempotent."""
    if (name, directory) not in _FROM:
        _FROM[name, directory] = _MaskRecordsFrom(directory)
        logging.getLogger(name).addFilter(_FROM[name, directory])


def mask_records(*names: str) -> None:
    """Mask every record the stdlib loggers ``names`` (another library's)
    emit, as agentflow's own are: an application that turns on INFO logging
    (``logging.basicConfig(level=logging.INFO)``) sees, say, httpx's
    ``HTTP Request: POST https://host/mcp/***?…``, never the key in the URL.
    Idempotent; the filter runs only on records a logger emits (its level
    passed).

    A logger's filters never see its children's records, so every logger
    already made under each name is masked too (``"mcp"``: each module of
    the SDK imported so far, ``mcp.client.session``, ``mcp.shared.…``, whose
    failures are logged with their tracebacks)."""
    for name in names:
        family = [logging.getLogger(name)] + [
            logger for key, logger in list(logging.Logger.manager.loggerDict.items())
            if key.startswith(f"{name}.") and isinstance(logger, logging.Logger)]
        for logger in family:
            if _MASK not in logger.filters:
                logger.addFilter(_MASK)
