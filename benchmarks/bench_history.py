"""Long documents: whole Debian changelog histories -> ``ChangelogHistory``.

Two figures, each against an independent reference:

``changelogs``: the full history of N changelogs from this machine
(``/usr/share/doc/*/changelog.Debian.gz`` with 30-150 entries, one per source
package and per content; ``--sample spread``: N spread evenly by entry
count; ``tune``: the packages the instructions were tuned on; ``report``: N
others by a seeded shuffle, see ``pick_changelogs``), run through
``extract_many`` with the example module's ``CHUNKING`` (map over entries;
``--no-items``: chunks sized by the window), exactly as ``agentflow extract
--schema examples/debian_changelog_history.py:ChangelogHistory`` runs them.
Scored against ``parse_history`` (the rule parser in the example): entry
recall and precision (an entry is found when its version is; a version
given twice counts once), per-entry field accuracy over the found entries
(exact match after strip), chunk calls, failed chunks and wall time.
``--model oracle`` replaces the model with a perfect extractor of each chunk
(the rule parser applied to the chunk's text, served by ``FunctionModel``):
what the chunking and merging alone lose.

``fake``: a synthetic single-package changelog of ``--mb`` megabytes through
the real OpenAI adapter against the fake OpenAI server (tests/fakes), which
answers each chunk with the rule parser's entries after ``--latency``
seconds. Prints chunks, the most requests the fake had in flight at once,
entry recall/precision, wall time, and the peak of Python allocations
(tracemalloc) over the run, as a multiple of the document's size, split into
what the result still holds (the extracted entries) and what was transient
(chunks in flight, request and reply bodies, chunk outputs before the merge).

    python benchmarks/bench_history.py changelogs [--n 5] [--sample spread|tune|report]
        [--model local|oracle|vendor:model] [--no-items] [--items-per-chunk N]
        [--chunk-chars N] [--overlap N] [--max-tokens 400] [--passes 1] [--show]
    python benchmarks/bench_history.py fake [--mb 1] [--chunk-chars 20000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import glob
import gzip
import hashlib
import importlib.util
import random
import re
import shlex
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

import debian_changelog_history as history  # noqa: E402

from agentflow.batch import ExtractResult, extract_many  # noqa: E402
from agentflow.extraction.budget import Chunking  # noqa: E402

INPUT = "/usr/share/doc/*/changelog.Debian.gz"
FIELDS = ("distribution", "urgency", "maintainer", "date")
_HEADER = re.compile(r"^\S+ \([^)]+\) [^;]+; .*?urgency=\w+", re.MULTILINE)


TUNE_PACKAGES = ("tmux", "cmake")
"""Source packages whose changelogs were looked at while tuning the embedded
model's instructions and chunking; ``--sample report`` never picks them."""
REPORT_SEED = 11
REPORT_MAX_ENTRIES = 45
"""``--sample report`` takes changelogs of 30 to this many entries, so five of
them run on the embedded model (one chunk call per entry) in well under an
hour on two shared cores."""


def _candidates(low: int, high: int) -> list[tuple[int, str, str, str]]:
    """``(entries, path, text, source package)`` of every changelog with
    ``low``-``high`` entries, one per source package and per content."""
    seen: set[str] = set()
    found = []
    for path in sorted(glob.glob(INPUT)):
        text = gzip.decompress(Path(path).read_bytes()).decode("utf-8", errors="replace")
        digest = hashlib.sha1(text.encode()).hexdigest()
        count = len(_HEADER.findall(text))
        source = text.split(" ", 1)[0]
        if low <= count <= high and digest not in seen and source not in seen:
            seen.update((digest, source))
            found.append((count, path, text, source))
    return found


def pick_changelogs(n: int, low: int = 30, high: int = 150,
                    sample: str = "spread", offset: int = 0) -> list[tuple[str, str]]:
    """``n`` distinct changelogs with ``low``-``high`` entries.

    ``spread``: spread evenly by entry count. ``tune``: those of
    ``TUNE_PACKAGES``. ``report``: a seeded shuffle (``REPORT_SEED``) of the
    others with at most ``REPORT_MAX_ENTRIES`` entries, ``n`` from ``offset``.
    """
    found = sorted(_candidates(low, high))
    if sample == "tune":
        return [(p, t) for _, p, t, src in found if src in TUNE_PACKAGES][:n]
    if sample == "report":
        pool = [(p, t) for c, p, t, src in found
                if src not in TUNE_PACKAGES and c <= REPORT_MAX_ENTRIES]
        random.Random(REPORT_SEED).shuffle(pool)
        return pool[offset:offset + n]
    if len(found) <= n:
        return [(p, t) for _, p, t, _ in found]
    step = (len(found) - 1) / (n - 1) if n > 1 else 0
    return [(found[round(i * step)][1], found[round(i * step)][2]) for i in range(n)]


