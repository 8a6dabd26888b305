"""What every test starts from: nothing another test left in process-wide state."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentflow import ratelimit


@pytest.fixture(autouse=True)
def _fresh_rate_governors() -> Iterator[None]:
    """Each test meets the vendors' accounts afresh. The process keeps one
    governor per (vendor, base URL, key, model family): a fake server's port,
    reused by a later test on the same worker, would hand that test the
    governor of an earlier one, with the earlier 429's pause (up to
    ``max_retry_after``), halved concurrency cap and learned limits."""
    yield
    with ratelimit._registry_lock:
        ratelimit._registry.clear()
