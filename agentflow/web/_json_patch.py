"""The JSON Patch (RFC 6902) that turns one JSON value into another: what an
AG-UI ``STATE_DELTA`` carries (``@ag-ui/client`` applies it with
``fast-json-patch``).

``json_patch(old, new)`` walks both values: an object's keys removed, added
or changed, an array's items changed, added at its end or removed from its
end (a partial output grows so), any other change a ``replace``. Values are
equal only when they have the same JSON type (``1`` is not ``true``, nor
``1.0``). Paths are JSON Pointers (RFC 6901: ``~`` as ``~0``, ``/`` as ``~1``).

Why not the ``jsonpatch`` package's ``make_patch``: it writes ``move``s into
a sibling whose index the move's own removal shifts (``{"a": [0, 1, [2]]}``
to ``{"a": [1, [0, 2]]}``: ``move /a/0 -> /a/1/0``). That is valid RFC 6902,
but ``fast-json-patch``, as ``@ag-ui/client`` calls it (each operation
validated against the document before it is applied), refuses it, and the
client only logs a warning and keeps a stale state
(tests/test_web_state_updates.py sends such changes through the client).
This differ writes no ``move`` or ``copy``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_patch"]


def json_patch(old: Any, new: Any) -> list[dict[str, Any]]:
    """The operations that make ``old`` into ``new`` (``[]``: equal)."""
    ops: list[dict[str, Any]] = []
    _diff(old, new, "", ops)
    return ops


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if old is new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in new.items():
            where = f"{path}/{_escape(key)}"
            if key in old:
                _diff(old[key], value, where, ops)
            else:
                ops.append({"op": "add", "path": where, "value": value})
    elif isinstance(old, list) and isinstance(new, list):
        common = min(len(old), len(new))
        for i in range(common):
            _diff(old[i], new[i], f"{path}/{i}", ops)
        for i in range(common, len(new)):
            ops.append({"op": "add", "path": f"{path}/{i}", "value": new[i]})
        for i in reversed(range(common, len(old))):
            ops.append({"op": "remove", "path": f"{path}/{i}"})
    elif not _same(old, new):
        ops.append({"op": "replace", "path": path, "value": new})


def _same(a: Any, b: Any) -> bool:
    """Equal JSON scalars (or containers of differing kinds: never)."""
    return type(a) is type(b) and not isinstance(a, dict | list) and bool(a == b)


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
