"""What the Ray engine resolves: Ray itself (the optional extra), and the
``module:name`` / ``path.py:name`` references a driver hands to its workers
(made absolute on the driver, resolved in the worker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["absolute_ref", "ray_module", "resolve", "resolve_value"]


def ray_module() -> Any:
    """The ``ray`` module with ``ray.data`` imported.

    Raises:
        ImportError: Ray Data is not installed (the message says how to install it).
    """
    try:
        import ray
        import ray.data
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError("agentflow.ray needs Ray Data: pip install 'agentflow[ray]'") from exc
    return ray


def resolve(ref: Any) -> Any:
    """``ref`` itself, or the object a ``module:name`` / ``path.py:name`` string names."""
    if not isinstance(ref, str):
        return ref
    from agentflow.extraction.setup import load_schema

    return load_schema(ref)[0]


def resolve_value(ref: str) -> Any:
    """The value a ``module:name`` / ``path.py:name`` string names (any value)."""
    from agentflow.extraction.setup import load_module

    module_ref, _, name = ref.rpartition(":")
    return getattr(load_module(module_ref), name)


def absolute_ref(ref: str) -> str:
    """``path.py:name`` with an absolute path (workers do not share the driver's cwd)."""
    module, sep, name = ref.rpartition(":")
    if sep and (module.endswith(".py") or "/" in module):
        return f"{Path(module).resolve()}:{name}"
    if ref.endswith(".json"):
        return str(Path(ref).resolve())
    return ref
