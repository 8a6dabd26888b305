"""The main job on the embedded model: Debian changelog entries -> ``ChangelogEntry``.

Runs what ``agentflow extract --schema examples/debian_changelog.py:ChangelogEntry
--input '/usr/share/doc/*/changelog.Debian.gz'`` runs (``prepare``, ``MAX_CHARS``,
``INSTRUCTIONS``, ``EXAMPLES``, ``extract_many`` on ``LocalModel()``, grounded fields) on a
sample of the files, then scores every output against ``parse_entry`` (the
independent rule-based parser in examples/debian_changelog.py) applied to the
uncut entry.

Samples (``--sample``): the sorted file list is shuffled with ``--seed``
(``random.Random(seed)``); ``tune`` takes the first ``--n`` files at even
positions of that order, ``report`` the first ``--n`` at odd positions, so
the two are disjoint, spread over the whole list, and the same on every run
of the same machine. Instructions and few-shot examples are chosen on
``tune``; figures are reported on ``report``; ``--offset K`` skips the first K
files of the half (``--sample report --offset 40``: the next 40, a set not seen
before). ``--sample range`` keeps the old ``--offset``/``--stride`` selection;
``--sample long`` takes the files whose latest entry is longer than the
schema's ``MAX_CHARS`` (one per distinct entry: read whole, never cut). Prints:

* documents per minute and tokens/s (output tokens, and prompt + output, per
  wall second of the batch; the server is started before the clock starts);
* the share of documents that validated;
* field accuracy over the documents the parser understands (an invalid or
  missing output scores 0): exact match after strip for package, version,
  distribution, urgency, maintainer and date; maintainer also by name
  (case and spacing ignored, e-mail not required) and date also normalized
  (the same instant, whatever the format); changes as the mean Jaccard
  overlap of word tokens (all items joined) and the share with the right
  number of items. ``mean`` averages the seven fields (maintainer by name,
  date normalized, changes by Jaccard);
* the issue's targets: exact accuracy averaged over package, version,
  distribution, urgency, maintainer and date; changes token F1 (items joined,
  word tokens, multiset); the share of records with every field right (the six
  exact and changes F1 >= 0.8); failures by type (``GroundingError``,
  ``DegenerateOutputError``...), and degenerate records reported ok (an ok
  record in which ``check_degenerate`` finds a loop, or a value outside the
  document: must be 0).

    python benchmarks/bench_extract.py [--sample tune|report|range] [--seed 10] [--n 40]
        [--offset 0] [--stride 1] [--concurrency N] [--threads N] [--slots N] [--again]
        [--no-cache-prompt] [--show] [--sampling NAME=VALUE ...] [--schema FILE.py:ChangelogEntry]

``profile:`` says where the time went per document, from llama.cpp's reply
``timings`` (``LocalModel.stats``): requests, prompt tokens evaluated and
reused from the prompt cache, tokens decoded (each a sampling step, forced or
not), the server's milliseconds for each, and the CPU seconds of this
process and the server's (``LocalModel.cpu_seconds``).
``--again`` runs the batch a second time in reverse order on the warm server
and lists the documents whose records differ (reproducibility).
"""

from __future__ import annotations

import argparse
import asyncio
import email.utils
import os
import platform
import random
import re
import shlex
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_REF = str(ROOT / "examples" / "debian_changelog.py") + ":ChangelogEntry"
INPUT = "/usr/share/doc/*/changelog.Debian.gz"
EXACT = ("package", "version", "distribution", "urgency", "maintainer", "date")
HEADLINE = ("package", "version", "distribution", "urgency", "maintainer~", "date~", "changes")
_WORD = re.compile(r"\w+")


@dataclass
class Scores:
    """Per-field scores (0..1) summed over the scored documents."""

    total: dict[str, float] = field(default_factory=dict)
    docs: int = 0

    def add(self, row: dict[str, float]) -> None:
        """Add one document's scores."""
        self.docs += 1
        for key, value in row.items():
            self.total[key] = self.total.get(key, 0.0) + value

    def mean(self, key: str) -> float:
        """The mean score of ``key`` over the scored documents."""
        return self.total.get(key, 0.0) / self.docs if self.docs else 0.0


def _name(maintainer: str) -> str:
    """The name part of ``Name <email>``, case-folded, spacing collapsed."""
    name, _ = email.utils.parseaddr(maintainer)
    name = name or maintainer.split("<")[0]
    return " ".join(name.split()).casefold()


