"""The rate governor (agentflow/ratelimit.py): header formats, the vendors'
header readers, admission by buckets, priority, 429 pauses, slow start,
sharing per account, and end to end against fakes that enforce RPM/TPM."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from pydantic import BaseModel

from agentflow.batch import extract_many
from agentflow.messages import Msg
from agentflow.model import GenerateOptions
from agentflow.providers import HttpSettings
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.anthropic import rate_family as anthropic_family
from agentflow.providers.anthropic import rate_limit_headers as anthropic_headers
from agentflow.providers.openai import OpenAIChatModel
from agentflow.providers.openai import rate_limit_headers as openai_headers
from agentflow.ratelimit import (
    RateGovernor,
    RateLease,
    RateLimitSnapshot,
    current_priority,
    estimate_request_tokens,
    governor_for,
    model_family,
    parse_duration,
    request_priority,
    seconds_until,
    set_process_share,
)
from agentflow.testing import FunctionModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.fakes.limits import FakeLimits
from tests.fakes.openai import OpenAIFake
from tests.virtual_clock import run_virtual

FAST = HttpSettings(backoff_initial=0.01, backoff_max=0.05, max_retries=6, read_timeout=5)
FAST_OFF = HttpSettings(backoff_initial=0.01, backoff_max=0.05, max_retries=6, read_timeout=5,
                        rate_governor=False)


class Item(BaseModel):
    name: str


# -- formats -------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("6m0s", 360.0), ("12ms", 0.012), ("1m30.5s", 90.5), ("1h2m", 3720.0),
    ("2.5", 2.5), ("", None), ("soon", None), ("5x", None), (None, None),
    ("nan", None), ("inf", None), ("-inf", None), ("1e999", None),  # never an endless pause
])
def test_parse_duration(text: str | None, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_seconds_until_rfc3339_and_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    assert seconds_until("2026-01-01T12:00:30Z", now=now) == pytest.approx(30)
    assert seconds_until("Thu, 01 Jan 2026 12:01:00 GMT", now=now) == pytest.approx(60)
    assert seconds_until("2025-12-31T00:00:00Z", now=now) == 0.0
    assert seconds_until("tomorrow", now=now) is None
    assert seconds_until("2026-01-01T12:00:30", now=now) is None  # no zone: unknowable


@pytest.mark.parametrize(("model", "family"), [
    ("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4-0613", "gpt-4"), ("gpt-4o-mini", "gpt-4o-mini"),
    ("gemini-2.5-flash-preview", "gemini-2.5-flash"), ("o3", "o3"),
])
def test_model_family(model: str, family: str) -> None:
    assert model_family(model) == family


@pytest.mark.parametrize(("model", "family"), [
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4"), ("claude-sonnet-4-0", "claude-sonnet-4"),
    ("claude-3-5-haiku-latest", "claude-haiku-3"), ("claude-opus-4-1", "claude-opus-4"),
    ("custom-model", "custom-model"),
])
def test_anthropic_rate_family(model: str, family: str) -> None:
    assert anthropic_family(model) == family


def test_estimate_tokens() -> None:
    assert estimate_request_tokens(400, None, 256) == 100 + 256
    assert estimate_request_tokens(401, 50, 256) == 101 + 50
    assert estimate_request_tokens(0, 4096, 256) == 256
    # a negative count (a caller's bad arithmetic) counts as none, never against the total
    assert estimate_request_tokens(-40, 0, 256, media_tokens=-5) == 0
    assert estimate_request_tokens(-40, -3, 256, media_tokens=7) == 7


# -- vendor header readers -----------------------------------------------------


def test_openai_headers() -> None:
    snap = openai_headers({
        "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59",
        "x-ratelimit-reset-requests": "1s", "x-ratelimit-limit-tokens": "150000",
        "x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6m0s",
        "retry-after-ms": "1500",
    })
    assert snap == RateLimitSnapshot(60, 59, 1.0, 150000, 149984, 360.0, 1.5)
    assert openai_headers({"content-type": "application/json"}) is None
    assert openai_headers({"x-ratelimit-remaining-tokens": "junk"}) is None


def test_anthropic_headers() -> None:
    soon = (datetime.now(UTC) + timedelta(seconds=20)).isoformat(timespec="seconds")
    snap = anthropic_headers({
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
        "anthropic-ratelimit-requests-reset": soon.replace("+00:00", "Z"),
        "anthropic-ratelimit-input-tokens-limit": "40000",
        "anthropic-ratelimit-input-tokens-remaining": "39000",
        "anthropic-ratelimit-tokens-limit": "48000",
        "anthropic-ratelimit-tokens-remaining": "47000", "retry-after": "7",
    })
    assert snap is not None
    assert (snap.requests_limit, snap.requests_remaining) == (50, 49)
    assert snap.requests_reset == pytest.approx(20, abs=1.5)
    assert (snap.tokens_limit, snap.tokens_remaining, snap.retry_after) == (48000, 47000, 7)
    only_input = anthropic_headers({"anthropic-ratelimit-input-tokens-limit": "40000",
                                    "anthropic-ratelimit-input-tokens-remaining": "10"})
    assert only_input is not None and only_input.tokens_remaining == 10
    assert anthropic_headers({}) is None


# -- admission -------------------------------------------------------------------


def test_tokens_bucket_delays_admission_until_refilled() -> None:
    async def main() -> None:
        clock = asyncio.get_running_loop().time
        gov = RateGovernor("t", tpm=1200, clock=clock)  # 20 tokens per second
        start = clock()
        (await gov.admit(1200)).release()  # the whole bucket
        (await gov.admit(10)).release()  # waits for 10 tokens: 0.5 s
        assert clock() - start == pytest.approx(0.5)
        assert gov.admitted == 2

    run_virtual(main())


async def test_requests_bucket_and_a_request_larger_than_the_bucket() -> None:
    gov = RateGovernor("r", rpm=6000, tpm=600)
    lease = await asyncio.wait_for(gov.admit(10_000), 1)  # capped at capacity: not a deadlock
    lease.release()
    assert gov.admitted == 1


async def test_live_requests_overtake_queued_batch_requests() -> None:
    gov = RateGovernor("p", tpm=600)  # 10 tokens per second
    (await gov.admit(600)).release()  # empty
    order: list[str] = []

    async def ask(kind: str) -> None:
        with request_priority("batch" if kind.startswith("batch") else "live"):
            lease = await gov.admit(3)
        order.append(kind)
        lease.release()

    batch = [asyncio.create_task(ask(f"batch{i}")) for i in range(2)]
    await _queued(gov, 2)  # the batch requests queue first
    live = asyncio.create_task(ask("live"))
    await asyncio.gather(*batch, live)
    assert order[0] == "live"


def test_request_priority_refuses_unknown_values() -> None:
    with pytest.raises(ValueError, match="priority"), request_priority("urgent"):  # type: ignore[arg-type]
        pass


def test_live_reserve_is_kept_from_batch() -> None:
    async def main() -> None:
        clock = asyncio.get_running_loop().time
        gov = RateGovernor("reserve", tpm=1200, live_reserve=0.5, clock=clock)
        (await gov.admit(500)).release()  # 700 left, 600 reserved for live calls
        with request_priority("batch"), pytest.raises(TimeoutError):
            await asyncio.wait_for(gov.admit(200), 4.9)  # 100 tokens short: 5 s at 20/s
        start = clock()
        (await gov.admit(200)).release()  # live may use the reserve: at once
        assert clock() == start

    run_virtual(main())


def test_throttled_pauses_everyone_and_halves_concurrency() -> None:
    async def main() -> None:
        clock = asyncio.get_running_loop().time
        gov = RateGovernor("429", rpm=100_000, clock=clock)
        leases = [await gov.admit(1) for _ in range(8)]
        leases[0].throttled(0.3)
        assert gov.concurrency_cap == 4
        for lease in leases:
            lease.release()
        start = clock()
        (await gov.admit(1)).release()
        assert clock() - start == pytest.approx(0.3)
        assert gov.throttles == 1

    run_virtual(main())


async def test_concurrency_cap_holds_requests_until_a_release() -> None:
    gov = RateGovernor("cap", rpm=100_000)
    first = await gov.admit(1)
    first.throttled(0.0)  # cap 1
    waiting = asyncio.create_task(gov.admit(1))
    await _queued(gov, 1)
    assert not waiting.done()
    first.observe(None, ok=True)  # additive increase: 1 -> 2
    first.release()
    (await asyncio.wait_for(waiting, 1)).release()
    assert gov.concurrency_cap == pytest.approx(2.0)


async def test_a_retry_is_not_stuck_behind_new_requests_held_by_the_cap() -> None:
    gov = RateGovernor("retry", rpm=100_000)
    lease = await gov.admit(1)
    lease.throttled(0.0)  # cap 1, held by `lease`
    queued = [asyncio.create_task(gov.admit(1)) for _ in range(3)]
    await _queued(gov, 3)  # the retry comes after them
    await asyncio.wait_for(lease.readmit(), 1)  # the retry of `lease` goes first
    lease.release()
    for task in queued:
        (await asyncio.wait_for(task, 1)).release()


async def test_slow_start_until_a_reply_tells_the_limits() -> None:
    gov = RateGovernor("slow")
    first = await gov.admit(10)
    second = asyncio.create_task(gov.admit(10))
    await _queued(gov, 1)
    assert not second.done()  # one at a time before any reply
    first.observe(RateLimitSnapshot(requests_limit=100, requests_remaining=99), ok=True)
    (await asyncio.wait_for(second, 1)).release()
    first.release()
    assert gov.limits == (100, None)


async def _queued(gov: RateGovernor, n: int) -> None:
    """One loop turn: the ``n`` tasks just made have each run to their place in
    ``gov``'s queue (a request that must wait is queued in its first step)."""
    await asyncio.sleep(0)
    assert gov.queued == n


