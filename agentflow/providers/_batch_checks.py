"""What a vendor batch must be, checked before any request, and what a results
line that cannot be read becomes (``_batch_wire`` re-exports these).

* ``check_batch`` / ``check_size``: refuse a batch the vendor would refuse or
  that the runner could not match back (duplicate or malformed
  ``custom_id``, too many requests, a payload over the byte limit).
* ``same_origin``: whether a URL a vendor hands back (a results URL) may
  receive the model's credentials.
* ``malformed_line``: the ``BatchResult`` of a results line that could not be
  read (no id: the runner drops it with a log line, never assigns it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from agentflow.batch_api.protocol import BatchItemError, BatchLimits, BatchRequest, BatchResult
from agentflow.errors import BadRequestError

__all__ = ["check_batch", "check_size", "malformed_line", "same_origin"]


def check_batch(
    vendor: str,
    requests: Sequence[BatchRequest],
    limits: BatchLimits,
    *,
    id_pattern: re.Pattern[str],
    size: int | None = None,
) -> None:
    """Refuse a batch before sending it.

    ``size``: the bytes of the payload as it will be sent (checked against
    ``limits.max_bytes`` when given).

    Raises:
        BadRequestError: (never sent) no requests, more than
            ``limits.max_requests``, a ``custom_id`` not matching ``id_pattern``
            or given twice, or a payload over ``limits.max_bytes``.
    """
    if not requests:
        raise BadRequestError("a batch needs at least one request", status=None, vendor=vendor)
    if len(requests) > limits.max_requests:
        raise BadRequestError(
            f"{len(requests)} requests exceed {vendor}'s limit of {limits.max_requests} per "
            f"batch; split them into several batches", status=None, vendor=vendor)
    seen: set[str] = set()
    for request in requests:
        if not id_pattern.fullmatch(request.custom_id):
            raise BadRequestError(
                f"custom_id {request.custom_id[:80]!r} does not match {vendor}'s pattern "
                f"{id_pattern.pattern}", status=None, vendor=vendor)
        if request.custom_id in seen:
            raise BadRequestError(
                f"custom_id {request.custom_id!r} appears twice in one batch; results are "
                f"matched by it", status=None, vendor=vendor)
        seen.add(request.custom_id)
    if size is not None:
        check_size(vendor, size, limits)


def check_size(vendor: str, size: int, limits: BatchLimits) -> None:
    """Refuse a batch payload of ``size`` bytes over ``limits.max_bytes``.

    Raises:
        BadRequestError: (never sent) it is over.
    """
    if size > limits.max_bytes:
        raise BadRequestError(
            f"the batch payload is {size:,} bytes, over {vendor}'s limit of "
            f"{limits.max_bytes:,}; split it into several batches", status=None, vendor=vendor)


def same_origin(url: str, base_url: str) -> bool:
    """Whether ``url`` has the scheme and host (with port) of ``base_url``:
    only then may it receive the model's credential headers."""
    a, b = urlsplit(url), urlsplit(base_url)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


def malformed_line(vendor: str, line: str) -> BatchResult:
    """The result of a results line that is not the vendor's JSON shape:
    no ``custom_id`` (so never assigned to an input), an error saying why."""
    return BatchResult("", error=BatchItemError(
        "error", f"malformed batch result line from {vendor}: {line[:200]!r}"))