def _instant(text: str) -> datetime | None:
    """``text`` as a datetime (RFC 2822 as in changelogs, or ISO 8601), else ``None``."""
    text = text.strip()
    try:
        return email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _same_instant(a: str, b: str) -> bool:
    """Whether two date strings name the same instant."""
    x, y = _instant(a), _instant(b)
    if x is None or y is None:
        return False
    try:
        return x == y
    except TypeError:  # one naive, one aware: compare the wall-clock values
        return x.replace(tzinfo=None) == y.replace(tzinfo=None)


def jaccard(a: list[str], b: list[str]) -> float:
    """Overlap of the word-token sets of two lists of strings (1.0 when both are empty)."""
    x = set(_WORD.findall(" ".join(a).lower()))
    y = set(_WORD.findall(" ".join(b).lower()))
    return len(x & y) / len(x | y) if x | y else 1.0


def token_f1(a: list[str], b: list[str]) -> float:
    """F1 of the word-token multisets of two lists of strings (1.0 when both are empty)."""
    x = Counter(_WORD.findall(" ".join(a).lower()))
    y = Counter(_WORD.findall(" ".join(b).lower()))
    if not x and not y:
        return 1.0
    common = sum((x & y).values())
    if not common:
        return 0.0
    precision, recall = common / sum(x.values()), common / sum(y.values())
    return 2 * precision * recall / (precision + recall)


KEYS = (*EXACT, "maintainer~", "date~", "changes", "n_changes", "changes_f1", "all_right")


def score(output: Any, ref: Any) -> dict[str, float]:
    """One document's field scores: ``output`` (validated or ``None``) against ``ref``."""
    if output is None:
        return dict.fromkeys(KEYS, 0.0)
    row = {f: float(str(getattr(output, f)).strip() == str(getattr(ref, f)).strip())
           for f in EXACT}
    row["maintainer~"] = float(_name(output.maintainer) == _name(ref.maintainer))
    row["date~"] = float(row["date"] == 1.0 or _same_instant(output.date, ref.date))
    row["changes"] = jaccard(output.changes, ref.changes)
    row["n_changes"] = float(len(output.changes) == len(ref.changes))
    row["changes_f1"] = token_f1(output.changes, ref.changes)
    row["all_right"] = float(all(row[f] == 1.0 for f in EXACT) and row["changes_f1"] >= 0.8)
    return row


def sample(paths: list[str], name: str, n: int, seed: int, offset: int = 0,
           stride: int = 1) -> list[str]:
    """The files of sample ``name`` (see the module docstring): ``tune`` and
    ``report`` are disjoint halves of the seeded shuffle of the sorted list."""
    paths = sorted(paths)
    if name == "range":
        return paths[offset::stride][:n]
    order = paths[:]
    random.Random(seed).shuffle(order)
    half = order[0::2] if name == "tune" else order[1::2]
    return half[offset:offset + n]


def long_paths(paths: list[str], module: Any) -> list[str]:
    """The files whose latest entry (``module.prepare``) is longer than
    ``module.MAX_CHARS``, one per distinct entry (packages built from one
    source share a changelog), sorted (``--sample long``)."""
    import gzip

    seen: set[str] = set()
    out = []
    for path in sorted(paths):
        entry = module.prepare(gzip.decompress(Path(path).read_bytes()).decode(
            "utf-8", errors="replace"))
        if len(entry) > module.MAX_CHARS and entry not in seen:
            seen.add(entry)
            out.append(path)
    return out


def documents(n: int, offset: int, stride: int = 1, name: str = "range", seed: int = 10,
              schema: str = SCHEMA_REF) -> tuple[list[Any], dict[str, Any], int, Any]:
    """The batch as the CLI builds it (gunzipped, ``prepare``; ``extract`` cuts
    it at ``MAX_CHARS`` as the CLI does, through ``extract_many(max_chars=...)``,
    which reads an entry whole when a field it needs lies past the cut) for the
    sample ``name``, the references (parsed from the uncut entry), how many are
    longer than ``MAX_CHARS``, and the schema module."""
    import glob
    import gzip

    from agentflow.batch import ExtractInput
    from agentflow.cli import load_schema

    _, module = load_schema(schema)
    assert module is not None
    batch, refs, cut = [], {}, 0
    paths = (long_paths(glob.glob(INPUT), module)[offset:offset + n] if name == "long"
             else sample(glob.glob(INPUT), name, n, seed, offset, stride))
    for path in paths:
        raw = gzip.decompress(Path(path).read_bytes()).decode("utf-8", errors="replace")
        full = module.prepare(raw)
        batch.append(ExtractInput(path, full))
        cut += len(full) > module.MAX_CHARS
        refs[path] = module.parse_entry(full)
    return batch, refs, cut, module