async def test_a_formed_queue_is_admitted_at_once_when_it_may_go() -> None:
    """Requests queued behind the slow start are all admitted by the reply that
    lifts it, in queue order, before any of them runs again (one wake-up chain,
    a loop turn each, would never catch up with new requests queuing behind)."""
    gov = RateGovernor("queue")
    first = await gov.admit(10)
    waiting = [asyncio.create_task(gov.admit(10)) for _ in range(5)]
    await _queued(gov, 5)
    first.observe(None, ok=True)  # a reply without limits: any number may go now
    assert gov.admitted == 6 and gov.queued == 0  # in observe itself, before a loop turn
    leases = [await asyncio.wait_for(task, 1) for task in waiting]
    later = await asyncio.wait_for(gov.admit(10), 1)  # the queue is empty: no waiting
    for lease in [first, *leases, later]:
        lease.release()
    assert gov._in_flight == 0


async def test_a_waiter_cancelled_after_its_admission_gives_its_slot_back() -> None:
    gov = RateGovernor("cancel-admitted")
    first = await gov.admit(10)
    waiting = [asyncio.create_task(gov.admit(10)) for _ in range(3)]
    await _queued(gov, 3)
    first.observe(None, ok=True)  # admits all three on their behalf
    waiting[1].cancel()  # before it ran again: it never gets its lease
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert isinstance(results[1], asyncio.CancelledError)
    assert gov._in_flight == 3  # first and the two that took their leases
    for lease in (first, results[0], results[2]):
        assert isinstance(lease, RateLease)
        lease.release()
    assert gov._in_flight == 0


