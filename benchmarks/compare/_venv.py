"""The benchmark's own virtual environments (stdlib only).

``main`` (``.venv``) holds the peers of ``requirements.txt``; ``instructor``
(``.venv-instructor``) holds Instructor and the openai release it accepts.
Both get agentflow installed editable (the harness imports it for its own
dependencies too). A stamp file remembers the hash of the requirements, so a
changed pin rebuilds the environment.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["HERE", "REPO", "VENVS", "ensure", "python_of"]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VENVS: dict[str, tuple[str, str]] = {
    "main": (".venv", "requirements.txt"),
    "instructor": (".venv-instructor", "requirements-instructor.txt"),
}


def python_of(name: str) -> Path:
    """The interpreter of environment ``name``."""
    return HERE / VENVS[name][0] / "bin" / "python"


def _digest(requirements: Path) -> str:
    h = hashlib.sha256(requirements.read_bytes())
    h.update((REPO / "pyproject.toml").read_bytes())
    return h.hexdigest()


def ensure(name: str, *, force: bool = False) -> Path:
    """Create or refresh environment ``name``; its interpreter.

    Raises:
        subprocess.CalledProcessError: venv creation or pip failed.
    """
    folder, req = VENVS[name]
    venv, requirements = HERE / folder, HERE / req
    stamp = venv / ".bench-stamp"
    digest = _digest(requirements)
    if not force and stamp.exists() and stamp.read_text() == digest and python_of(name).exists():
        return python_of(name)
    if venv.exists():
        shutil.rmtree(venv)
    print(f"setting up {venv.relative_to(REPO)} from {req} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python_of(name)), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "-r", str(requirements), "-e", str(REPO)], check=True)
    stamp.write_text(digest)
    return python_of(name)