def sampling_arg(text: str) -> tuple[str, Any]:
    """``name=value`` (a number, or JSON) as a sampler setting."""
    import json

    name, _, value = text.partition("=")
    return name, json.loads(value)


@dataclass
class Run:
    """One pass of the batch over one server: results, batch wall seconds, the
    server's ``timings`` summed (``ServerStats``)."""

    label: str
    results: list[Any]
    wall: float
    stats: Any
    cpu: float = 0.0


async def extract(batch: list[Any], module: Any, concurrency: int | None,
                  sampling: list[tuple[str, Any]] | None = None,
                  gguf: str | None = None, template: str | None = None, passes: int = 1,
                  threads: int | None = None, slots: int | None = None,
                  again: bool = False, cache_prompt: bool | None = None,
                  ) -> tuple[list[Run], float, Any]:
    """Run the batch on ``LocalModel()`` (or ``gguf``: a bundled model's name or
    a GGUF file; its own chat template when ``template`` is ``"gguf"``,
    ``PLAIN_TEMPLATE`` for ``"plain"``, else the model's default; its profile's ``sampling``
    replaced when ``sampling`` is given), ``passes`` extraction passes per
    document (``agentflow.extraction.recall``), ``threads`` CPU threads and
    ``slots`` decoding slots (``None``: ``LocalModel``'s defaults),
    ``concurrency`` calls in flight (``None``: the profile's, one per slot).
    With ``again`` the batch runs a second time on the same server in reverse
    order (the prompt cache warm, other documents before each). Returns the
    runs, the load seconds and the model (its ``threads`` and ``parallel``)."""
    from agentflow.batch import extract_many
    from agentflow.providers.local import DEFAULT_MODEL, PLAIN_TEMPLATE, LocalModel

    name = gguf or DEFAULT_MODEL
    chat_template = {"gguf": "", "plain": PLAIN_TEMPLATE}.get(template or "")
    options: dict[str, Any] = {"threads": threads, "parallel": slots}
    if cache_prompt is not None:
        options["cache_prompt"] = cache_prompt
    model = LocalModel(name, chat_template=chat_template, **options)
    if sampling is not None:
        model = LocalModel(name, chat_template=chat_template, **options,
                           profile=model.profile.with_(sampling=tuple(sampling)))
    concurrency = concurrency or model.profile.concurrent_requests
    runs = []
    try:
        start = time.perf_counter()
        model._ensure_server()  # load the model before the clock starts
        load = time.perf_counter() - start
        for label, docs in [("cold", batch), ("again, reversed", batch[::-1])][:1 + again]:
            before, start, cpu = model.stats.copy(), time.perf_counter(), model.cpu_seconds()
            results = [r async for r in extract_many(
                model, docs, module.ChangelogEntry, concurrency=concurrency,
                instructions=module.INSTRUCTIONS, examples=getattr(module, "EXAMPLES", None),
                passes=passes, max_chars=module.MAX_CHARS)]
            runs.append(Run(label, results, time.perf_counter() - start,
                            model.stats - before, model.cpu_seconds() - cpu))
        return runs, load, model
    finally:
        await model.aclose()


def machine_facts() -> str:
    """CPUs, load and versions: the context of the figures."""
    from importlib.metadata import version

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text()
                .splitlines() if line.startswith("model name")), platform.processor())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} CPUs ({cpu}); load average {load}; Python "
            f"{platform.python_version()}; xllamacpp {version('xllamacpp')}")


def degenerate_ok(ok: list[Any], sources: dict[str, str]) -> int:
    """Ok records with a repetition loop or repeated items, or a grounded value
    that is not in its document (the engine must have refused them all)."""
    from agentflow.grounding import check_grounding, grounded_values
    from agentflow.grounding.degenerate import check_degenerate

    bad = 0
    for r in ok:
        source = sources[r.id]
        values = grounded_values(r.output, type(r.output))
        if check_degenerate(r.output, source) or not check_grounding(values, source).ok:
            bad += 1
    return bad


