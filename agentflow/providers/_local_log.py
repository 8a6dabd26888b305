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

llama.cpp also says only in its log when llguidance gives up on a request's
grammar, and then decodes that request without it (its reply is 200, as if
nothing happened): a grammar it cannot compile at the request's start, a
lexer over its limits at some token (measured with xllamacpp 2026.10)::

    0.04.025.822 E llg error: lexer error: too many expressions constructed
    <state>
    Tokens: ⟦{"‧name‧":‧ "⟧
    ...
    Stop: LexerTooComplex

So ``ChildLog`` also keeps each such failure (``GrammarFailure``): the
message, and the text the reply had when it failed (the dump's tokens, ``‧``
between them), once its dump's first lines are read.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass
from typing import IO

__all__ = ["KEPT_ERRORS", "ChildLog", "GrammarFailure"]

KEPT_ERRORS = 8
"""Error lines kept (the first ones: the cause comes first)."""

_ERROR = re.compile(rb"^\S+ E (.+)$")
"""A llama.cpp log line of level ``E``; group 1: the message (module tag first)."""

_GRAMMAR = "llg error: "
"""How llama.cpp's error line about a request's grammar begins (llguidance's message follows)."""

_TOKENS = re.compile(r"^Tokens: \u27e6(.*)\u27e7$")
"""The line of llguidance's state dump that shows the reply's tokens so far."""


@dataclass(frozen=True)
class GrammarFailure:
    """A request's grammar llguidance gave up on (llama.cpp's log).

    Attributes:
        reason: llguidance's message (``"lexer error: too many expressions
            constructed"``), its first line.
        text: the reply's text when it failed (the dump's tokens joined);
            ``None`` when the log did not say (a grammar that did not compile:
            it failed before the reply's first token).
    """

    reason: str
    text: str | None

    def may_be(self, text: str) -> bool:
        """Whether a reply that has written ``text`` so far may be the one that
        failed: the failure says no text, or ``text`` goes on from the one it
        shows (compared on letters and digits alone, however the dump spells
        the rest). Another reply that had written the same text cannot be
        told apart."""
        return self.text is None or _plain(text).startswith(_plain(self.text))


def _plain(text: str) -> str:
    return "".join(c for c in text if c.isalnum())


class ChildLog:
    """Relays ``stream`` (a child's stderr pipe) to file descriptor 2 in a
    daemon thread until it ends, keeping its first ``KEPT_ERRORS`` error lines.

    Args:
        stream: the pipe to read; closed here when it ends.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._errors: list[str] = []
        self._grammar: list[GrammarFailure] = []
        self.grammar_replies = 0
        """Replies with a grammar decoding now (``_local_grammar_guard.guarded``
        counts them: a failure met while several are is ``shared``)."""
        self.grammar_started = 0
        """Replies with a grammar begun so far (likewise)."""
        self._thread = threading.Thread(target=self._relay, daemon=True)
        self._thread.start()

    def _relay(self) -> None:
        pending: str | None = None  # a grammar failure whose dump may follow
        dump = False  # in that dump (``<state>`` read)
        try:
            for line in iter(self._stream.readline, b""):
                with contextlib.suppress(OSError):  # no stderr to write to
                    os.write(2, line)
                bare = line.rstrip(b"\r\n")
                if pending is not None:
                    text = bare.decode("utf-8", "replace")
                    if not dump and text == "<state>":
                        dump = True
                        continue
                    tokens = _TOKENS.match(text) if dump else None
                    if dump and tokens is None and not text.startswith("</state>"):
                        continue  # the lines before the tokens
                    self._grammar.append(GrammarFailure(
                        pending, None if tokens is None else tokens.group(1).replace("\u2027", "")))
                    pending, dump = None, False
                found = _ERROR.match(bare)
                if found is None:
                    continue
                message = " ".join(found.group(1).decode("utf-8", "replace").split())
                if len(self._errors) < KEPT_ERRORS:
                    self._errors.append(message)
                if message.startswith(_GRAMMAR):
                    pending = message[len(_GRAMMAR):]
        finally:
            if pending is not None:
                self._grammar.append(GrammarFailure(pending, None))
            with contextlib.suppress(OSError):
                self._stream.close()

    @property
    def grammar_count(self) -> int:
        """Grammar failures logged so far (``grammar_failures``' next index)."""
        return len(self._grammar)

    def grammar_failures(self, since: int) -> list[GrammarFailure]:
        """The grammar failures logged from the ``since``-th on (0: all), in
        the order logged."""
        return self._grammar[since:]

    def first_error(self, wait: float) -> str | None:
        """The first error line the child logged (its message, whitespace
        folded), or ``None``; waits up to ``wait`` seconds for the log to end
        (the child has ended or is ending: its last lines may still be in the pipe)."""
        self._thread.join(wait)
        return self._errors[0] if self._errors else None