def test_headers_correct_the_local_level() -> None:
    async def main() -> None:
        clock = asyncio.get_running_loop().time
        gov = RateGovernor("headers", tpm=60_000, clock=clock)  # 1000 tokens/s, locally full
        lease = await gov.admit(100)
        later = await gov.admit(100)  # admitted after `lease`, maybe unseen by the server
        lease.observe(RateLimitSnapshot(tokens_limit=60_000, tokens_remaining=300), ok=True)
        start = clock()
        (await gov.admit(400)).release()  # 300 - 100 = 200 left: waits for 200 more (0.2 s)
        assert clock() - start == pytest.approx(0.2)
        for held in (lease, later):
            held.release()

    run_virtual(main())


def test_headers_count_requests_the_vendor_saw_out_of_order() -> None:
    """Under load the vendor may see requests in another order than their admission:
    a reply's ``remaining`` can miss a request admitted *before* it. Every request
    admitted and not yet heard from is taken off, whatever its order."""
    async def main() -> None:
        clock = asyncio.get_running_loop().time
        gov = RateGovernor("order", tpm=60_000, clock=clock)  # 1000 tokens/s, locally full
        earlier = await gov.admit(300)  # admitted first, reaches the vendor last
        later = await gov.admit(100)
        later.observe(RateLimitSnapshot(tokens_limit=60_000, tokens_remaining=400), ok=True)
        start = clock()
        (await gov.admit(400)).release()  # 400 - 300 unheard = 100 left: waits for 300 more
        assert clock() - start == pytest.approx(0.3)
        earlier.observe(RateLimitSnapshot(tokens_limit=60_000, tokens_remaining=0), ok=True)
        for held in (earlier, later):
            held.release()
        start = clock()
        (await gov.admit(200)).release()  # heard: nothing counted twice any more
        assert clock() - start == pytest.approx(0.2)  # 0 left: 200 more, not 500

    run_virtual(main())


def test_no_limit_but_empty_remaining_pauses_until_reset() -> None:
    async def main() -> None:
        clock = asyncio.get_running_loop().time
        gov = RateGovernor("reset", clock=clock)
        lease = await gov.admit(1)
        lease.observe(RateLimitSnapshot(requests_remaining=0, requests_reset=0.3), ok=True)
        lease.release()
        start = clock()
        (await gov.admit(1)).release()
        assert clock() - start == pytest.approx(0.3)

    run_virtual(main())


