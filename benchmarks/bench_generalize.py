"""Generalisation benchmark: plain newcomer schemas with two worked examples on
document kinds other than Debian changelogs, scored against independent parsers.

Usage (from the repository root; the embedded model reads ~3-5 documents/min,
so tune with a small ``--n``)::

    python benchmarks/bench_generalize.py                        # report split, 10 per kind
    python benchmarks/bench_generalize.py --split tune --kinds dpkg,pymeta --n 5
    python benchmarks/bench_generalize.py --kinds systemd --n 20 --offset 10 --json out.json
    python benchmarks/bench_generalize.py --model openai:gpt-4o-mini --no-ground
    python benchmarks/bench_generalize.py --kinds dpkg --ids libc6:amd64,bash:amd64 --show
    python -m benchmarks.generalize.kinds                         # pool sizes per kind/split

Kinds (``benchmarks/generalize/kinds.py``): ``dpkg`` (a paragraph of
``/var/lib/dpkg/status``) and ``pymeta`` (a ``METADATA`` header block of an
installed Python distribution) are the **tuning kinds**; ``systemd`` (a
``.service`` unit file) is **the reporting kind**, ``copyright`` (a
DEP-5 ``copyright`` file) a second one, and ``man`` (the head of a man
page's roff source: ``.TH`` line and NAME section) a third, added after
the others were tuned: do not tune on them. Every kind
has a fixed ``tune``/``report`` split by a hash of the document's id
(``--split``, default ``report``: files never looked at while tuning);
``--n`` documents per kind from position ``--offset`` of the split.

Each kind's schema module (``benchmarks/generalize/<kind>.py``) is what a
newcomer writes: a plain pydantic model (``str | None`` and ``list[str]``
fields with descriptions, no patterns, no line rules, no ``Grounded``), a
one-sentence ``INSTRUCTIONS`` and two worked ``EXAMPLES`` (made-up
documents; ``--examples 0|1|2`` shows fewer). The run uses only the public
API: ``agentflow.batch.extract_many`` with the module's instructions and
examples, ``ground`` left to the framework's default unless ``--ground`` /
``--no-ground``.

Figures (definitions in ``benchmarks/generalize/scoring.py``), per kind and
overall (overall mean = mean of the kinds' means; counts pooled):

* exact accuracy per field over every document (a failed record scores every
  field wrong): whitespace-folded exact match, case kept; lists as multisets
  of folded items; their mean and the lowest field;
* the fully-right share (every field right), ``ok``/failed counts;
* invented values in ``ok`` records (a string that appears nowhere in the
  document after whitespace folding), and in how many records;
* when results carry it (a per-field ``confidence`` and/or ``needs_review``):
  the accuracy of fields reported confident (not in ``needs_review``; with
  numbers and no flags: confidence >= ``--threshold``), of the others, each
  confidence level's accuracy (to tune a threshold on), the share of ``ok`` records flagged for
  review, and the fully-right share of the unflagged ones;
* the **floor**, measured in the same run on the same documents, no model: a
  "label: value" regex per field named like the field (see
  ``scoring.floor_extract``), to show what the model adds.

``--json FILE`` (``-``: stdout, the tables then on stderr) writes every figure and each document's
wrong fields. Truth never comes from agentflow.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the generalize package, importable without putting the
    sys.path.insert(0, str(HERE))  # repository root (its agentflow) ahead of the venv's

from generalize.kinds import KINDS, Kind, sample  # noqa: E402
from generalize.scoring import (  # noqa: E402
    TARGETS,
    KindFigures,
    Scored,
    example_strings,
    floor_extract,
    score_record,
    targets,
)


def load_module(ref: str) -> tuple[Any, ModuleType]:
    """``FILE.py:Class`` -> (the class, its module), loaded by path."""
    path, _, name = ref.rpartition(":")
    spec = importlib.util.spec_from_file_location(f"_generalize_{Path(path).stem}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load schema module {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), module


def _git(where: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(where), *args], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def _tree(where: Path) -> str:
    """``branch commit`` of the checkout holding ``where``, marked when it has
    uncommitted changes to tracked files."""
    dirty = _git(where, "status", "--porcelain", "--untracked-files=no") not in ("", "?")
    return (f"{_git(where, 'rev-parse', '--abbrev-ref', 'HEAD')} "
            f"{_git(where, 'rev-parse', '--short', 'HEAD')}"
            + (" (uncommitted changes)" if dirty else ""))


def facts() -> dict[str, Any]:
    """Date, the trees of the agentflow imported and of the harness, load and
    versions: the context of the figures."""
    import agentflow

    code = Path(agentflow.__file__).resolve().parent
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "agentflow": str(code),
        "tree": _tree(code),
        "harness_tree": _tree(HERE),
        "python": sys.executable,
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


async def run_kind(model: Any, kind: Kind, docs: list[tuple[str, str]], examples: int,
                   ground: bool | None, concurrency: int, threshold: float,
                   ) -> tuple[list[Scored], float]:
    """Extract every document of one kind; the scored outcomes and wall seconds."""
    from agentflow.batch import ExtractInput, extract_many

    schema, module = load_module(kind.schema)
    shown = list(getattr(module, "EXAMPLES", []) or [])[:examples] or None
    texts = dict(docs)
    copies = example_strings(e.output for e in shown or [])
    scored: list[Scored] = []
    start = time.perf_counter()
    async for result in extract_many(
            model, [ExtractInput(i, t) for i, t in docs], schema, concurrency=concurrency,
            instructions=getattr(module, "INSTRUCTIONS", None), examples=shown, ground=ground):
        truth = kind.truth(texts[result.id])
        scored.append(score_record(result.id, texts[result.id], truth, result, threshold,
                                   copies))
    return scored, time.perf_counter() - start


def pick(kind: Kind, ids: list[str]) -> list[tuple[str, str]]:
    """The documents of ``kind`` with these ids, in that order (``--ids``).

    Raises:
        SystemExit: an id the kind does not have (naming it).
    """
    pool = kind.load()
    missing = [i for i in ids if i not in pool]
    if missing:
        raise SystemExit(f"--ids: {kind.name} has no document {', '.join(missing)} "
                         f"(e.g. {', '.join(sorted(pool)[:3])})")
    return [(i, pool[i]) for i in ids]


def floor(kind: Kind, docs: list[tuple[str, str]]) -> list[Scored]:
    """The regex floor's outcomes on the same documents."""
    out = []
    for doc_id, text in docs:
        truth = kind.truth(text)
        got = floor_extract(truth, text)
        out.append(score_record(doc_id, text, truth, SimpleNamespace(ok=True, output=got)))
    return out


