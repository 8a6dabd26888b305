"""The embedded model's server log: what its child process writes to stderr.

llama.cpp says why it could not load a model only in its log (measured with
xllamacpp 2026.10: ``xllamacpp.Server`` raises a bare ``RuntimeError``,
"Failed to init server, please check the input params."), one line per
message, ``<time> <level> <text>`` with level ``E`` for an error::

    0.00.007.299 E gguf_init_from_reader: invalid magic characters: 'not ', expected 'GGUF'
    0.00.007.757 E llama_model_load: error loading model: llama_model_loader: failed ...

The first error is the cause; the ones after it are its consequences
(``failed to load model``, ``exiting due to model loading error``). So
``ChildLog`` reads the child's stderr in a thread, passes every line on to
this process's stderr (file descriptor 2, where the child's log went when it
shared it) and keeps the first few error lines.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import IO

__all__ = ["KEPT_ERRORS", "ChildLog"]

KEPT_ERRORS = 8
"""Error lines kept (the first ones: the cause comes first)."""

_ERROR = re.compile(rb"^\S+ E (.+)$")
"""A llama.cpp log line of level ``E``; group 1: the message (module tag first)."""


class ChildLog:
    """Relays ``stream`` (a child's stderr pipe) to file descriptor 2 in a
    daemon thread until it ends, keeping its first ``KEPT_ERRORS`` error lines.

    Args:
        stream: the pipe to read; closed here when it ends.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._errors: list[str] = []
        self._thread = threading.Thread(target=self._relay, daemon=True)
        self._thread.start()

    def _relay(self) -> None:
        try:
            for line in iter(self._stream.readline, b""):
                with contextlib.suppress(OSError):  # no stderr to write to
                    os.write(2, line)
                found = _ERROR.match(line.rstrip(b"\r\n"))
                if found is not None and len(self._errors) < KEPT_ERRORS:
                    self._errors.append(" ".join(found.group(1).decode("utf-8", "replace").split()))
        finally:
            with contextlib.suppress(OSError):
                self._stream.close()

    def first_error(self, wait: float) -> str | None:
        """The first error line the child logged (its message, whitespace
        folded), or ``None``; waits up to ``wait`` seconds for the log to end
        (the child has ended or is ending: its last lines may still be in the pipe)."""
        self._thread.join(wait)
        return self._errors[0] if self._errors else None