def oracle_model() -> Any:
    """A perfect per-chunk extractor: the rule parser on each chunk's text."""
    from agentflow.model import ModelProfile
    from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply

    def answer(request: RecordedRequest) -> Reply:
        text = next(m.text for m in request.messages if m.role == "user")
        parsed = history.parse_history(text)
        entries = [e.__dict__ for e in parsed.entries
                   if e.maintainer and e.urgency in ("low", "medium", "high", "emergency",
                                                     "critical")]
        return Reply(tool_calls=[Call("generate_response", {"package": parsed.package or None,
                                                            "entries": entries})])

    return FunctionModel(answer, profile=ModelProfile(context_window=8192,
                                                      max_output_tokens=4096))


def score(result: ExtractResult, ref: Any, text: str) -> dict[str, float]:
    """Entry recall/precision (by version), field accuracy over found entries, and
    how many given versions have a span that holds them in the document."""
    want = {e.version: e for e in ref.entries}
    got = {e.version.strip(): e for e in result.output.entries} if result.ok else {}
    found = [v for v in got if v in want]
    row = {"ref": len(want), "got": len(got), "found": len(found), "spans_ok": 0.0}
    for i, entry in enumerate(result.output.entries if result.ok else []):
        ranges = result.spans.get(f"entries[{i}].version", [])
        row["spans_ok"] += any(text[s:e] == entry.version for s, e in ranges)
    for f in FIELDS:
        row[f] = sum(str(getattr(got[v], f)).strip() == str(getattr(want[v], f)).strip()
                     for v in found)
    return row


def wrong_fields(result: ExtractResult, ref: Any) -> list[tuple[str, str, str, str]]:
    """``(version, field, given, in the file)`` for each wrong field of the
    found entries (``--show``: which kind of wrong answer is left)."""
    want = {e.version: e for e in ref.entries}
    out = []
    for entry in result.output.entries:
        good = want.get(entry.version.strip())
        for f in FIELDS if good is not None else ():
            given, right = str(getattr(entry, f)).strip(), str(getattr(good, f)).strip()
            if given != right:
                out.append((entry.version, f, given, right))
    return out


