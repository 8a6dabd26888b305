"""Extraction at scale: memory and time per document as the corpus grows, a
raw aiohttp client as the floor, and one hostile PDF beside many text files.

Every run goes to a fake OpenAI server (``tests/fakes/openai.py``) in a
process of its own that answers each request at once, so what is measured is
agentflow's own cost. Each measured run is a child process, so its peak RSS
is its own (``os.wait4``'s ``ru_maxrss``).

* ``scale``: ``agentflow extract`` over JSONL corpora of ``--sizes`` records
  (one short record per line) at ``--concurrency``, ``--out`` a file; per size:
  wall time, documents per second, time per document, peak RSS. Target: the
  largest run's peak RSS within 1.25x of the smallest's.
* ``raw``: the same requests by a bare aiohttp client at the same concurrency:
  it reads the same JSONL corpus, puts each record's text in the exact body
  agentflow sent (saved by the fake from agentflow's first request: same
  messages, response format and stream flag), posts it and parses the reply.
  Target: agentflow's throughput >= 0.5x raw's. Per row: the load, CPU ms per
  document of each client (``wait4``: with ``--workers``, the worker processes
  included; peak RSS is the largest process's), and the fake vendor's CPU ms
  per document in each run (``/proc``): under a loaded machine the wall ratio
  follows the CPU each side needs. ``--workers 1 2`` runs agentflow once per
  value (``agentflow extract --workers``); the raw client is one process.
* ``hostile``: ``--text-files`` text files alone, then the same files with the
  hostile PDF of ``tests/pdfs.py`` (20 pages sharing one compressed stream of
  1M text operators, 14 KB) beside them. Target: every text file has its ok
  record, the PDF a ``DocumentTooComplexError`` record, and the second run takes
  no longer than the first plus the work budget (``DEFAULT_BUDGET.cpu_seconds``).
* ``--instructions``: instead of the above, the instructions each client executes
  per document, counted by valgrind's cachegrind (so the machine's load does not
  move the figure): each client over 300 and over 1,300 records, per document =
  (Ir(1,300) - Ir(300)) / 1,000, which leaves out start-up and imports; the raw
  client's count over ours is the throughput ratio a machine with a free core
  per process would see. Needs ``valgrind`` on the PATH; a few minutes.

    python benchmarks/bench_scale.py [--sizes 10000 100000] [--concurrency 256]
        [--workers 1 2] [--text-files 1000] [--skip-raw] [--skip-hostile]
    python benchmarks/bench_scale.py --instructions [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCHEMA = ROOT / "examples" / "contact.py"


def serve(sample: str) -> None:
    """The fake vendor, in this process, until stdin closes; prints its URL.
    The first request agentflow sends is saved to ``sample`` (its user message
    replaced by ``PLACEHOLDER``): the raw client's requests are that body."""
    from tests.fakes.base import FakeReply
    from tests.fakes.openai import OpenAIFake

    saved = False

    def reply(body: Any) -> FakeReply:  # the name the document gives: a grounded value
        nonlocal saved
        user = next(m for m in body["messages"] if m["role"] == "user")
        text = user["content"]
        if not saved and isinstance(text, str):
            user["content"] = PLACEHOLDER
            Path(sample).write_bytes(orjson.dumps(body))
            user["content"] = text
            saved = True
        name = text.split(":")[0] if isinstance(text, str) else "Ann"
        return FakeReply(text=orjson.dumps({"name": name, "email": None, "phone": None,
                                            "company": None, "title": None}).decode())

    async def main() -> None:
        async with OpenAIFake() as server:
            server.default = reply
            print(server.url, flush=True)
            print(orjson.dumps(None).decode(), flush=True)
            loop = asyncio.get_running_loop()
            done = loop.run_in_executor(None, sys.stdin.read)
            while not done.done():
                server.requests.clear()  # the log would grow with the corpus
                await asyncio.sleep(1)

    asyncio.run(main())


PLACEHOLDER = "\x00document\x00"

# The floor: what any client must do per document, with nothing of agentflow's:
# read the JSONL line, put its text in the body agentflow sent (the same request:
# same headers, messages, response format, stream flag), post it, read the reply
# and parse the JSON in it. Same concurrency, same fake, same run.
RAW = r'''
import asyncio, sys, time, aiohttp, orjson
url, corpus, sample, concurrency = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
template = orjson.loads(open(sample, "rb").read())
user = next(m for m in template["messages"] if m["role"] == "user")
streams = bool(template.get("stream"))
async def main():
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer k",
                                              "Content-Type": "application/json"}) as session:
        async def one(text):
            try:
                user["content"] = text
                body = orjson.dumps(template)
                async with session.post(url + "/chat/completions", data=body) as r:
                    if streams:  # SSE: each data line is one JSON chunk
                        async for line in r.content:
                            if line.startswith(b"data: {"):
                                orjson.loads(line[6:])
                    else:
                        reply = orjson.loads(await r.read())
                        orjson.loads(reply["choices"][0]["message"]["content"])
            finally:
                sem.release()
        start = time.perf_counter()
        tasks = set()
        with open(corpus, "rb") as f:
            for line in f:
                await sem.acquire()
                t = asyncio.ensure_future(one(orjson.loads(line)["text"]))
                tasks.add(t); t.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)
        print(time.perf_counter() - start, file=sys.stderr)
asyncio.run(main())
'''


