"""In-band tool-call markup: tool calls a model wrote into its reply *text*
(open-weight chat templates served without a tool parser), turned into real
tool calls, streamed and whole.

A ``ToolMarkup`` is one format: its opening and closing tokens and a
``parse`` function from the text between them to calls. Each format lives in
its vendor's module (``minimax``: ``<minimax:tool_call>``, ``dashscope``:
Qwen/Hermes ``<tool_call>{json}</tool_call>``, ``deepseek``:
``<｜tool▁calls▁begin｜>``, ``glm``: ``<tool_call>name<arg_key>…``,
``moonshot``: Kimi K2's ``<|tool_calls_section_begin|>``; open-weight
families without a vendor module in ``_llama_markup``, ``_mistral_markup``
and ``_harmony_markup``: Mistral's ``[TOOL_CALLS]`` and gpt-oss's
``to=functions.``, which run to the end of the reply; Nemotron's
``<TOOLCALL>`` in ``_nemotron_markup``, Phi-4's in ``_phi_markup``, Seed-OSS's
``<seed:tool_call>`` in ``_seed_markup``, LFM2's in ``_lfm_markup``) and is
registered by name here, as are forms with no tokens at all, where the whole
reply is the call (``_reply_markup.ReplyMarkup``: GLM-4-0414's name line and
JSON object, Llama 3.x's ``{"name": ..., "parameters": ...}`` in
``_llama_markup``, read only against the offered tools); an OpenAI-compatible
adapter is given the names to look for (``tool_markups=``; each vendor
adapter defaults to its own, and a generic server's model name picks them
through ``MODEL_MARKUPS``).

``MarkupFilter`` runs over one reply's chunks: text before a block passes on
at once, a block's text is held until its closing token, then leaves the
text, and its calls become ``ToolCallDelta``s when the reply ends, but one
that repeats a real (structured) call of the reply: the tool runs once. A
block that no format can parse, one never closed, or markup after real tool
calls stays text.
Values of formats that carry strings only (MiniMax, GLM) are typed from the
tool's JSON Schema: a parameter that accepts a string keeps the text, others
are decoded as JSON or a Python literal when they are one.

This module is the registry of formats and re-exports the rest: the call
records and value decoding live in ``_markup_calls``, the filter in
``_markup_filter``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from fnmatch import fnmatch
from typing import TypeVar

from agentflow.providers._markup_calls import (
    AnyMarkup,
    MarkupCall,
    ToolMarkup,
    call_object,
    json_calls,
    only_matches,
    typed_value,
)
from agentflow.providers._markup_filter import MarkupFilter, filter_for
from agentflow.providers._reply_markup import ReplyMarkup

__all__ = [
    "MODEL_MARKUPS",
    "AnyMarkup",
    "MarkupCall",
    "MarkupFilter",
    "ReplyMarkup",
    "ToolMarkup",
    "call_object",
    "filter_for",
    "json_calls",
    "markups_for_model",
    "only_matches",
    "register_markup",
    "resolve_markups",
    "typed_value",
]

_M = TypeVar("_M", ToolMarkup, ReplyMarkup)

_REGISTRY: dict[str, AnyMarkup] = {}
_HOMES = {
    "minimax": "agentflow.providers.minimax",
    "minimax-m1": "agentflow.providers.minimax",
    "hermes": "agentflow.providers.dashscope",
    "qwen": "agentflow.providers.dashscope",
    "qwen-xml": "agentflow.providers.dashscope",
    "qwen-function": "agentflow.providers.dashscope",
    "deepseek": "agentflow.providers.deepseek",
    "deepseek-dsml": "agentflow.providers.deepseek",
    "deepseek-dsml-v4": "agentflow.providers.deepseek",
    "deepseek-dsml-ascii": "agentflow.providers.deepseek",
    "deepseek-dsml-v4-ascii": "agentflow.providers.deepseek",
    "deepseek-dsml-bare": "agentflow.providers.deepseek",
    "deepseek-dsml-bare-ascii": "agentflow.providers.deepseek",
    "deepseek-dsml-unclosed": "agentflow.providers.deepseek",
    "deepseek-dsml-v4-unclosed": "agentflow.providers.deepseek",
    "deepseek-dsml-ascii-unclosed": "agentflow.providers.deepseek",
    "deepseek-dsml-v4-ascii-unclosed": "agentflow.providers.deepseek",
    "glm": "agentflow.providers.glm",
    "glm-4-0414": "agentflow.providers.glm",
    "kimi-k2": "agentflow.providers.moonshot",
    "kimi-k2-singular": "agentflow.providers.moonshot",
    "llama-json": "agentflow.providers._llama_markup",
    "mistral": "agentflow.providers._mistral_markup",
    "harmony": "agentflow.providers._harmony_markup",
    "gemma4": "agentflow.providers._gemma_markup",
    "pythonic": "agentflow.providers._pythonic_markup",
    "nemotron": "agentflow.providers._nemotron_markup",
    "phi4": "agentflow.providers._phi_markup",
    "phi4-mini": "agentflow.providers._phi_markup",
    "seed-oss": "agentflow.providers._seed_markup",
    "lfm2": "agentflow.providers._lfm_markup",
}
"""Which vendor module defines each built-in markup (imported on first use)."""

MODEL_MARKUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("*minimax*", ("minimax", "minimax-m1")),
    ("*qwen*", ("hermes", "qwen-xml", "qwen-function", "llama-json")),
    ("*llama*", ("qwen-function", "llama-json", "pythonic")),
    ("*stral*", ("mistral", "llama-json")),  # Mistral, Devstral, Magistral, Ministral...
    ("*mixtral*", ("mistral", "llama-json")),
    ("*pixtral*", ("mistral", "llama-json")),
    ("*gemma*", ("gemma4", "hermes", "llama-json", "pythonic")),
    ("*granite*", ("hermes", "llama-json", "pythonic")),
    ("*gpt-oss*", ("harmony",)),
    ("*hermes*", ("hermes",)),
    ("*deepseek*", ("deepseek", "deepseek-dsml", "deepseek-dsml-v4", "deepseek-dsml-ascii",
                    "deepseek-dsml-v4-ascii", "deepseek-dsml-bare", "deepseek-dsml-bare-ascii",
                    "deepseek-dsml-unclosed", "deepseek-dsml-v4-unclosed",
                    "deepseek-dsml-ascii-unclosed", "deepseek-dsml-v4-ascii-unclosed")),
    ("*glm*", ("glm", "glm-4-0414")),
    ("*kimi*", ("kimi-k2", "kimi-k2-singular")),
    ("*nemotron*", ("nemotron", "qwen-xml", "hermes")),
    ("*phi-4*", ("phi4", "phi4-mini", "llama-json")),
    ("*phi4*", ("phi4", "phi4-mini", "llama-json")),
    ("*seed-oss*", ("seed-oss", "qwen-xml")),
    ("*lfm2*", ("lfm2",)),
)
"""Model-name globs (lower case) -> the markups a generic OpenAI-compatible
server (llama.cpp, vLLM, LM Studio) hosting that model may leave in text."""


def register_markup(markup: _M, *aliases: str) -> _M:
    """Register ``markup`` under its name (and ``aliases``); returns it."""
    for name in (markup.name, *aliases):
        _REGISTRY[name] = markup
    return markup


def resolve_markups(names: Iterable[str | AnyMarkup]) -> tuple[AnyMarkup, ...]:
    """The markups for ``names`` (registered names, ``ToolMarkup``s or ``ReplyMarkup``s).

    Raises:
        ValueError: an unknown markup name.
    """
    out: list[AnyMarkup] = []
    for item in names:
        if isinstance(item, ToolMarkup | ReplyMarkup):
            out.append(item)
            continue
        if item not in _REGISTRY and item in _HOMES:
            importlib.import_module(_HOMES[item])
        if item not in _REGISTRY:
            known = ", ".join(sorted({*_REGISTRY, *_HOMES}))
            raise ValueError(f"unknown tool-call markup {item!r}; known: {known}")
        if _REGISTRY[item] not in out:
            out.append(_REGISTRY[item])
    return tuple(out)


def markups_for_model(model: str) -> tuple[str, ...]:
    """The markup names ``MODEL_MARKUPS`` gives ``model`` (may be empty)."""
    lowered = model.lower()
    names: list[str] = []
    for pattern, found in MODEL_MARKUPS:
        if fnmatch(lowered, pattern):
            names.extend(n for n in found if n not in names)
    return tuple(names)
