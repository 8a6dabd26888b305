"""Llama 3.x's JSON tool-call form, written into the reply text.

Llama 3.1-3.3 (and models trained on their template) call a tool by writing
one JSON object as the whole reply: ``{"name": "get_weather", "parameters":
{"city": "Paris"}}``, sometimes after ``<|python_tag|>`` (Llama 4 between
``<|python_start|>`` and ``<|python_end|>``), inside a ```json
fence, as ``{"type": "function", "name": ..., "parameters": ...}`` or
``{"type": "function", "function": {"name": ..., "parameters": ...}}``, and
several calls one after another (``;`` or a line between). A server without
a Llama tool parser passes it on as text (vLLM without ``--tool-call-parser
llama3_json``, vllm-project/vllm#11786; Fireworks' Llama 3.3,
BerriAI/litellm#7209; Ollama's llama3.2, ollama/ollama#13519), and the call
was returned as the answer. ``LLAMA_JSON_MARKUP`` (a ``ReplyMarkup``: read
only against the offered tools' names) makes it the tool call it is; the
name's value is compared as it streams, so a JSON answer whose ``name`` is no
tool's passes on at once.

Other open-weight families write the same form: Qwen2.5-Coder on Ollama's
``/v1`` (``{"name": ..., "arguments": ...}``, NousResearch/hermes-agent#87900),
Mistral models as a JSON array of such objects (``[{"name": ...,
"arguments": ...}, ...]``, mistralai/mistral-common#73; the body of their
``[TOOL_CALLS]`` token, which servers that drop special tokens leave bare).
An array of calls is read as several calls; ``_markup.MODEL_MARKUPS`` gives
the form to those families too.
"""

from __future__ import annotations

import json
import re
from itertools import product

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import call_object
from agentflow.providers._reply_markup import Lead, MarkupCall, ReplyMarkup

__all__ = ["LLAMA_JSON_MARKUP", "llama_json_lead", "parse_llama_json_calls"]

PYTHON_TAG = "<|python_tag|>"
PYTHON_START, PYTHON_END = "<|python_start|>", "<|python_end|>"
_HEAD = re.compile(
    r'\s*(?:<\|python_tag\|>|<\|python_start\|>)?\s*(?:```(?:json)?\s*)?(?:\[\s*)?\{\s*'
    r'(?:"type"\s*:\s*"function"\s*,\s*)?(?:"function"\s*:\s*\{\s*)?"name"\s*:\s*"([^"\\]*)(")?')
_HEADS = tuple("".join(parts) for parts in product(
    ("", PYTHON_TAG, PYTHON_START), ("", "```", "```json"), ("", "["),
    ('{"name":"', '{"type":"function","name":"', '{"type":"function","function":{"name":"')))
"""The heads of the form with no whitespace (a text so far may be a prefix of one)."""
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
_TAGS = re.compile(r"^\s*(?:<\|python_tag\|>|<\|python_start\|>)|<\|python_end\|>\s*$")
"""Llama 3.x's ``<|python_tag|>`` before the call, Llama 4's ``<|python_start|>``
and ``<|python_end|>`` around it (vllm-project/vllm#16214: Llama 4 Scout's
``<|python_start|>{"name": ..., "parameters": ...}<|python_end|>`` came back
as the answer)."""


def llama_json_lead(text: str, names: frozenset[str]) -> Lead:
    """What a reply beginning with ``text`` can be in this form: ``"held"``
    once its ``name`` is an offered tool's, ``"maybe"`` while its head or the
    name so far may still become one, else ``"no"``."""
    match = _HEAD.match(text)
    if match is None:
        compact = re.sub(r"\s+", "", text)
        return "maybe" if any(head.startswith(compact) for head in _HEADS) else "no"
    name, closed = match.group(1), match.group(2)
    if closed:
        return "held" if name in names else "no"
    return "maybe" if any(offered.startswith(name) for offered in names) else "no"


def parse_llama_json_calls(text: str, names: frozenset[str]) -> list[MarkupCall] | None:
    """The calls of a whole reply in this form (one object or several,
    between ``;``, commas or whitespace, or a JSON array of them); ``None``
    when anything else is in the reply or a name is no offered tool's.

    Raises:
        ValueError: an object that is not valid JSON (the reply is then text).
    """
    body = _FENCE.sub("", _TAGS.sub("", text.strip()))
    decoder = json.JSONDecoder(strict=False)
    calls: list[MarkupCall] = []
    pos, end = 0, len(body)
    while True:
        while pos < end and (body[pos].isspace() or body[pos] in ";,"):
            pos += 1
        if pos >= end:
            return calls or None
        data, pos = decoder.raw_decode(body, pos)
        for item in data if isinstance(data, list) and data else [data]:
            if isinstance(item, dict) and isinstance(item.get("function"), dict):
                item = item["function"]
            call = call_object(item)
            if call is None or call.name not in names:
                return None
            calls.append(call)


LLAMA_JSON_MARKUP = register_markup(
    ReplyMarkup("llama-json", llama_json_lead, parse_llama_json_calls))
"""Llama 3.x's untagged JSON tool-call form: the whole reply is the call."""
