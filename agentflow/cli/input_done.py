"""What ``agentflow extract`` keeps of one input's ``ExtractResult``: its
record and what the summary line counts, whether the input ran in this
process or in a worker process (``agentflow.cli.workers``), which sends
exactly this."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentflow.cli.progress import BEFORE_REQUEST_LABEL, SUSPECT_LABELS
from agentflow.cli.setup_faults import setup_fault
from agentflow.documents.names import printable
from agentflow.errors.run_wide import run_wide
from agentflow.extraction.records import to_record
from agentflow.model import Usage

__all__ = ["InputDone", "Reach", "Settle"]


@dataclass(frozen=True, slots=True)
class InputDone:
    """One input's outcome, as the run's writer needs it (plain data: it
    crosses from a worker process pickled).

    Attributes:
        id: the input's id.
        record: its record (``agentflow.extraction.records.to_record``), not
            yet stamped with the run's schema and settings.
        usage: the tokens and requests it took.
        fault: how the summary line names its failure (``SUSPECT_LABELS``,
            ``BEFORE_REQUEST_LABEL``), ``None`` for none of those.
        stop: a set-up fault that stops the run (exit 2) with this message:
            an error that is the same for every input, or an endpoint not
            reached before any request went through; ``None`` otherwise.
        unreached: ``stop`` is the endpoint not reached: it stops the run only
            while no request of the run has gone through (``Reach``); after
            one, the fault is this input's (transient) and the run goes on.
    """

    id: str
    record: dict[str, Any]
    usage: Usage
    fault: str | None = None
    stop: str | None = None
    unreached: bool = False

    def wire(self) -> tuple[Any, ...]:
        """This as plain tuples and dicts (cheaper to pickle than dataclasses);
        ``from_wire`` reads it back."""
        u = self.usage
        return (self.id, self.record, (u.input_tokens, u.output_tokens, u.cached_tokens,
                                       u.reasoning_tokens, u.requests, u.unreported,
                                       u.cache_write_tokens),
                self.fault, self.stop, self.unreached)

    @classmethod
    def from_wire(cls, wire: tuple[Any, ...]) -> InputDone:
        """The ``InputDone`` whose ``wire()`` is ``wire``."""
        doc_id, record, usage, fault, stop, unreached = wire
        return cls(doc_id, record, Usage(*usage), fault, stop, unreached)


class Settle:
    """Turns each ``ExtractResult`` of a run into an ``InputDone`` (in the
    run's process, or in a worker's: ``Reach`` then decides, in the run's,
    whether an endpoint not reached stops the run).

    Args:
        model: the run's model (the endpoint a set-up fault names).
        base_url: ``--base-url`` as given (``None``: the vendor's).
    """

    __slots__ = ("_base_url", "_model")

    def __init__(self, model: Any, base_url: str | None) -> None:
        self._model = model
        self._base_url = base_url

    def __call__(self, result: Any, source_offset: int = 0,
                 pages: Sequence[tuple[int, int]] | None = None) -> InputDone:
        """``result``'s ``InputDone``; ``source_offset`` and ``pages`` as
        ``to_record`` takes them."""
        error = result.error
        if error is None:  # an ok record: no fault to name, nothing that stops the run
            return InputDone(result.id, to_record(result, source_offset, pages), result.usage)
        stop = None
        unreached = False
        if (wide := run_wide(error)) is not None:  # nothing else works
            stop = f"{type(wide).__name__}: {wide}"
        elif fault := setup_fault(error, self._model, self._base_url):
            stop, unreached = printable(fault), True
        kind = SUSPECT_LABELS.get(type(error).__name__) if error is not None else None
        if kind and result.attempts == 0:  # no answer was refused: not suspect
            kind = BEFORE_REQUEST_LABEL
        return InputDone(result.id, to_record(result, source_offset, pages), result.usage,
                         kind, stop, unreached)


class Reach:
    """Whether a request of the run has gone through yet, in any of its
    processes: a stop that is the endpoint not reached (``InputDone.unreached``)
    stops the run only before one has."""

    __slots__ = ("_reached",)

    def __init__(self) -> None:
        self._reached = False

    def stop(self, done: InputDone) -> str | None:
        """The message the run stops with at ``done`` (exit 2), or ``None``."""
        stop = None if done.unreached and self._reached else done.stop
        self._reached = self._reached or done.usage.requests > 0
        return stop
