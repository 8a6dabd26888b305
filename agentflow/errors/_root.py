"""The root of the agentflow exception tree (``agentflow.errors`` re-exports it)."""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AgentflowError",
]


class AgentflowError(Exception):
    """Base class of every agentflow exception.

    Attributes:
        same_for_every_input: (class data) the fault lies in the run's set-up,
            not in one input, so every other input of a run would meet it too:
            misuse (``UsageError``), a wrong key (``AuthenticationError``), a
            model the vendor does not have (``NotFoundError``), a spent quota
            (``QuotaExceededError``). A bulk run (``extract_many``,
            ``agentflow extract``) stops at the first such error instead of
            failing every record the same way (``agentflow.errors.run_wide``).
            Faults of one input's content (``MediaTypeError``,
            ``UnsupportedInputError``: raised before any request, like misuse,
            but about that input's bytes) say ``False``.

    Every agentflow exception pickles and unpickles as it is (its message and
    attributes; not its cause or traceback, like any exception), so it can
    cross a process boundary (Ray actors, ``multiprocessing``,
    ``anyio.to_process``): unpickling never calls ``__init__``, whose
    keyword-only arguments Python's default exception pickling cannot pass,
    and which would decorate the message a second time.
    """

    same_for_every_input: ClassVar[bool] = False

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


def _rebuild(cls: type[AgentflowError], args: tuple[Any, ...],
             state: dict[str, Any]) -> AgentflowError:
    """An exception of ``cls`` with ``args`` and ``state``, ``__init__`` not called."""
    error = cls.__new__(cls, *args)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error