def _fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:5.2f}"


def print_kind(name: str, fig: dict[str, Any], base: dict[str, Any] | None, header: str) -> None:
    """One kind's (or the overall) table."""
    print(f"\n== {header}")
    if base is not None:
        print(f"  {'field':20} model  floor")
        for f, a in fig["accuracy"].items():
            print(f"  {f:20} {_fmt(a)}  {_fmt(base['accuracy'].get(f))}")
        print(f"  {'mean exact accuracy':20} {_fmt(fig['mean_accuracy'])}  "
              f"{_fmt(base['mean_accuracy'])}")
        print(f"  {'fully right':20} {_fmt(fig['fully_right'])}  {_fmt(base['fully_right'])}")
    else:
        print(f"  {'mean exact accuracy':20} {_fmt(fig['mean_accuracy'])}  "
              f"(floor {_fmt(fig.get('floor_mean_accuracy'))})")
        print(f"  {'fully right':20} {_fmt(fig['fully_right'])}  "
              f"(floor {_fmt(fig.get('floor_fully_right'))})")
    if fig["accuracy"]:
        low = min(fig["accuracy"], key=fig["accuracy"].__getitem__)
        print(f"  {'lowest field':20} {low} {fig['accuracy'][low]:.2f}")
    elif fig.get("lowest_field"):
        print(f"  {'lowest field':20} {fig['lowest_field']} {fig['lowest_field_accuracy']:.2f}")
    print(f"  {'ok / failed':20} {fig['ok']} / {fig['failed']} of {fig['documents']}; "
          f"ok records fully right {_fmt(fig['ok_fully_right'])}")
    print(f"  {'invented in ok':20} {fig['invented_values']} values in "
          f"{fig['records_with_invented']} records ({fig['copied_from_examples']} copied "
          "from the examples)" + (f"; {fig['ungrounded_values']} values labelled ungrounded"
                                  if "ungrounded_values" in fig else ""))
    conf = fig.get("confidence")
    if conf is None:
        print(f"  {'confidence':20} not in the records")
    else:
        print(f"  {'confident fields':20} {conf['fields_confident']} right "
              f"{_fmt(conf['confident_accuracy'])}; others right "
              f"{_fmt(conf['unconfident_accuracy'])}")
        print(f"  {'needs review':20} {conf['share_flagged']:.2f} of {conf['records_rated']} "
              f"ok records; unflagged fully right {_fmt(conf['unflagged_fully_right'])}")
        if conf.get("by_confidence"):
            print(f"  {'by confidence':20} " + "; ".join(
                f"{level}: {r}/{n} right" for level, (r, n) in conf["by_confidence"].items()))
    met = targets(fig)
    print(f"  {'targets':20} " + "; ".join(
        f"{k} {'>=' if k != 'invented_values' else '<='} {TARGETS[k]}: "
        f"{'-' if v is None else 'yes' if v else 'NO'}" for k, v in met.items()))
    if "wall_s" in fig:
        per_min = fig["documents"] / fig["wall_s"] * 60 if fig["wall_s"] else 0.0
        print(f"  {'wall':20} {fig['wall_s']:.0f}s ({per_min:.1f} documents/min)")