def child_env() -> dict[str, str]:
    """The measured children's environment: bytecode cached (in a directory
    of its own, ``PYTHONPYCACHEPREFIX``) even where ``PYTHONDONTWRITEBYTECODE``
    is set, as an installed package has it, so that a run's figure is not its
    imports compiled from source (about a second per process here)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "bench_scale_pycache")
    return env


def warm_up(url: str, sample: Path, work: Path, concurrency: int) -> None:
    """Both clients once over 10 records, unmeasured: their imports compiled
    into the bytecode cache (``child_env``) before anything is measured."""
    data = work / "warm.jsonl"
    corpus(data, 10)
    run_child(extract_argv(url, [str(data)], work / "warm.out.jsonl", concurrency))
    run_child([sys.executable, "-c", RAW, url, str(data), str(sample), str(concurrency)])


def run_child(argv: list[str]) -> tuple[float, float, str, float]:
    """Run ``argv``; its wall seconds, peak RSS (MB), stderr's last lines and
    CPU seconds (user + system)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=child_env())
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        err.seek(0)
        tail = err.read().decode(errors="replace").strip().splitlines()[-2:]
    return wall, usage.ru_maxrss / 1024, " | ".join(tail), usage.ru_utime + usage.ru_stime


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def extract_argv(url: str, inputs: list[str], out: Path, concurrency: int,
                 workers: int = 1) -> list[str]:
    return [str(Path(sys.executable).parent / "agentflow"), "extract", "--schema",
            f"{SCHEMA}:Contact", "--input", *inputs, "--model", "openai:gpt-4o-mini",
            "--base-url", url, "--api-key", "k", "--out", str(out),
            "--concurrency", str(concurrency), "--workers", str(workers)]


def corpus(path: Path, n: int) -> None:
    with path.open("wb") as f:
        for i in range(n):
            f.write(orjson.dumps({"id": i, "text": f"Person{i}: a person at Acme"}) + b"\n")


def instructions(argv: list[str]) -> int:
    """Instructions ``argv`` executes, by valgrind's cachegrind (``I refs``)."""
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=child_env(),
        check=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    assert found, done.stderr[-500:]
    return int(found.group(1).replace(",", ""))


def count_instructions(url: str, sample: Path, work: Path, concurrency: int) -> None:
    """Print each client's instructions per document (see the module's doc)."""
    small, large = 300, 1300
    per_doc: dict[str, float] = {}
    for client in ("agentflow", "raw"):
        counts = []
        for n in (small, large):
            data = work / f"i{n}.jsonl"
            corpus(data, n)
            if client == "raw":
                argv = [sys.executable, "-c", RAW, url, str(data), str(sample), str(concurrency)]
            else:
                out = work / f"i{n}.out.jsonl"
                out.unlink(missing_ok=True)
                argv = extract_argv(url, [str(data)], out, concurrency)
                argv = [sys.executable, "-c", "import sys; from agentflow.cli import main; "
                        "sys.exit(main())", *argv[1:]]
            counts.append(instructions(argv))
        per_doc[client] = (counts[1] - counts[0]) / (large - small)
        print(f"{client}: {counts[0]:,} instructions over {small} records, {counts[1]:,} over "
              f"{large}: **{per_doc[client] / 1e6:.2f} M** per document", flush=True)
    ratio = per_doc["raw"] / per_doc["agentflow"]
    print(f"raw / agentflow instructions per document: {ratio:.2f} (target >= 0.5): "
          f"{'PASS' if ratio >= 0.5 else 'FAIL'}")