async def test_cancelled_waiter_leaves_the_queue() -> None:
    gov = RateGovernor("cancel", tpm=60)
    (await gov.admit(60)).release()
    waiter = asyncio.create_task(gov.admit(30))
    await _queued(gov, 1)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert gov.queued == 0


def test_governor_refuses_bad_settings() -> None:
    with pytest.raises(ValueError, match="rpm"):
        RateGovernor(rpm=0)
    with pytest.raises(ValueError, match="live_reserve"):
        RateGovernor(live_reserve=1.0)
    with pytest.raises(ValueError, match="share"):
        set_process_share(0)


def test_share_splits_limits_of_new_and_existing_governors() -> None:
    existing = governor_for("share", base_url="http://127.0.0.1:9", api_key="k", family="f")
    RateLease(existing, 0).observe(RateLimitSnapshot(requests_limit=100, tokens_limit=1000),
                                   ok=True)  # limits learned from a reply
    try:
        set_process_share(0.25)
        assert RateGovernor(rpm=100, tpm=1000).limits == (25, 250)
        assert existing.limits == (25, 250)
    finally:
        set_process_share(1.0)
    assert existing.limits == (100, 1000)


def test_one_governor_per_account_and_family() -> None:
    a = OpenAIChatModel("gpt-4o-2024-08-06", base_url="http://127.0.0.1:9/v1", api_key="sk-a")
    b = OpenAIChatModel("gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="sk-a")
    c = OpenAIChatModel("gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="sk-b")
    d = OpenAIChatModel("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="sk-a")
    off = OpenAIChatModel("gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="sk-a",
                          settings=FAST_OFF)
    assert a._http.governor is b._http.governor is not None
    assert c._http.governor is not a._http.governor
    assert d._http.governor is not a._http.governor
    assert off._http.governor is None
    gov = governor_for("openai", base_url="http://127.0.0.1:9/v1", api_key="sk-a", family="gpt-4o")
    assert gov is a._http.governor
    assert "sk-a" not in repr(gov)


# -- end to end against limiting fakes --------------------------------------------


def _reply(body: object) -> FakeReply:
    """A valid answer whose usage counts the request's characters / 4, as a vendor would."""
    return FakeReply(text='{"name": "x"}', usage=(len(orjson.dumps(body)) // 4, 20))


async def _run_batch(fake: OpenAIFake, settings: HttpSettings, n: int) -> list[bool]:
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", settings=settings,
                            stream=False)
    try:
        docs = [(str(i), f"doc {i}") for i in range(n)]
        return [r.ok async for r in extract_many(model, docs, Item, concurrency=16,
                                                 ground=False)]
    finally:
        await model.aclose()


def _drained_limits() -> FakeLimits:
    limits = FakeLimits(rpm=10_000, tpm=60_000)  # 1000 tokens/s: about 11 requests/s
    limits.take(60_000)  # the server's token bucket starts empty
    return limits


async def test_batch_stays_under_openai_limits_without_429s() -> None:
    async with OpenAIFake() as fake:
        fake.default = _reply
        fake.limits = _drained_limits()
        results = await _run_batch(fake, FAST, 30)
        assert all(results) and len(results) == 30
        assert fake.limits.refused <= 1  # at most the first, before any header was seen
        gov = governor_for("openai", base_url=fake.url, api_key="k", family="gpt-4o-mini")
        assert gov.limits == (10_000, 60_000)  # learned from the x-ratelimit-limit-* headers
        assert gov.waited_s > 0


async def test_without_the_governor_the_same_batch_meets_429s() -> None:
    async with OpenAIFake() as fake:
        fake.default = _reply
        fake.limits = _drained_limits()
        results = await _run_batch(fake, FAST_OFF, 30)
        assert len(results) == 30
        assert fake.limits.refused >= 10


async def test_anthropic_headers_teach_the_governor_its_limits() -> None:
    async with AnthropicFake() as fake:
        fake.default = FakeReply(text="ok", usage=(20, 5))
        fake.limits = FakeLimits(rpm=50, tpm=40_000)
        model = AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                   settings=FAST)
        try:
            assert model._client.governor is not None
            async for _ in model.stream([Msg.user("hi")], [], GenerateOptions()):
                pass
            assert model._client.governor.limits == (50, 40_000)
        finally:
            await model.aclose()


async def test_extract_many_runs_at_batch_priority_and_others_live() -> None:
    seen: list[str] = []

    def answer(request: object) -> str:
        seen.append(current_priority())
        return '{"name": "x"}'

    results = [r async for r in extract_many(FunctionModel(answer), ["a", "b"], Item,
                                             ground=False)]  # "x" is in no input
    assert all(r.ok for r in results)
    assert seen == ["batch", "batch"]
    assert current_priority() == "live"
