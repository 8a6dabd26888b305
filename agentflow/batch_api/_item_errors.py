"""The errors the batch runner fans out to the requests of a batch: one copy
of a shared failure per awaiter, and the item error of a request a terminal
batch returned nothing for."""

from __future__ import annotations

from agentflow.batch_api.protocol import BatchItemError, BatchState, BatchStatus

__all__ = ["fresh_error", "missing_error"]


def fresh_error(exc: BaseException) -> BaseException:
    """A copy of ``exc`` for one of the requests it fails: same type, message
    and fields, ``__cause__`` and first traceback, but its own object, so the
    frames each awaiter's raise adds (and any notes) do not pile up on one
    error shared by a whole batch."""
    kind = type(exc)
    copy = kind.__new__(kind, *exc.args)
    copy.args = exc.args
    fields = dict(getattr(exc, "__dict__", {}))
    if isinstance(fields.get("__notes__"), list):
        fields["__notes__"] = list(fields["__notes__"])
    copy.__dict__.update(fields)
    copy.__cause__ = exc.__cause__
    copy.__context__ = exc.__context__
    copy.__suppress_context__ = exc.__suppress_context__
    copy.__traceback__ = exc.__traceback__
    return copy


def missing_error(status: BatchStatus) -> BatchItemError:
    """The error of a request a terminal batch returned nothing for."""
    if status.state is BatchState.EXPIRED:
        return BatchItemError("expired", "the batch expired before this request ran")
    if status.state is BatchState.CANCELLED:
        return BatchItemError("cancelled", "the batch was cancelled before this request ran")
    if status.state is BatchState.FAILED:
        return BatchItemError("error", f"the vendor rejected the batch: "
                                       f"{status.message or 'no reason given'}")
    return BatchItemError("error", "the batch returned no result for this request")
