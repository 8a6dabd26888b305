"""Which failure of one input is the whole run's: ``run_wide`` (read by
``extract_many`` and ``agentflow extract``, which stop at the first)."""

from __future__ import annotations

from agentflow.errors._document import ChunkFailedError
from agentflow.errors._root import AgentflowError

__all__ = ["run_wide"]


def run_wide(error: BaseException | None) -> AgentflowError | None:
    """The fault in ``error`` that every other input of the run would meet too
    (``same_for_every_input``: misuse, a wrong key, a spent quota, a model the
    vendor does not have), or ``None`` when ``error`` is one input's own.

    A long document's ``ChunkFailedError`` is read through to its cause: a
    chunk refused for a wrong key is the run's fault, not the document's.
    """
    for _ in range(4):  # a chunk failure wraps its cause once; never loop on a cycle
        if isinstance(error, AgentflowError) and error.same_for_every_input:
            return error
        if not isinstance(error, ChunkFailedError):
            return None
        error = error.__cause__
    return None
