"""How often Python's cyclic garbage collector runs while ``agentflow extract`` works.

Each document of a run makes a few hundred short-lived objects (the request
body, the reply's payload and token log-probabilities, events, messages, the
record), and at concurrency 256 thousands of them are alive at once. CPython
starts a young-generation collection every ``gc.get_threshold()[0]`` net
allocations (700 in CPython 3.11: docs.python.org/3/library/gc.html,
``set_threshold``), and every tenth of those also walks the older one, so
on a run of many short documents against a fast endpoint the collector took
about a sixth of agentflow's CPU per document (``benchmarks/bench_scale.py``,
measured with ``gc.callbacks``), mostly walking objects that live for the
whole run: the imported modules, the schema, the agent.

``collector()`` is what the CLI runs its event loop in:

* ``gc.freeze()`` first: everything alive once the run is set up (modules,
  schema, model, agent) moves to the permanent generation, which no
  collection walks (the use ``gc.freeze`` documents for long-lived objects);
* a young-generation threshold of ``YOUNG_THRESHOLD`` allocations, so a
  collection runs about once per few dozen documents instead of several
  times per document. Memory held by cyclic garbage between collections is
  bounded by that threshold (a few MB), whatever the corpus size.

Reference counting still frees acyclic garbage at once; only the cycle
collector's timing changes, never what a run computes. ``AGENTFLOW_GC=default``
keeps Python's own settings. A library user's application is left alone:
only the CLI's process is tuned, and the settings are restored when the run ends.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator

__all__ = ["YOUNG_THRESHOLD", "collector"]

YOUNG_THRESHOLD = 50_000
"""Net allocations between young-generation collections during a run (the
older generations keep CPython's ratios)."""


@contextlib.contextmanager
def collector() -> Iterator[None]:
    """Run the body with the long-lived objects frozen and a young-generation
    threshold of ``YOUNG_THRESHOLD`` (see the module docstring); Python's
    settings are restored on exit. ``AGENTFLOW_GC=default``: no change."""
    if os.environ.get("AGENTFLOW_GC", "").strip().lower() == "default":
        yield
        return
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
