"""The rate governor against a fake that enforces RPM and TPM, next to a
fixed-concurrency baseline, in the same run.

A fake OpenAI server (tests/fakes/openai.py) enforces a requests-per-minute
and a tokens-per-minute limit as token buckets, sends the
``x-ratelimit-*`` headers and answers 429 with ``Retry-After`` when a
request does not fit. Each request is charged its body's characters / 4
plus the reply's output tokens (as a vendor counts them). The server's
buckets start empty, as on an account that is already busy, so the figures
are steady-state ones: throughput is compared with what the limits allow over
the run (``limit / 60 * seconds``), not inflated by a first full bucket.

Both modes run ``extract_many`` over the same documents for ``--seconds``:

* ``governor``: the default (the shared ``RateGovernor``), ``--concurrency`` calls;
* ``fixed``: ``rate_governor=False``, the same concurrency: today's behaviour
  before the governor (429s retried with backoff that honours Retry-After).

Targets (issue 15): with the governor, throughput >= 90% of the binding limit
and <= 5 429s per 1,000 requests.

    python benchmarks/bench_ratelimit.py [--seconds 30] [--rpm 2400] [--tpm 600000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentflow.batch import extract_many  # noqa: E402
from agentflow.providers._http import HttpSettings  # noqa: E402
from agentflow.providers.openai import OpenAIChatModel  # noqa: E402
from tests.fakes.base import FakeReply  # noqa: E402
from tests.fakes.limits import FakeLimits  # noqa: E402
from tests.fakes.openai import OpenAIFake  # noqa: E402

OUTPUT_TOKENS = 60
REPLY = '{"title": "Quarterly report", "year": 2026, "tags": ["finance", "q3"]}'


class Summary(BaseModel):
    """The structured output of every call."""

    title: str
    year: int
    tags: list[str]


def _reply(latency: float) -> Any:
    def answer(body: Any) -> FakeReply:
        return FakeReply(text=REPLY, latency=latency,
                         usage=(len(orjson.dumps(body)) // 4, OUTPUT_TOKENS))
    return answer


def _documents(n: int, chars: int) -> list[tuple[str, str]]:
    line = "Quarterly report for 2026, filed under finance and q3, on operations in detail. "
    text = (line * (chars // len(line) + 1))[:chars]
    return [(f"doc-{i}", f"{i}: {text}") for i in range(n)]


async def run_mode(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    """One run of ``mode``; the figures."""
    async with OpenAIFake() as fake:
        fake.record = False
        fake.default = _reply(args.latency)
        limits = FakeLimits(rpm=args.rpm, tpm=args.tpm)
        limits.take(args.tpm)  # drain the token bucket: an account already at its limit
        limits.admitted = limits.tokens = limits.refused = 0
        limits._levels[0] = 0.0  # and the requests bucket
        fake.limits = limits
        settings = HttpSettings(max_retries=8, backoff_initial=0.5, backoff_max=5.0,
                                rate_governor=(mode == "governor"))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="bench",
                                settings=settings, stream=False)
        docs = _documents(100_000, args.chars)
        ok = failed = 0
        start = time.perf_counter()
        stream = extract_many(model, docs, Summary, concurrency=args.concurrency,
                              order="completed")
        try:
            async for result in stream:
                ok, failed = ok + result.ok, failed + (not result.ok)
                if time.perf_counter() - start >= args.seconds:
                    break
        finally:
            await stream.aclose()
            elapsed = time.perf_counter() - start
            admitted, tokens, refused = limits.admitted, limits.tokens, limits.refused
            await model.aclose()
    sent = admitted + refused
    allowed_tokens = args.tpm / 60 * elapsed
    allowed_requests = args.rpm / 60 * elapsed
    return {
        "mode": mode, "seconds": elapsed, "ok": ok, "failed": failed, "sent": sent,
        "admitted": admitted, "refused": refused,
        "per_1000": 1000 * refused / sent if sent else 0.0,
        "tokens_pct": 100 * tokens / allowed_tokens,
        "requests_pct": 100 * admitted / allowed_requests,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each run")
    parser.add_argument("--rpm", type=int, default=2400, help="requests per minute")
    parser.add_argument("--tpm", type=int, default=600_000, help="tokens per minute")
    parser.add_argument("--chars", type=int, default=1600, help="characters per document")
    parser.add_argument("--latency", type=float, default=0.3, help="server seconds per reply")
    parser.add_argument("--concurrency", type=int, default=32, help="extract_many concurrency")
    args = parser.parse_args(argv)
    print(f"limits: {args.rpm} RPM, {args.tpm} TPM; {args.chars}-char documents, "
          f"{args.latency}s latency, concurrency {args.concurrency}, {args.seconds:.0f}s per mode")
    print(f"{'mode':9} {'s':>5} {'ok':>5} {'failed':>6} {'sent':>5} {'429s':>5} "
          f"{'429/1000':>8} {'tokens % of TPM':>15} {'requests % of RPM':>17}")
    for mode in ("fixed", "governor"):
        r = asyncio.run(run_mode(mode, args))
        print(f"{r['mode']:9} {r['seconds']:5.1f} {r['ok']:5d} {r['failed']:6d} {r['sent']:5d} "
              f"{r['refused']:5d} {r['per_1000']:8.1f} {r['tokens_pct']:15.1f} "
              f"{r['requests_pct']:17.1f}")


if __name__ == "__main__":
    main()
