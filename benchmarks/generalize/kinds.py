"""The document kinds of the generalisation benchmark, where their files are,
and the fixed split of each into a tuning set and a held-out report set.

========== ======= ============================================== =================
kind       role    documents (one per ...)                         schema
========== ======= ============================================== =================
dpkg       tune    installed package paragraph of                  dpkg_status.py:Package
                   ``/var/lib/dpkg/status``
pymeta     tune    ``*.dist-info/METADATA`` under this Python's     python_metadata.py:Distribution
                   site-packages: the header block only
systemd    report  ``/usr/lib/systemd/system/*.service`` file       systemd_unit.py:Service
                   (symlinks and duplicates skipped)
copyright  report  DEP-5 ``/usr/share/doc/*/copyright`` file        dep5_copyright.py:CopyrightFile
                   (identical contents once)
man        report  the head of a man page's roff source            man_page.py:ManPage
                   (``/usr/share/man/man{1,5,8}/*.gz`` less gcloud's:
                   from ``.TH`` to the third ``.SH``; identical heads once)
========== ======= ============================================== =================

``man`` was added after the others were tuned, as a kind never tuned on:
its first figures were taken before any framework change made for it.

Tuning kinds are the ones a framework change may be tuned on (their ``tune``
split); the reporting kinds are not to be tuned on at all, and every kind's
``report`` split is files never looked at while tuning.

Documents longer than ``MAX_DOC_CHARS`` (4000) characters are left out of
every kind (the embedded model reads ~3-5 documents a minute; the long-entry
path is the main job's benchmark), and so are documents the truth parser
finds nothing in (no field set).

**Split.** Each document's id gets a stable hash, ``sha256("<kind>:<id>")``:
its first byte's low bit puts it in ``tune`` (0) or ``report`` (1), and the
split is ordered by the hash. A document keeps its split and place whatever
else is installed (a package installed later lands in one split without
moving the others), so ``--split report --n 10`` is the same set on every
run of the same machine, and ``--offset 10`` gives the next ten, unseen.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import os
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import truth as t

HERE = Path(__file__).resolve().parent
MAX_DOC_CHARS = 4000
DPKG_STATUS = "/var/lib/dpkg/status"
UNIT_GLOB = "/usr/lib/systemd/system/*.service"
COPYRIGHT_GLOB = "/usr/share/doc/*/copyright"
MAN_GLOB = "/usr/share/man/man[158]/*.gz"
MAN_SKIP = ("gcloud",)
"""Man pages left out: the Google Cloud SDK's ~16,700 generated pages (one
generator's near-identical heads would be nearly the whole kind)."""

__all__ = ["KINDS", "MAX_DOC_CHARS", "Kind", "sample", "split_of"]


@dataclass(frozen=True)
class Kind:
    """One document kind.

    Attributes:
        name: the kind's name on the command line.
        role: ``"tune"`` or ``"report"`` (see the module docstring).
        schema: ``FILE.py:Class`` of its schema module (what ``agentflow
            extract --schema`` takes).
        source: where the documents come from (printed with the figures).
        load: ``() -> {id: text}``, every document of the kind on this machine.
        truth: ``text -> {field: value}``, the independent parser.
    """

    name: str
    role: str
    schema: str
    source: str
    load: Callable[[], dict[str, str]]
    truth: Callable[[str], t.Truth]


def _dpkg() -> dict[str, str]:
    docs: dict[str, str] = {}
    text = Path(DPKG_STATUS).read_text(encoding="utf-8", errors="replace")
    for stanza in t.split_stanzas(text):
        fields = t.parse_stanza(stanza)
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            arch = fields.get("Architecture", "")
            docs[f"{fields['Package']}:{arch}"] = stanza + "\n"
    return docs


def _site_packages() -> list[str]:
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return sorted(p for p in paths if os.path.isdir(p))


def _pymeta() -> dict[str, str]:
    docs: dict[str, str] = {}
    for site in _site_packages():
        for path in sorted(glob.glob(os.path.join(site, "*.dist-info", "METADATA"))):
            text = Path(path).read_text(encoding="utf-8", errors="replace")
            truth = t.metadata_truth(text)
            if truth["name"] and truth["name"].lower() != "agentflow":  # not our own package
                docs[f"{truth['name']}=={truth['version']}"] = t.metadata_header(text) + "\n"
    return docs


