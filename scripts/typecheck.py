"""``mypy --strict`` over the whole installed package: ``agentflow/`` and
``providers/``, which installs as ``agentflow.providers``
(``[tool.setuptools] package-dir`` in pyproject.toml).

``mypy --strict agentflow`` alone never reads ``providers/``: the core imports
it only by name at run time (``importlib``), and mypy cannot follow the
editable install's import hook that maps ``agentflow.providers`` to
``providers/``. Here every file of both directories is a build source under
the module name it has once installed, through mypy's own build API
(``mypy.build.build`` with ``BuildSource(path, module)``, as mypy's stubtest
does), with the options of the command line (``[tool.mypy]`` included).

Usage: ``python scripts/typecheck.py [extra mypy flags]``; exit status 1 when
mypy reports an error, 2 when it could not run.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES: dict[str, str] = {"agentflow": "agentflow", "agentflow.providers": "providers"}
"""Installed package name -> its directory, as ``[tool.setuptools] package-dir`` maps them."""


def module_name(package: str, directory: Path, path: Path) -> str:
    """The installed module name of ``path`` inside ``directory`` (installed as ``package``)."""
    parts = list(path.relative_to(directory).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def sources(root: Path = ROOT) -> list[tuple[str, str]]:
    """``(path, module)`` of every Python file of the installed package, sorted by module.

    A directory mapped to a package of its own (``providers/``) is never read
    again as part of another (``agentflow/providers/`` does not exist, but a
    nested mapping would be skipped the same way)."""
    mapped = {(root / d).resolve() for d in PACKAGES.values()}
    found: dict[str, str] = {}
    for package, rel in PACKAGES.items():
        directory = (root / rel).resolve()
        for path in sorted(directory.rglob("*.py")):
            owner = next(p for p in [path.parent, *path.parent.parents]
                         if p in mapped or p == directory)
            if owner != directory:
                continue
            found[module_name(package, directory, path)] = str(path.relative_to(root))
    return sorted(((path, module) for module, path in found.items()), key=lambda s: s[1])


def main(argv: list[str], root: Path = ROOT) -> int:
    """Run mypy (``--strict`` plus ``argv``) over ``sources(root)``; print its messages."""
    from mypy import build
    from mypy.errors import CompileError
    from mypy.main import process_options
    from mypy.modulefinder import BuildSource

    _, options = process_options(["--strict", *argv, "agentflow"])
    listed = sources(root)
    build_sources = [BuildSource(str(root / path), module) for path, module in listed]
    try:
        result = build.build(build_sources, options)
    except CompileError as exc:
        print("\n".join(exc.messages), file=sys.stderr)
        return 2
    for line in result.errors:
        print(line)
    errors = sum(1 for line in result.errors if ": error:" in line)
    files = len(listed)
    if errors:
        print(f"Found {errors} errors (checked {files} source files)")
        return 1
    print(f"Success: no issues found in {files} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
