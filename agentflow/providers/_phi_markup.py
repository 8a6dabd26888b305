"""Microsoft Phi-4's tool-call forms, written into the reply text.

Phi-4-mini is tuned to write its calls as one JSON array after the plain word
``functools``, with no closing token: ``functools[{"name": "get_weather",
"arguments": {"city": "Paris"}}]`` (vLLM's ``phi4_mini_json`` tool parser
reads ``functools\\[(.*?)\\]``); Phi-4's own template wraps them in
``<|tool_call|>...<|/tool_call|>`` (SGLang's Phi-4 detector). A server
without that parser passes the text on as the answer (vllm-project/vllm#14682:
"can not generation phi-4-mini function calling" with another parser;
ollama/ollama#9437 on Ollama's ``phi4-mini``): the tool never ran.
``PHI4_MINI_MARKUP`` and ``PHI4_MARKUP`` make them the calls they are; a block
that does not parse (prose that says "functools") stays text.
"""

from __future__ import annotations

import json

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import MarkupCall, ToolMarkup, call_object

__all__ = ["PHI4_MARKUP", "PHI4_MINI_MARKUP", "parse_phi_calls"]

_EOS = ("<|end|>", "<|endoftext|>")


def parse_phi_calls(body: str) -> list[MarkupCall] | None:
    """The calls of a Phi-4 block: a JSON array (or one object) of ``{"name",
    "arguments"}`` calls, the end-of-turn token after it allowed; ``None``
    when anything else is there.

    Raises:
        ValueError: text that is not JSON (the block then stays text).
    """
    text = body.strip()
    for token in _EOS:
        text = text.removesuffix(token).rstrip()
    if not text.startswith(("[", "{")):
        return None
    data = json.JSONDecoder(strict=False).decode(text)
    found = [call_object(item) for item in (data if isinstance(data, list) else [data])]
    calls = [call for call in found if call is not None]
    return calls if calls and len(calls) == len(found) else None


PHI4_MINI_MARKUP = register_markup(ToolMarkup("phi4-mini", "functools", "", parse_phi_calls))
"""Phi-4-mini's ``functools[...]`` form: from the word to the end of the reply."""

PHI4_MARKUP = register_markup(
    ToolMarkup("phi4", "<|tool_call|>", "<|/tool_call|>", parse_phi_calls))
"""Phi-4's ``<|tool_call|>...<|/tool_call|>`` form."""
