"""Tool names: the rule every vendor accepts (``TOOL_NAME_PATTERN``), the check
of a name given (``validate_tool_name``) and the repair of a derived one
(``sanitize_tool_name``), and the names a tool source may give a tool
(``renamings``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection

from agentflow.errors import ToolNameError

__all__ = ["TOOL_NAME_PATTERN", "renamings", "sanitize_tool_name", "validate_tool_name"]

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
"""The tool-name rule every vendor accepts (OpenAI, DeepSeek, DashScope: 64
chars of ``[a-zA-Z0-9_-]``; Gemini: "Must start with a letter or an
underscore", google-genai ``FunctionDeclaration.name``); use with ``fullmatch``."""


def validate_tool_name(name: str) -> str:
    """Return ``name`` if it matches ``TOOL_NAME_PATTERN``.

    Raises:
        ToolNameError: naming the tool and the rule.
    """
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        raise ToolNameError(
            f"invalid tool name {name!r}: names must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$ "
            "(1 to 64 ASCII letters, digits, '_' and '-', starting with a letter or '_')"
        )
    return name


def sanitize_tool_name(derived: str) -> str:
    """Make a derived name (a function or class name) valid: invalid characters
    become ``_``, and when anything changed a short hash of the original is
    appended so distinct originals stay distinct. Valid names pass unchanged."""
    if TOOL_NAME_PATTERN.fullmatch(derived):
        return derived
    digest = hashlib.sha1(derived.encode()).hexdigest()[:8]
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", derived).strip("_") or "tool"
    if not re.match(r"[A-Za-z_]", cleaned):  # a digit or '-' first: Gemini refuses it
        cleaned = f"_{cleaned}"
    return f"{cleaned[:55]}_{digest}"



def renamings(name: str, offered: Collection[str]) -> list[str]:
    """The names of ``offered`` that are ``name`` as an agent renames a tool
    of a tool source (an MCP server's): prefixed (``fs_write_file`` for
    ``write_file``), made valid (``files_read_1a2b3c4d`` for ``files.read``,
    ``sanitize_tool_name``), or both."""
    valid = sanitize_tool_name(name)
    if valid == name:
        return sorted(o for o in offered if o.endswith(f"_{name}"))
    stem = re.escape(valid[:-9])  # the made-valid name without its hash of the original
    return sorted(o for o in offered if o == valid or re.fullmatch(rf".+_{stem}_[0-9a-f]{{8}}", o))
