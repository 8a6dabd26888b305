"""Stopping a reply whose grammar llama.cpp dropped (``local.LocalModel.stream``).

llama.cpp's llguidance sampler, when it cannot go on with a request's grammar
(a lexer over its limits, ``LexerTooComplex``; a grammar it cannot compile),
logs ``llg error: ...`` and decodes the rest of that reply without any
grammar, answering 200 as if nothing happened (measured with xllamacpp
2026.10). A small model then writes until ``max_tokens``: minutes of
unconstrained text, ending as ``OutputTruncatedError`` with advice about the
field's length that does not apply. ``guarded`` reads the server's log
(``_local_log.ChildLog``) at each chunk of a reply that was sent a grammar,
and as soon as a failure logged after the request began may be this reply's
(``GrammarFailure.may_be``: the text it had when it failed is where this
reply's text begins) it stops the reply (the connection closes, llama.cpp
stops decoding it) with ``GrammarEngineError`` naming llguidance's message.
Nothing of the reply after the failure is passed on.

The log says which text the failed reply had, not which request it was: with
several slots decoding at once, another reply with a grammar that had
written the same text when it failed (the same schema's first key) is
stopped too, and a grammar that did not compile (no text: it failed before
its reply began) stops every reply with a grammar then decoding. The log is
read in a thread, so the failure is seen at the first chunk after that
thread has read it: a reply that ends first is left to verification, as
before. Such a ``shared`` error never quotes llguidance's message or the
failed reply's text: both may be another request's (a grounded grammar holds
its document's text), so they stay in the server's log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentflow.errors import GrammarEngineError
from agentflow.model import ModelChunk, TextDelta
from agentflow.providers._local_log import ChildLog, GrammarFailure

__all__ = ["guarded"]

ADVICE = ("the embedded model's grammar engine (llama.cpp's llguidance) gave up on this "
          "request's grammar")
"""What ``GrammarEngineError`` says first."""


SHARED_REASON = ("withheld: other requests with a grammar were decoding, so it may be "
                 "theirs (the server's log has it)")
"""A ``shared`` error's ``reason``: llguidance's own may quote another request's text."""


def _message(failure: GrammarFailure, shared: bool) -> str:
    """``GrammarEngineError``'s message for ``failure``: what happened, where, what to do."""
    if shared:
        return (f"{ADVICE} while other requests with a grammar were decoding; the reply was "
                "stopped and is retried (the failure may be another request's: its message "
                "is in the server's log)")
    if failure.text is None:  # it did not compile: the grammar is wrong, not the document
        return (f"{ADVICE} before the reply began: {failure.reason}; the reply was stopped "
                "(a grammar agentflow built that llguidance cannot read: please report it)")
    return (f"{ADVICE} after {failure.text[-60:]!r}: {failure.reason}; the reply was stopped "
            "rather than decoded without it. A grounded field's grammar over this document "
            "is past llguidance's lexer limits: read the document in smaller chunks, or "
            "drop a `pattern` on a grounded field")


async def guarded(chunks: AsyncIterator[ModelChunk], log: ChildLog,
                  vendor: str = "local") -> AsyncIterator[ModelChunk]:
    """``chunks`` (a reply sent a grammar) passed on until ``log`` shows a
    grammar failure, logged since this call began, that may be this reply's
    (``chunks`` is closed either way, which ends the request).

    Raises:
        GrammarEngineError: that failure (its ``reason``, llguidance's
            message; the message says which text the reply had then);
            ``shared`` (retried as a cut stream) where other replies with a
            grammar were decoding since this one began: the failure may be
            theirs.
    """
    since = log.grammar_count
    text = ""
    log.grammar_replies += 1
    log.grammar_started += 1
    mine = log.grammar_started
    alongside = log.grammar_replies > 1  # another reply with a grammar is decoding
    try:
        async for chunk in chunks:  # or one began since this one did
            alongside = alongside or log.grammar_started > mine
            if isinstance(chunk, TextDelta):
                text += chunk.text
            if log.grammar_count > since:
                for failure in log.grammar_failures(since):
                    if failure.may_be(text):
                        reason = SHARED_REASON if alongside else failure.reason
                        raise GrammarEngineError(_message(failure, alongside), reason=reason,
                                                 vendor=vendor, shared=alongside)
            yield chunk
    finally:
        log.grammar_replies -= 1
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