def same_records(first: list[Any], second: list[Any]) -> list[str]:
    """Ids of the documents whose two results differ (output, error type, spans)."""
    def key(r: Any) -> Any:
        out = r.output.model_dump() if r.ok else type(r.error).__name__
        return out, sorted((k, tuple(v)) for k, v in (r.spans or {}).items())

    by_id = {r.id: key(r) for r in second}
    return [r.id for r in first if by_id.get(r.id) != key(r)]


def report(results: list[Any], refs: dict[str, Any], wall: float, show: bool,
           sources: dict[str, str], stats: Any = None, cpu: float = 0.0) -> Scores:
    """Print throughput, validity and accuracy (and the server's ``stats``: where
    the time went per document); return the scores."""
    n = len(results)
    ok = [r for r in results if r.ok]
    out_tokens = sum(r.usage.output_tokens for r in results)
    all_tokens = out_tokens + sum(r.usage.input_tokens for r in results)
    print(f"documents/min {n / wall * 60:.1f}; output tokens/s {out_tokens / wall:.1f}; "
          f"prompt+output tokens/s {all_tokens / wall:.1f}; wall {wall:.1f}s; "
          f"tokens in/out {all_tokens - out_tokens}/{out_tokens}")
    print(f"median seconds per document {statistics.median(r.duration for r in results):.2f}; "
          f"requests per document {sum(r.attempts for r in results) / n:.2f}")
    if stats is not None:
        print("profile: " + stats.per(n) + f"; CPU seconds/doc {cpu / n:.1f} (this process "
              "and the server's: less load-dependent than wall time)")
    print(f"validated {len(ok)}/{n} ({len(ok) / n:.0%})")
    kinds = Counter(type(r.error).__name__ for r in results if not r.ok)
    print("failed by type: " + (", ".join(f"{k} {v}" for k, v in kinds.most_common()) or "none"))
    for r in results:
        if not r.ok:
            print(f"  failed {r.id}: {type(r.error).__name__}: {str(r.error)[:300]}")
    print(f"degenerate records reported ok: {degenerate_ok(ok, sources)}")
    scores = Scores()
    for r in results:
        ref = refs[r.id]
        if ref is None:
            continue
        row = score(r.output if r.ok else None, ref)
        scores.add(row)
        if show:
            wrong = {f: (getattr(r.output, f), getattr(ref, f)) for f in (*EXACT, "changes")
                     if r.ok and (row["changes_f1"] < 0.8 if f == "changes" else row[f] < 1)}
            print(f"  {Path(r.id).parent.name}: {wrong if r.ok else 'invalid'}")
    print(f"field accuracy over {scores.docs} documents the reference parser understands:")
    for f in (*EXACT, "maintainer~", "date~", "changes", "n_changes", "changes_f1"):
        label = {"maintainer~": "maintainer (name)", "date~": "date (normalized)",
                 "changes": "changes (Jaccard)", "n_changes": "changes (item count)",
                 "changes_f1": "changes (token F1)"}.get(f, f)
        print(f"  {label:22} {scores.mean(f):.2f}")
    mean = statistics.fmean(scores.mean(f) for f in HEADLINE)
    print(f"  {'mean of 7 fields':22} {mean:.3f}")
    exact = statistics.fmean(scores.mean(f) for f in EXACT)
    print(f"  {'exact, mean of 6':22} {exact:.3f} (lowest {min(EXACT, key=scores.mean)} "
          f"{min(scores.mean(f) for f in EXACT):.2f})")
    print(f"  {'records all right':22} {scores.mean('all_right'):.2f}")
    calibration(results, refs)
    return scores


CHANGES_RIGHT = 0.95
"""Changes token F1 from which the list counts as right in the calibration
(the reference splits nested items out, grounding keeps them inside their item)."""


def calibration(results: list[Any], refs: dict[str, Any]) -> None:
    """Print the ok records that need review (and which fields), and how often
    the fields reported confident (not in ``needs_review``) are right: the six
    header/trailer fields exactly, changes with token F1 >= ``CHANGES_RIGHT``."""
    ok = [r for r in results if r.ok and refs.get(r.id) is not None]
    flagged = Counter(f for r in ok for f in r.needs_review)
    print(f"needs review: {sum(bool(r.needs_review) for r in ok)}/{len(ok)} ok records"
          + (f" ({', '.join(f'{f} {k}' for f, k in flagged.most_common())})" if flagged else ""))
    right = total = others_right = others = 0
    for r in ok:
        row = score(r.output, refs[r.id])
        for f in (*EXACT, "changes"):
            good = row["changes_f1"] >= CHANGES_RIGHT if f == "changes" else row[f] == 1.0
            if f in r.needs_review:
                others, others_right = others + 1, others_right + good
            else:
                total, right = total + 1, right + good
    print(f"confident fields right: {right}/{total}"
          + (f" ({right / total:.3f})" if total else "")
          + f"; fields needing review right: {others_right}/{others}")