async def main_async(ns: argparse.Namespace) -> dict[str, Any]:
    """Run every selected kind and print the tables; the JSON report."""
    from agentflow.model import resolve_model

    info = facts()
    print("$", shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"date {info['date']}; agentflow {info['agentflow']} (tree {info['tree']}); "
          f"harness tree {info['harness_tree']}; load {info['load']} ({info['cpus']} CPUs)")
    ground = {"default": None, "on": True, "off": False}[ns.ground]
    report: dict[str, Any] = {"facts": info, "args": vars(ns), "kinds": {}}
    model = resolve_model(ns.model)
    concurrency = ns.concurrency or getattr(model.profile, "concurrent_requests", None) or 1
    pooled: list[Scored] = []
    pooled_floor: list[Scored] = []
    means, floor_means = [], []
    try:
        for name in ns.kinds:
            kind = KINDS[name]
            docs = (sample(kind, ns.split, ns.n, ns.offset) if ns.ids is None
                    else pick(kind, ns.ids))
            fields = list(kind.truth(docs[0][1])) if docs else []
            scored, wall = await run_kind(model, kind, docs, ns.examples, ground, concurrency,
                                          ns.threshold)
            fig_k = KindFigures(fields, scored).as_dict()
            base = KindFigures(fields, floor(kind, docs)).as_dict()
            fig_k["wall_s"] = wall
            where = (f"split {ns.split}, {len(docs)} documents from #{ns.offset}"
                     if ns.ids is None else f"{len(docs)} documents by id")
            header = f"{name} ({kind.role} kind), {where}: {kind.source}"
            print_kind(name, fig_k, base, header)
            if ns.show:
                for s in scored:
                    if not s.ok:
                        print(f"    {s.doc_id}: failed {s.error}")
                    elif s.wrong or s.invented:
                        print(f"    {s.doc_id}: wrong {s.wrong}"
                              + (f" invented {s.invented}" if s.invented else ""))
            report["kinds"][name] = {
                "role": kind.role, "source": kind.source, "floor": base, **fig_k,
                "documents_ids": [d for d, _ in docs],
                "records": [{"id": s.doc_id, "ok": s.ok, "error": s.error,
                             "wrong": {f: list(v) for f, v in s.wrong.items()},
                             "invented": s.invented, "confident": s.confident}
                            for s in scored]}
            pooled += scored
            means.append(fig_k["mean_accuracy"])
            floor_means.append(base["mean_accuracy"])
            pooled_floor += floor(kind, docs)
    finally:
        aclose = getattr(model, "aclose", None)
        if aclose is not None:
            await aclose()
    overall = KindFigures([], pooled).as_dict()
    overall["mean_accuracy"] = sum(means) / len(means) if means else 0.0
    overall["fully_right"] = (sum(all(s.right.values()) for s in pooled) / len(pooled)
                              if pooled else 0.0)
    overall["floor_mean_accuracy"] = sum(floor_means) / len(floor_means) if floor_means else 0.0
    overall["floor_fully_right"] = (sum(all(s.right.values()) for s in pooled_floor)
                                    / len(pooled_floor) if pooled_floor else 0.0)
    overall["accuracy"] = {}  # fields differ per kind; the lowest field is the kinds' lowest
    lows = [(f"{k}.{v['lowest_field']}", v["accuracy"][v["lowest_field"]])
            for k, v in report["kinds"].items() if v.get("lowest_field")]
    overall["lowest_field"] = min(lows, key=lambda x: x[1])[0] if lows else None
    overall["lowest_field_accuracy"] = min(lows, key=lambda x: x[1])[1] if lows else None
    report["overall"] = overall
    print_kind("overall", overall, None,
               f"overall: {', '.join(ns.kinds)} (mean = mean of the kinds' means)")
    return report


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--kinds", default=",".join(KINDS),
                   help=f"comma-separated kinds (default all: {','.join(KINDS)})")
    p.add_argument("--split", choices=["tune", "report"], default="report",
                   help="which fixed split of each kind (default report: held out)")
    p.add_argument("--n", type=int, default=10, help="documents per kind (default 10)")
    p.add_argument("--offset", type=int, default=0, help="skip this many of the split first")
    p.add_argument("--model", default="local", help="'vendor:model' (default: local)")
    p.add_argument("--examples", type=int, choices=[0, 1, 2], default=2,
                   help="worked examples shown (default 2: the module's EXAMPLES)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--ground", dest="ground", action="store_const", const="on",
                   help="pass ground=True")
    g.add_argument("--no-ground", dest="ground", action="store_const", const="off",
                   help="pass ground=False")
    p.set_defaults(ground="default")
    p.add_argument("--concurrency", type=int, default=None,
                   help="calls in flight (default: the model profile's, else 1)")
    p.add_argument("--threshold", type=float, default=0.9,
                   help="with confidence numbers but no needs_review: a field below this "
                        "is not confident")
    p.add_argument("--ids", type=lambda v: [i for i in v.split(",") if i],
                   help="comma-separated document ids of one kind (as --show prints them), "
                        "instead of a split: to look at particular documents again")
    p.add_argument("--show", action="store_true", help="print each document's wrong fields")
    p.add_argument("--json", metavar="FILE", help="write the figures as JSON (- for stdout)")
    ns = p.parse_args(argv)
    ns.kinds = [k.strip() for k in ns.kinds.split(",") if k.strip()]
    unknown = [k for k in ns.kinds if k not in KINDS]
    if unknown:
        p.error(f"unknown kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}")
    if ns.ids is not None and len(ns.kinds) != 1:
        p.error("--ids needs exactly one kind in --kinds")
    if ns.n < 1 or ns.offset < 0:
        p.error("--n must be >= 1 and --offset >= 0")
    return ns


def main() -> None:
    """Parse arguments, run, print, write JSON."""
    ns = parse_args()
    with contextlib.redirect_stdout(sys.stderr if ns.json == "-" else sys.stdout):
        report = asyncio.run(main_async(ns))  # with --json -, the tables go to stderr
    if ns.json:
        text = json.dumps(report, indent=1, default=str)
        if ns.json == "-":
            print(text)
        else:
            Path(ns.json).write_text(text + "\n", encoding="utf-8")
            print(f"\nJSON written to {ns.json}")


if __name__ == "__main__":
    main()
