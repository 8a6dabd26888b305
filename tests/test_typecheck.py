"""scripts/typecheck.py: ``make lint``'s mypy run covers every module of the
installed package, ``providers/`` under its installed name ``agentflow.providers``."""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPT: dict[str, Any] = runpy.run_path(str(ROOT / "scripts" / "typecheck.py"))


def test_every_file_of_agentflow_and_providers_is_a_source() -> None:
    listed = {path for path, _ in SCRIPT["sources"]()}
    on_disk = {str(p.relative_to(ROOT)) for d in ("agentflow", "providers")
               for p in (ROOT / d).rglob("*.py")}
    assert listed == on_disk
    assert "providers/openai.py" in listed and "providers/_http.py" in listed


def test_module_names_are_the_installed_ones() -> None:
    # The names mypy checks are the names Python imports: each resolves to its file.
    for path, module in SCRIPT["sources"]():
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin is not None, module
        assert Path(spec.origin).resolve() == (ROOT / path).resolve(), (module, spec.origin)
    names = dict((m, p) for p, m in SCRIPT["sources"]())
    assert names["agentflow.providers"] == "providers/__init__.py"
    assert names["agentflow.providers.gemini"] == "providers/gemini.py"
    assert names["agentflow.extraction.locate"] == "agentflow/extraction/locate.py"


def test_a_type_error_in_providers_is_reported(tmp_path: Path, capsys: Any) -> None:
    # mypy itself on a small tree of the same layout: a provider module importing
    # another by its installed name is checked, and its type error reported.
    (tmp_path / "agentflow").mkdir()
    (tmp_path / "agentflow" / "__init__.py").write_text("")
    (tmp_path / "providers").mkdir()
    (tmp_path / "providers" / "__init__.py").write_text("")
    (tmp_path / "providers" / "base.py").write_text("def size() -> int:\n    return 1\n")
    (tmp_path / "providers" / "vendor.py").write_text(
        "from agentflow.providers.base import size\n\nNAME: str = size()\n")
    assert SCRIPT["main"]([], tmp_path) == 1
    out = capsys.readouterr().out
    assert "vendor.py:3: error: Incompatible types in assignment" in out
    (tmp_path / "providers" / "vendor.py").write_text(
        "from agentflow.providers.base import size\n\nCOUNT: int = size()\n")
    assert SCRIPT["main"]([], tmp_path) == 0