async def run_changelogs(ns: argparse.Namespace) -> None:
    """The ``changelogs`` figure."""
    docs = pick_changelogs(ns.n, sample=ns.sample, offset=ns.offset)
    refs = {p: history.parse_history(t) for p, t in docs}
    for path, _ in docs:
        print(f"  {path}: {len(refs[path].entries)} entries, "
              f"{len(dict(docs)[path])} characters")
    if ns.model == "oracle":
        model: Any = oracle_model()
    elif ns.model == "local" or ns.model.startswith("local:"):
        from agentflow.providers.local import DEFAULT_MODEL, LocalModel

        model = LocalModel(ns.model.partition(":")[2] or DEFAULT_MODEL,
                           max_tokens=ns.max_tokens, threads=ns.threads, parallel=ns.parallel,
                           context=4096 * ns.parallel)
        model._ensure_server()  # load before the clock starts
    else:
        from agentflow.model import resolve_model

        model = resolve_model(ns.model)
    chunking = (dataclasses.replace(history.CHUNKING, max_chars=ns.chunk_chars,
                                    overlap=ns.overlap, items_per_chunk=ns.items_per_chunk)
                if ns.items else Chunking(max_chars=ns.chunk_chars, overlap=ns.overlap))
    start = time.perf_counter()
    totals: dict[str, float] = {}
    calls = failed = 0
    results = []
    async for r in extract_many(
            model, docs, history.ChangelogHistory, concurrency=ns.concurrency,
            instructions=history.INSTRUCTIONS, chunking=chunking, passes=ns.passes,
            examples=getattr(history, "EXAMPLES", None),
            allow_partial=True, order="completed"):
        results.append(r)
        row = score(r, refs[r.id], dict(docs)[r.id])
        for k, v in row.items():
            totals[k] = totals.get(k, 0) + v
        chunks = r.chunks
        calls += chunks.total if chunks else r.attempts
        failed += chunks.failed if chunks else (not r.ok)
        status = "ok" if r.ok else f"{type(r.error).__name__}: {str(r.error)[:100]}"
        print(f"  {Path(r.id).parent.name}: {row['found']}/{row['ref']} found, "
              f"{row['got']} given; chunks {chunks.total if chunks else 1} "
              f"(failed {chunks.failed if chunks else int(not r.ok)}); {r.duration:.0f}s; "
              f"{status}")
        if ns.show and r.ok:
            print("    given:", [e.version for e in r.output.entries][:15])
            for version, field, given, want in wrong_fields(r, refs[r.id]):
                print(f"    {version} {field}: {given!r} (the file: {want!r})")
        sys.stdout.flush()
    wall = time.perf_counter() - start
    aclose = getattr(model, "aclose", None)
    if aclose is not None:
        await aclose()
    recall = totals["found"] / totals["ref"] if totals["ref"] else 0.0
    precision = totals["found"] / totals["got"] if totals["got"] else 0.0
    print(f"entries: recall {recall:.3f}, precision {precision:.3f} "
          f"({totals['found']:.0f} found of {totals['ref']:.0f}, {totals['got']:.0f} given)")
    for f in FIELDS:
        acc = totals[f] / totals["found"] if totals["found"] else 0.0
        print(f"  field accuracy over found entries: {f:13} {acc:.2f}")
    print(f"  given entries whose version span holds the version in the file: "
          f"{totals['spans_ok']:.0f}/{totals['got']:.0f}")
    tokens = sum(r.usage.total_tokens for r in results)
    print(f"chunk calls {calls}, failed {failed}; tokens {tokens}; wall {wall:.1f}s")


def synthetic(megabytes: float, seed: int = 7) -> str:
    """A one-package Debian changelog of about ``megabytes`` MB, unique versions."""
    rng = random.Random(seed)
    words = ["fix", "build", "crash", "upstream", "release", "patch", "update", "policy",
             "bump", "debian", "watch", "standards", "version", "drop", "add", "remove",
             "translation", "security", "cve", "test"]
    parts, size, i = [], 0, 0
    while size < megabytes * 1_000_000:
        major, minor = divmod(i, 50)
        changes = "".join(f"  * {' '.join(rng.choices(words, k=rng.randint(4, 14)))}.\n"
                          for _ in range(rng.randint(1, 6)))
        part = (f"demo ({1000 - major}.{49 - minor}-1) unstable; urgency=medium\n\n{changes}\n"
                f" -- Dee Veloper <dee@example.org>  Mon, 0{1 + i % 9} Jan 2024 12:00:00 +0000\n\n")
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)


