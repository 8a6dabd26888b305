"""``"vendor:model"`` strings -> ``ChatModel``s, and the profile table.

    model = get_model("deepseek:deepseek-chat")          # key from DEEPSEEK_API_KEY
    agent = ReActAgent("a", model="openai:gpt-4o-mini")   # the core calls get_model
    for vendor, pattern, profile in list_profiles(): ...  # `agentflow models`

``VENDORS`` maps a vendor name to ``"module:factory"``, imported only when the
vendor is first used, so a vendor whose module or optional dependency is
missing costs nothing until asked for, and then fails with a clear
``InvalidModelError``. A factory is called as ``factory(model_name,
**kwargs)``. Each vendor module exposes ``PROFILES`` (``ProfileRule``s or
``(pattern, profile)`` pairs, first match wins) and may expose
``DEFAULT_PROFILE`` (the profile of names no pattern matches) and
``DEFAULT_MODEL`` (the model a bare ``"vendor"`` string means),
``API_KEY_VARIABLES`` (the environment variables its key is read from) and
``API_KEY_REQUIRED`` (default: true when it names variables).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from fnmatch import fnmatchcase
from types import ModuleType
from typing import Any

from agentflow.errors import InvalidModelError
from agentflow.model import ChatModel, ModelProfile

__all__ = [
    "ALIASES",
    "VENDORS",
    "api_key_variables",
    "get_model",
    "list_profiles",
    "missing_api_key",
    "register_vendor",
    "suggestions",
    "vendor_of",
]

VENDORS: dict[str, str] = {
    "openai": "agentflow.providers.openai:create",
    "deepseek": "agentflow.providers.deepseek:create",
    "dashscope": "agentflow.providers.dashscope:create",
    "glm": "agentflow.providers.glm:create",
    "minimax": "agentflow.providers.minimax:create",
    "anthropic": "agentflow.providers.anthropic:create",
    "gemini": "agentflow.providers.gemini:create",
    "ollama": "agentflow.providers.ollama:create",
    "local": "agentflow.providers.local:create",
}
"""Vendor name -> ``"module:factory"``. Add a vendor with ``register_vendor``."""

ALIASES: dict[str, str] = {"qwen": "dashscope", "zhipu": "glm", "zai": "glm"}
"""Other names accepted for a vendor in model strings."""


def register_vendor(name: str, target: str | Callable[..., ChatModel]) -> None:
    """Register (or replace) a vendor: ``target`` is ``"module:factory"`` or a
    factory ``(model_name, **kwargs) -> ChatModel``.

    Raises:
        ValueError: ``name`` is empty or holds ``":"``; ``target`` is a string
            without ``":"``.
    """
    if not name or ":" in name:
        raise ValueError(f"invalid vendor name {name!r}")
    if isinstance(target, str) and ":" not in target:
        raise ValueError(f"target must look like 'package.module:factory', got {target!r}")
    _FACTORIES.pop(name.lower(), None)
    if isinstance(target, str):
        VENDORS[name.lower()] = target
    else:
        VENDORS[name.lower()] = f"{target.__module__}:{target.__qualname__}"
        _FACTORIES[name.lower()] = target


_FACTORIES: dict[str, Callable[..., ChatModel]] = {}


def _known() -> str:
    return ", ".join(sorted(VENDORS))


def _module(vendor: str) -> ModuleType:
    module_name = VENDORS[vendor].partition(":")[0]
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidModelError(
            f"the {vendor!r} provider ({module_name}) cannot be imported: {exc}. Install "
            f"its extra (pip install 'agentflow[{vendor}]') or check the module exists"
        ) from exc


def _factory(vendor: str) -> Callable[..., ChatModel]:
    factory = _FACTORIES.get(vendor)
    if factory is None:
        attr = VENDORS[vendor].partition(":")[2]
        found = getattr(_module(vendor), attr, None)
        if not callable(found):
            raise InvalidModelError(f"the {vendor!r} provider has no factory {VENDORS[vendor]!r}")
        factory = _FACTORIES[vendor] = found
    return factory


def get_model(spec: str, **kwargs: Any) -> ChatModel:
    """The model a ``"vendor:model"`` string names, built with ``kwargs``
    (``api_key``, ``base_url``, ``profile``, ``settings``, ``stream``...).

    The vendor part is case-insensitive; the model part is everything after
    the first ``":"`` (``"ollama:qwen3:8b"`` names ``qwen3:8b``). A bare
    vendor name (``"local"``) means the vendor module's ``DEFAULT_MODEL``.

    Raises:
        InvalidModelError: not ``"vendor:model"``, an unknown vendor (the
            message lists the known ones), or a provider that cannot be imported.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidModelError(
            f"model strings look like 'vendor:model' (e.g. 'openai:gpt-4o-mini'), got "
            f"{spec!r}; known vendors: {_known()}")
    vendor, colon, model_name = spec.partition(":")
    vendor = vendor.strip().lower()
    vendor = ALIASES.get(vendor, vendor)
    model_name = model_name.strip()
    if vendor not in VENDORS:
        raise _unknown_vendor(vendor, spec)
    if not model_name:
        default = getattr(_module(vendor), "DEFAULT_MODEL", None) if not colon else None
        if not isinstance(default, str) or not default:
            raise InvalidModelError(f"no model name in {spec!r}: write '{vendor}:<model>'")
        model_name = default
    return _factory(vendor)(model_name, **kwargs)


