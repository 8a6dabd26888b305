"""``RateGovernor.admit_now``: a request that would not wait is admitted
without a coroutine; one that would is left to ``admit``."""

from __future__ import annotations

import anyio

from agentflow.ratelimit import RateGovernor


def test_a_request_with_room_is_taken_at_once() -> None:
    governor = RateGovernor("t", slow_start=False)
    lease = governor.admit_now(10.0)
    assert lease is not None and lease.tokens == 10.0
    assert governor.admitted == 1
    lease.release()


def test_a_request_that_would_wait_is_not_taken() -> None:
    governor = RateGovernor("t")  # slow start: one request at a time until a limit is known
    first = governor.admit_now(10.0)
    assert first is not None
    assert governor.admit_now(10.0) is None  # it would wait: nothing taken, nothing counted
    assert governor.admitted == 1
    first.release()
    second = governor.admit_now(float("nan"))  # NaN counts as no tokens, as admit has it
    assert second is not None and second.tokens == 0.0
    second.release()


def test_a_bucket_without_room_leaves_the_request_to_admit() -> None:
    governor = RateGovernor("t", rpm=1, slow_start=False)
    assert governor.admit_now(1.0) is not None
    assert governor.admit_now(1.0) is None  # the minute's one request is spent

    async def main() -> None:
        with anyio.move_on_after(0.05) as scope:
            await governor.admit(1.0)  # waits for the bucket, as before
        assert scope.cancelled_caught

    anyio.run(main)