async def run_fake(ns: argparse.Namespace) -> None:
    """The ``fake`` figure."""
    import orjson

    from agentflow.model import ModelProfile
    from agentflow.providers.openai import OpenAIChatModel
    from tests.fakes.base import FakeReply
    from tests.fakes.openai import OpenAIFake

    text = synthetic(ns.mb)
    ref = history.parse_history(text)
    flight = {"now": 0, "peak": 0}

    class Counting(OpenAIFake):
        async def _handle(self, request: Any) -> Any:
            flight["now"] += 1
            flight["peak"] = max(flight["peak"], flight["now"])
            try:
                return await super()._handle(request)
            finally:
                flight["now"] -= 1

    def reply(body: Any) -> FakeReply:
        chunk = next(m["content"] for m in body["messages"] if m["role"] == "user")
        parsed = history.parse_history(chunk)
        entries = [e.__dict__ for e in parsed.entries if e.maintainer]
        data = {"package": parsed.package or None, "entries": entries}
        return FakeReply(text=orjson.dumps(data).decode(), latency=ns.latency, chunk_size=4096)

    async with Counting(api_key="k") as fake:
        fake.default = reply
        fake.record = False
        profile = ModelProfile(native_output="json_schema", schema_dialect="openai_strict",
                               context_window=128_000, max_output_tokens=16_384)
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k", profile=profile)
        tracemalloc.start()
        base, _ = tracemalloc.get_traced_memory()
        start = time.perf_counter()
        (result,) = [r async for r in extract_many(
            model, [("synthetic", text)], history.ChangelogHistory,
            concurrency=ns.concurrency, chunking=Chunking(max_chars=ns.chunk_chars))]
        wall = time.perf_counter() - start
        kept, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        await model.aclose()
    row = score(result, ref, text)
    doc_mb = len(text.encode()) / 1e6
    assert result.chunks is not None
    print(f"document {doc_mb:.2f} MB, {len(ref.entries)} entries; chunks {result.chunks.total} "
          f"of <= {ns.chunk_chars} characters, failed {result.chunks.failed}; ok {result.ok}")
    print(f"requests in flight at once (fake's count): peak {flight['peak']} "
          f"(concurrency {ns.concurrency})")
    print(f"entries: recall {row['found'] / row['ref']:.3f}, precision "
          f"{row['found'] / max(row['got'], 1):.3f}; version spans right "
          f"{row['spans_ok']:.0f}/{row['got']:.0f}; wall {wall:.2f}s")
    print(f"peak Python allocations during the run (tracemalloc, fake server in the same "
          f"process): {(peak - base) / 1e6:.1f} MB = {(peak - base) / 1e6 / doc_mb:.1f}x the "
          f"document; of which {(kept - base) / 1e6:.1f} MB is still held by the result (the "
          f"{row['got']} validated entries), {(peak - kept) / 1e6:.1f} MB was transient")


def main() -> None:
    """Parse arguments and run one figure."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="figure", required=True)
    c = sub.add_parser("changelogs")
    c.add_argument("--n", type=int, default=5)
    c.add_argument("--offset", type=int, default=0,
                   help="--sample report: skip this many of the shuffled pool first (a set "
                        "disjoint from one already looked at)")
    c.add_argument("--sample", choices=("spread", "tune", "report"), default="spread",
                   help="spread by size over the machine, the tuning set, or the seeded "
                        "held-out report set")
    c.add_argument("--no-items", dest="items", action="store_false",
                   help="chunk by the window instead of the schema module's CHUNKING "
                        "(map over entries)")
    c.add_argument("--items-per-chunk", type=int, default=None,
                   help="entries per chunk (default: the model profile's)")
    c.add_argument("--model", default="local",
                   help="local (or local:gemma3-270m, local:/path/x.gguf), oracle or vendor:model")
    c.add_argument("--chunk-chars", type=int, default=None,
                   help="characters per chunk at most (default: what fits the model)")
    c.add_argument("--overlap", type=int, default=None)
    c.add_argument("--max-tokens", type=int, default=400, help="reply cap (local)")
    c.add_argument("--passes", type=int, default=1)
    c.add_argument("--concurrency", type=int, default=1)
    c.add_argument("--threads", type=int, default=1, help="llama.cpp threads (local)")
    c.add_argument("--parallel", type=int, default=1,
                   help="requests the local server decodes at once, each with a 4096-token "
                        "window (local; use with --concurrency)")
    c.add_argument("--show", action="store_true")
    c.add_argument("--schema", default=None, metavar="FILE.py",
                   help="another schema module of the same shape (a variant to compare; "
                        "default: examples/debian_changelog_history.py)")
    f = sub.add_parser("fake")
    f.add_argument("--mb", type=float, default=1.0)
    f.add_argument("--chunk-chars", type=int, default=20_000)
    f.add_argument("--concurrency", type=int, default=8)
    f.add_argument("--latency", type=float, default=0.05)
    ns = p.parse_args()
    print("$", shlex.join([Path(sys.executable).name, *sys.argv]))
    if getattr(ns, "schema", None):
        global history
        spec = importlib.util.spec_from_file_location("history_variant", ns.schema)
        assert spec is not None and spec.loader is not None
        history = importlib.util.module_from_spec(spec)
        sys.modules["history_variant"] = history  # pydantic resolves its annotations there
        spec.loader.exec_module(history)
    asyncio.run(run_changelogs(ns) if ns.figure == "changelogs" else run_fake(ns))


if __name__ == "__main__":
    main()