def records(path: Path) -> list[dict[str, Any]]:
    from agentflow.documents.names import loads_record

    return [loads_record(line) for line in path.read_bytes().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", metavar="SAMPLE", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--text-files", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1],
                        help="agentflow runs per size, one per --workers value")
    parser.add_argument("--skip-raw", action="store_true")
    parser.add_argument("--skip-hostile", action="store_true")
    parser.add_argument("--instructions", action="store_true",
                        help="count each client's instructions per document (valgrind)")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; concurrency {args.concurrency}")
    sample = Path(tempfile.gettempdir()) / f"bench_scale.{os.getpid()}.json"
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(sample)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    server.stdout.readline()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            warm_up(url, sample, work, args.concurrency)
            if args.instructions:
                count_instructions(url, sample, work, args.concurrency)
                return
            rows = []
            fakes: list[str] = []
            print("\n| records | workers | load | wall s | docs/s | ms/doc | CPU ms/doc |"
                  " peak RSS MB | raw docs/s | raw CPU ms/doc | agentflow / raw |")
            print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            ratios: dict[int, float] = {}
            for n in args.sizes:
                data = work / f"c{n}.jsonl"
                corpus(data, n)
                raw_wall = raw_cpus = 0.0
                if not args.skip_raw:
                    raw_fake = cpu_of(server.pid)
                    raw_wall, _, raw_tail, raw_cpus = run_child([
                        sys.executable, "-c", RAW, url, str(data), str(sample),
                        str(args.concurrency)])
                    raw_fake = cpu_of(server.pid) - raw_fake
                    fakes.append(f"{n:,} raw: {1000 * raw_fake / n:.2f}")
                    assert raw_tail.replace(".", "", 1).isdigit(), raw_tail
                for workers in args.workers:
                    out = work / f"out{n}.jsonl"
                    load = os.getloadavg()[0]
                    fake = cpu_of(server.pid)
                    wall, rss, tail, cpu = run_child(extract_argv(
                        url, [str(data)], out, args.concurrency, workers))
                    fake = cpu_of(server.pid) - fake
                    fakes.append(f"{n:,} agentflow --workers {workers}: {1000 * fake / n:.2f}")
                    saved = sum(1 for _ in out.open("rb"))
                    ok = sum(1 for line in out.open("rb") if b'"ok":true' in line)
                    assert saved == n == ok, f"{saved} records ({ok} ok) of {n}: {tail}"
                    raw = raw_cpu = ratio = ""
                    if raw_wall:
                        raw, raw_cpu = f"{n / raw_wall:,.0f}", f"{1000 * raw_cpus / n:.2f}"
                        ratio = f"{raw_wall / wall:.2f}"
                        ratios[workers] = raw_wall / wall
                    load = max(load, os.getloadavg()[0])
                    if workers == args.workers[0]:
                        rows.append((n, wall, rss))
                    print(f"| {n:,} | {workers} | {load:.1f} | {wall:.1f} | {n / wall:,.0f} | "
                          f"{1000 * wall / n:.2f} | {1000 * cpu / n:.2f} | {rss:.0f} | {raw} | "
                          f"{raw_cpu} | {ratio} |", flush=True)
                    out.unlink()
                data.unlink()
            for workers, ratio in ratios.items():
                print(f"throughput at {args.sizes[-1]:,} records, --workers {workers}: "
                      f"{ratio:.2f}x raw (target >= 0.5x): {'PASS' if ratio >= 0.5 else 'FAIL'}")
            if fakes:
                print("\nthe fake vendor's CPU ms/doc per run: "
                      + "; ".join(fakes))
            if len(rows) > 1:
                growth = rows[-1][2] / rows[0][2]
                print(f"\npeak RSS {rows[-1][0]:,} / {rows[0][0]:,} records: {growth:.2f}x "
                      f"(target <= 1.25x): {'PASS' if growth <= 1.25 else 'FAIL'}")
            if not args.skip_hostile:
                hostile(work, url, args)
    finally:
        server.stdin.close()
        server.wait(30)
        sample.unlink(missing_ok=True)


def hostile(work: Path, url: str, args: argparse.Namespace) -> None:
    from agentflow.documents.budget import DEFAULT_BUDGET
    from tests.pdfs import hostile_pdf

    docs = work / "docs"
    docs.mkdir()
    for i in range(args.text_files):
        (docs / f"{i:05}.txt").write_text(f"Person{i}: a person at Acme")
    concurrency = min(args.concurrency, 64)
    alone, _, _, _ = run_child(extract_argv(url, [str(docs)], work / "alone.jsonl", concurrency))
    (docs / "00000-hostile.pdf").write_bytes(hostile_pdf())
    out = work / "mixed.jsonl"
    mixed, rss, tail, _ = run_child(extract_argv(url, [str(docs)], out, concurrency))
    got = {Path(r["id"]).name: r for r in records(out)}
    texts_ok = sum(1 for name, r in got.items() if name.endswith(".txt") and r["ok"])
    pdf = got.get("00000-hostile.pdf", {}).get("error", {})
    budget = DEFAULT_BUDGET.cpu_seconds or 0.0
    print(f"\nhostile PDF beside {args.text_files} text files (concurrency {concurrency}): "
          f"text files alone {alone:.1f}s; with the PDF {mixed:.1f}s (peak RSS {rss:.0f} MB); "
          f"text records ok {texts_ok}/{args.text_files}; PDF: {pdf.get('type')}: "
          f"{pdf.get('message', '')[:90]}")
    ok = (texts_ok == args.text_files and pdf.get("type") == "DocumentTooComplexError"
          and mixed <= alone + budget)
    print(f"target (all text records, the PDF failed by its budget, time <= {alone:.1f}s + "
          f"{budget:g}s): {'PASS' if ok else 'FAIL'}{'' if ok else ' ' + tail}")


if __name__ == "__main__":
    main()
