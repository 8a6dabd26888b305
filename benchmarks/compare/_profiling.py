"""Where the time goes: pyinstrument samples summed by package and by function.

Wall-clock sampling of the event-loop thread (``async_mode="disabled"``), so a
sample is what the thread was doing then; time blocked in the selector is
"idle" (waiting on the server), everything else is CPU spent by the client.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["LIBRARIES", "PROJECT", "bucket", "summarize"]

LIBRARIES: tuple[tuple[str, str], ...] = (
    ("/aiohttp/", "aiohttp"),
    ("/yarl/", "aiohttp"),
    ("/multidict/", "aiohttp"),
    ("/pydantic_core/", "pydantic"),
    ("/pydantic/", "pydantic"),
    ("/structlog/", "structlog"),
    ("/anyio/", "anyio"),
    ("/json_repair/", "json_repair"),
    ("/tenacity/", "tenacity"),
)
"""Third-party packages worth naming (under site-packages)."""
PROJECT: tuple[tuple[str, str], ...] = (
    ("/providers/", "agentflow.providers"),
    ("/agentflow/providers/", "agentflow.providers"),
    ("/agentflow/", "agentflow core"),
    ("/benchmarks/compare/frameworks/", "adapter"),
    ("/benchmarks/compare/", "harness"),
)
"""This repository's code (an editable install runs it in place)."""


def bucket(file_path: str, function: str, inherited: str = "other") -> str:
    """The package a frame belongs to: ``idle`` for the selector wait, the
    caller's package (``inherited``) for built-ins and generated code."""
    if file_path.endswith("selectors.py") or function.endswith(("poll", "select")):
        return "idle"
    if not file_path or file_path.startswith("<"):
        return inherited
    if "/site-packages/" in file_path:
        return next((name for marker, name in LIBRARIES if marker in file_path),
                    "other libraries")
    if "/asyncio/" in file_path:
        return "asyncio"
    for marker, name in PROJECT:
        if marker in file_path:
            return name
    return "stdlib"


def summarize(session: Any, top: int = 15) -> dict[str, Any]:
    """Self time by package (shares of the non-idle time) and the ``top``
    functions by self time, from a pyinstrument ``Session``."""
    root = session.root_frame()
    by_package: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    stack = [(root, "other")] if root is not None else []
    while stack:
        frame, inherited = stack.pop()
        if frame.is_synthetic:  # "[self]" leaves: already in the parent's self time
            continue
        package = bucket(frame.file_path or "", frame.function or "", inherited)
        children = list(frame.children)
        stack.extend((c, package) for c in children)
        self_time = frame.time - sum(c.time for c in children if not c.is_synthetic)
        if self_time <= 0:
            continue
        by_package[package] += self_time
        if package != "idle":
            by_function[f"{frame.function} ({frame.file_path_short}:{frame.line_no})"] += self_time
    busy = sum(t for p, t in by_package.items() if p != "idle") or 1.0
    return {
        "busy_s": round(busy, 4),
        "idle_s": round(by_package.get("idle", 0.0), 4),
        "packages": {p: round(t / busy, 4) for p, t in by_package.most_common() if p != "idle"},
        "functions": [[name, round(t / busy, 4)] for name, t in by_function.most_common(top)],
    }