def vendor_of(spec: str) -> str:
    """The registered vendor name of a ``"vendor:model"`` string (aliases resolved).

    Raises:
        InvalidModelError: not a string, or an unknown vendor.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidModelError(f"model strings look like 'vendor:model', got {spec!r}")
    vendor = spec.partition(":")[0].strip().lower()
    vendor = ALIASES.get(vendor, vendor)
    if vendor not in VENDORS:
        raise _unknown_vendor(vendor, spec)
    return vendor


def _unknown_vendor(vendor: str, spec: str) -> InvalidModelError:
    """The error for a model string whose vendor part is unknown. A string
    without ``":"`` is often a bare model name (``"gpt-4o-mini"``): the
    prefixed forms whose vendor's profile table (``PROFILES`` patterns, or
    ``BUNDLED`` names) knows the name are suggested."""
    if ":" in spec:
        return InvalidModelError(
            f"unknown vendor {vendor!r} in {spec!r}; known vendors: {_known()}")
    name = spec.strip()
    found = suggestions(name)
    if found:
        hint = " or ".join(repr(s) for s in found)
        return InvalidModelError(
            f"unknown model string {spec!r}: model strings look like 'vendor:model'; "
            f"did you mean {hint}? Known vendors: {_known()}")
    return InvalidModelError(
        f"unknown vendor {vendor!r} in {spec!r} (model strings look like 'vendor:model', "
        f"e.g. 'openai:gpt-4o-mini'); known vendors: {_known()}")


def suggestions(name: str, limit: int = 3) -> list[str]:
    """``"vendor:name"`` strings for a bare model ``name``: each importable
    vendor whose profile table has a row (other than the catch-all ``*``) that
    matches ``name`` or that ships ``name`` (``BUNDLED``), in ``VENDORS``
    order, at most ``limit``."""
    lowered = name.lower()
    found: list[str] = []
    for vendor in VENDORS:
        try:
            module = _module(vendor)
        except InvalidModelError:
            continue
        patterns = [row.pattern if hasattr(row, "pattern") else row[0]
                    for row in getattr(module, "PROFILES", ())]
        bundled = getattr(module, "BUNDLED", None)
        if (any(p.strip("*") and fnmatchcase(lowered, p) for p in patterns)
                or (isinstance(bundled, dict) and name in bundled)):
            found.append(f"{vendor}:{name}")
            if len(found) == limit:
                break
    return found


def api_key_variables(vendor: str) -> tuple[str, ...]:
    """The environment variables ``vendor``'s API key is read from, in order
    (its module's ``API_KEY_VARIABLES``; ``()`` when it needs no key or its
    module cannot be imported)."""
    try:
        module = _module(vendor)
    except InvalidModelError:
        return ()
    return tuple(getattr(module, "API_KEY_VARIABLES", ()))


def missing_api_key(
    spec: str, *, api_key: str | None = None, base_url: str | None = None
) -> str | None:
    """Why a request to ``spec`` would fail for want of a key, or ``None``.

    A key is missing when the vendor requires one (``API_KEY_REQUIRED``), none
    is given, ``base_url`` is not overridden (on another host the adapters
    send no key from the environment, and that server may want none), and
    none of ``api_key_variables`` is set. Lets a caller refuse before any
    request, naming the variable to set.

    Raises:
        InvalidModelError: an unknown vendor.
    """
    vendor = vendor_of(spec)
    names = api_key_variables(vendor)
    if api_key or base_url or not names:
        return None
    if not getattr(_module(vendor), "API_KEY_REQUIRED", True):
        return None
    if any(os.environ.get(name) for name in names):
        return None
    return f"no API key for {vendor}: set {' or '.join(names)}"


def bundled_models() -> list[tuple[str, str, str, bool, bool]]:
    """``(vendor, name, licence, installed, default)`` of every model whose
    weights ship in a package, from each importable vendor module's
    ``BUNDLED`` table (``BundledModel``-like rows) and ``bundled_available``."""
    rows: list[tuple[str, str, str, bool, bool]] = []
    for vendor in VENDORS:
        try:
            module = _module(vendor)
        except InvalidModelError:
            continue
        table = getattr(module, "BUNDLED", None)
        available = getattr(module, "bundled_available", None)
        if not isinstance(table, dict) or available is None:
            continue
        default = getattr(module, "DEFAULT_MODEL", None)
        for name, row in table.items():
            rows.append((vendor, name, str(getattr(row, "licence", "")), bool(available(name)),
                         name == default))
    return rows


def list_profiles() -> list[tuple[str, str, ModelProfile]]:
    """``(vendor, pattern, profile)`` rows of every importable vendor, in match
    order; a vendor's ``DEFAULT_PROFILE`` comes last with pattern ``"*"``."""
    rows: list[tuple[str, str, ModelProfile]] = []
    for vendor in VENDORS:
        try:
            module = _module(vendor)
        except InvalidModelError:
            continue
        for row in getattr(module, "PROFILES", ()):
            pattern, profile = (row.pattern, row.profile) if hasattr(row, "pattern") else row[:2]
            rows.append((vendor, pattern, profile))
        default = getattr(module, "DEFAULT_PROFILE", None)
        if isinstance(default, ModelProfile):
            rows.append((vendor, "*", default))
    return rows
