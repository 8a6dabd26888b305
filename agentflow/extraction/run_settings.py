"""The run's own settings that decide what its records hold, beside the schema
module's digests (``agentflow.extraction.settings_fingerprint``).

    run_settings(model="vendor:model", instructions="Extract...", passes=2)
    # {"model": "vendor:model", "instructions": "51be0f3e", "passes": "2"}

``agentflow extract`` stamps them on every record under ``"settings"``, so a
rerun into the same ``--out`` made another way (another model or endpoint,
other instructions, passes, cut, chunking, grounding default, partial outputs,
or inputs read another way) is refused instead of mixing records made two ways
(``agentflow.extraction.settings_changes``). Each is the value the run used,
whichever way it was set: ``--passes 2`` and a module's ``PASSES = 2`` are one
setting.

What is recorded (``RUN_SETTINGS``): ``model`` and ``instructions`` always
(``model`` also tells a record that carries the run's settings from one written
before agentflow kept them); every other one only when it is not its default
(``RUN_DEFAULTS``: what a record without the key was made with; a default here
must never change, or records written under the old one would compare equal to
runs made under the new). Values are short text, shown as they are when a
rerun differs: the instructions as an 8-hex-digit digest of their text, the
endpoint without its user info, query or fragment (``redact_urls``) and with
registered secrets masked, so no key reaches a record or a message.

Not recorded, as they change how a run goes but not what a record holds: the
API key, ``--concurrency``, ``--threads``, ``--limit``, ``--mode`` and the
batch flags (the same requests, through the vendor's batch API), ``--engine``,
``--actors``, ``--out`` and its flags, ``--retry-failed``, ``--input``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

from agentflow._secrets import mask_secrets
from agentflow.extraction.budget import DEFAULT_CHUNKING

__all__ = ["MODEL", "RUN_DEFAULTS", "RUN_SETTINGS", "chunking_text", "run_settings"]

MODEL = "model"
"""The run setting every record with run settings carries."""

RUN_SETTINGS: Mapping[str, str] = {
    "model": "--model",
    "base_url": "--base-url",
    "instructions": "the instructions (--instructions, or the schema module's INSTRUCTIONS)",
    "passes": "--passes (or the schema module's PASSES)",
    "max_chars": "--max-chars (or the schema module's MAX_CHARS)",
    "chunking": "the chunking (--chunk-chars, --items, --no-chunking, or the schema module's "
                "CHUNKING)",
    "ground": "the grounding default (--no-ground)",
    "allow_partial": "--allow-partial",
    "format": "--format",
    "pdf": "--pdf",
    "text_field": "--text-field",
    "id_field": "--id-field",
}
"""Each run setting's key in ``"settings"`` -> what sets it, in words."""

RUN_DEFAULTS: Mapping[str, str] = {
    "base_url": "the vendor's default",
    "passes": "1",
    "max_chars": "none",
    "chunking": "default",
    "ground": "on",
    "allow_partial": "off",
    "format": "auto",
    "pdf": "auto",
    "text_field": "text",
    "id_field": "id",
}
"""A run setting's value when its key is absent from a record that carries
``model`` (never changed: see the module docstring)."""


def chunking_text(chunking: Any) -> str:
    """A ``Chunking`` as short text: its fields that are not their defaults
    (``"max_chars=4000, items='entries'"``), ``"default"`` when none is, ``"off"``
    for ``None`` (every document sent whole)."""
    if chunking is None:
        return "off"
    if not dataclasses.is_dataclass(chunking) or isinstance(chunking, type):
        return repr(chunking)
    parts = [f"{f.name}={getattr(chunking, f.name)!r}" for f in dataclasses.fields(chunking)
             if getattr(chunking, f.name) != f.default]
    return ", ".join(parts) or "default"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def run_settings(
    *, model: str, instructions: str, base_url: str | None = None, passes: int = 1,
    max_chars: int | None = None, chunking: Any = DEFAULT_CHUNKING, ground: bool = True,
    allow_partial: bool = False, fmt: str = "auto", pdf: str = "auto", text_field: str = "text",
    id_field: str = "id",
) -> dict[str, str]:
    """The run settings to stamp on its records (see the module docstring):
    ``model`` and ``instructions`` always, the others when not their default.

    Args:
        model: the ``vendor:model`` spec as given (secrets masked).
        instructions: the system prompt the run sends (recorded as a digest).
        base_url: the endpoint, ``None`` for the vendor's own (recorded without
            user info, query, fragment or a trailing ``/``).
        passes / max_chars / ground / allow_partial: as ``extract_many`` takes them.
        chunking: a ``Chunking``, or ``None`` (off: every document sent whole).
        fmt / pdf / text_field / id_field: how inputs are read (``--format``...).
    """
    values = {
        "model": mask_secrets(model),
        "base_url": (RUN_DEFAULTS["base_url"] if not base_url
                     else mask_secrets(base_url).rstrip("/")),
        "instructions": _digest(instructions),
        "passes": str(passes),
        "max_chars": "none" if max_chars is None else str(max_chars),
        "chunking": chunking_text(chunking),
        "ground": "on" if ground else "off",
        "allow_partial": "on" if allow_partial else "off",
        "format": fmt,
        "pdf": pdf,
        "text_field": text_field,
        "id_field": id_field,
    }
    return {key: value for key, value in values.items()
            if key in (MODEL, "instructions") or value != RUN_DEFAULTS.get(key)}