def main() -> None:
    """Parse arguments, run the batch, print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sample", choices=["tune", "report", "range", "long"], default="report",
                   help="tune / report: disjoint seeded halves; range: --offset/--stride; "
                        "long: the entries longer than MAX_CHARS, one per distinct entry")
    p.add_argument("--seed", type=int, default=10, help="shuffle seed of the samples")
    p.add_argument("--n", type=int, default=40, help="documents (default 40)")
    p.add_argument("--offset", type=int, default=0, help="skip this many documents first")
    p.add_argument("--stride", type=int, default=1,
                   help="take every STRIDE-th document (a spread-out held-out set)")
    p.add_argument("--concurrency", type=int, default=None,
                   help="calls in flight (default: one per decoding slot)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads (default: AGENTFLOW_THREADS, else the CPUs available "
                        "less one)")
    p.add_argument("--slots", type=int, default=None,
                   help="decoding slots, llama.cpp's n_parallel (default: LocalModel's)")
    p.add_argument("--again", action="store_true",
                   help="run the batch a second time, reversed, on the warm server, and "
                        "say which records differ")
    p.add_argument("--no-cache-prompt", action="store_true",
                   help="evaluate every prompt whole (llama.cpp cache_prompt false)")
    p.add_argument("--show", action="store_true", help="print each document's wrong fields")
    p.add_argument("--schema", default=SCHEMA_REF, metavar="FILE.py:ChangelogEntry",
                   help="another schema module of the same shape (a variant to compare; "
                        "default: examples/debian_changelog.py)")
    p.add_argument("--sampling", type=sampling_arg, action="append", metavar="NAME=VALUE",
                   help="sampler setting instead of the profile's (repeatable; "
                        "--sampling none=0 sends none)")
    p.add_argument("--model", metavar="NAME|GGUF",
                   help="another bundled model (smollm2-135m-instruct) or a .gguf file")
    p.add_argument("--template", choices=["plain", "gguf"], default=None,
                   help="chat template: the completion-style PLAIN_TEMPLATE or the GGUF's own "
                        "(default: a bundled model's own; PLAIN_TEMPLATE for a file)")
    p.add_argument("--passes", type=int, default=None,
                   help="extraction passes per document (default: the schema module's "
                        "PASSES, else 1)")
    ns = p.parse_args()
    print("$", shlex.join([Path(sys.executable).name, *sys.argv]))
    print("machine:", machine_facts())
    batch, refs, cut, module = documents(ns.n, ns.offset, ns.stride, ns.sample, ns.seed,
                                         ns.schema)
    where = (f"sorted, from #{ns.offset}, every {ns.stride}" if ns.sample == "range"
             else f"sample {ns.sample!r}, seed {ns.seed}")
    print(f"{len(batch)} documents ({INPUT}, {where}); {cut} cut at "
          f"MAX_CHARS={module.MAX_CHARS}; {sum(r is None for r in refs.values())} the reference "
          "parser does not understand")
    sampling = None if ns.sampling is None else [s for s in ns.sampling if s[0] != "none"]
    passes = ns.passes or getattr(module, "PASSES", 1)
    runs, load, model = asyncio.run(extract(
        batch, module, ns.concurrency, sampling, ns.model, ns.template, passes, ns.threads,
        ns.slots, ns.again, False if ns.no_cache_prompt else None))
    print(f"model load {load:.1f}s (not in the figures below); threads {model.threads}; "
          f"slots {model.parallel}; concurrency {ns.concurrency or model.parallel}; "
          f"sampling {'profile' if sampling is None else dict(sampling)}; passes {passes}")
    for run in runs:
        print(f"--- {run.label} (load average {os.getloadavg()[0]:.2f})")
        report(run.results, refs, run.wall, ns.show, {d.id: d.text for d in batch}, run.stats,
               run.cpu)
    if len(runs) > 1:
        differ = same_records(runs[0].results, runs[1].results)
        print(f"records that differ between the runs: {len(differ)}/{len(batch)}"
              + "".join(f"\n  {Path(i).parent.name}" for i in differ))


if __name__ == "__main__":
    main()
