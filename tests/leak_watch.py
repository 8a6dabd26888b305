"""For tests that watch what the garbage collector finds (unclosed sessions,
sockets, transports) or turn every warning into an error: collect what the
earlier tests on this worker left first, so that the watch sees only the
garbage of the test it is in (CI once saw an earlier test's transport warned
about inside ``test_model_closed``)."""

from __future__ import annotations

import gc
import warnings

__all__ = ["collect_earlier_garbage"]


def collect_earlier_garbage() -> None:
    """A full collection, its warnings (the earlier tests' business) ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gc.collect()