def _systemd() -> dict[str, str]:
    docs: dict[str, str] = {}
    seen: set[str] = set()
    for path in sorted(glob.glob(UNIT_GLOB)):
        if os.path.islink(path):
            continue
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        if text not in seen:
            seen.add(text)
            docs[Path(path).name] = text
    return docs


def _copyright() -> dict[str, str]:
    docs: dict[str, str] = {}
    seen: set[str] = set()
    for path in sorted(glob.glob(COPYRIGHT_GLOB)):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if text.startswith("Format:") and text not in seen:
            seen.add(text)
            docs[Path(path).parent.name] = text
    return docs


def _man() -> dict[str, str]:
    docs: dict[str, str] = {}
    seen: set[str] = set()
    for path in sorted(glob.glob(MAN_GLOB)):
        if os.path.islink(path) or Path(path).name.startswith(MAN_SKIP):
            continue
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                head = t.man_head(f.read())
        except (OSError, EOFError):
            continue
        if head is not None and head not in seen:
            seen.add(head)
            docs[Path(path).name.removesuffix(".gz")] = head + "\n"
    return docs


KINDS: dict[str, Kind] = {
    "dpkg": Kind("dpkg", "tune", f"{HERE / 'dpkg_status.py'}:Package",
                 f"installed paragraphs of {DPKG_STATUS}", _dpkg, t.dpkg_truth),
    "pymeta": Kind("pymeta", "tune", f"{HERE / 'python_metadata.py'}:Distribution",
                   f"METADATA header blocks under {', '.join(_site_packages())}",
                   _pymeta, t.metadata_truth),
    "systemd": Kind("systemd", "report", f"{HERE / 'systemd_unit.py'}:Service",
                    UNIT_GLOB, _systemd, t.unit_truth),
    "copyright": Kind("copyright", "report", f"{HERE / 'dep5_copyright.py'}:CopyrightFile",
                      f"DEP-5 files {COPYRIGHT_GLOB}", _copyright, t.copyright_truth),
    "man": Kind("man", "report", f"{HERE / 'man_page.py'}:ManPage",
                f"man page heads {MAN_GLOB}", _man, t.man_truth),
}


def _hash(kind: str, doc_id: str) -> bytes:
    return hashlib.sha256(f"{kind}:{doc_id}".encode()).digest()


def split_of(kind: str, doc_id: str) -> str:
    """``"tune"`` or ``"report"``: the fixed split of one document (module docstring)."""
    return "report" if _hash(kind, doc_id)[0] & 1 else "tune"


def usable(kind: Kind, docs: dict[str, str]) -> dict[str, str]:
    """The documents the benchmark uses: at most ``MAX_DOC_CHARS`` characters,
    and at least one field set by the truth parser."""
    return {i: d for i, d in docs.items()
            if len(d) <= MAX_DOC_CHARS and any(kind.truth(d).values())}


def sample(kind: Kind, split: str, n: int, offset: int = 0,
           docs: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """``n`` documents ``(id, text)`` of ``split`` (``"tune"`` or ``"report"``),
    from position ``offset`` in the split's hash order; ``docs`` defaults to
    every usable document of the kind on this machine.

    Raises:
        ValueError: an unknown split.
    """
    if split not in ("tune", "report"):
        raise ValueError(f"split must be 'tune' or 'report', got {split!r}")
    pool = usable(kind, kind.load() if docs is None else docs)
    ids = sorted((i for i in pool if split_of(kind.name, i) == split),
                 key=lambda i: _hash(kind.name, i))
    return [(i, pool[i]) for i in ids[offset:offset + n]]


def counts() -> dict[str, tuple[int, int]]:
    """Per kind: usable documents in ``tune`` and in ``report`` on this machine."""
    out = {}
    for name, kind in KINDS.items():
        pool = usable(kind, kind.load())
        report = sum(split_of(name, i) == "report" for i in pool)
        out[name] = (len(pool) - report, report)
    return out


if __name__ == "__main__":  # python -m benchmarks.generalize.kinds: the pool sizes
    for name, (tune, report) in counts().items():
        print(f"{name:10} tune {tune:4}  report {report:4}", file=sys.stdout)
