"""Liquid AI LFM2's tool-call form, written into the reply text.

LFM2 and LFM2.5 write their calls between ``<|tool_call_start|>`` and
``<|tool_call_end|>``, as a Python list of calls,
``<|tool_call_start|>[list_directory(path="desktop")]<|tool_call_end|>``, or a
JSON list of ``{"name", "arguments"}`` objects (SGLang's LFM2 detector and
Ollama's LFM2 parser read both). A server without that parser passes the block
on as the answer (lmstudio-ai/lmstudio-bug-tracker#1979, LM Studio with
LFM2.5-8B-A1B: "it gives this tool call in the content response and the tool
calls are empty"), and the tool never ran. ``LFM2_MARKUP`` makes it the calls
it is (Python literals only, nothing is run); a block that does not parse
stays text.
"""

from __future__ import annotations

import json
import re

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import MarkupCall, ToolMarkup, call_object
from agentflow.providers._pythonic_markup import parse_pythonic_calls

__all__ = ["LFM2_MARKUP", "parse_lfm2_calls"]

_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def parse_lfm2_calls(body: str) -> list[MarkupCall] | None:
    """The calls of one LFM2 block: a JSON list of ``{"name", "arguments"}``
    objects, or a Python list of keyword calls with literal values; ``None``
    when anything else is there.

    Raises:
        ValueError: text that is neither (the block then stays text).
    """
    text = body.strip()
    if text.startswith(("[{", "{")):
        data = json.JSONDecoder(strict=False).decode(text)
        found = [call_object(item) for item in (data if isinstance(data, list) else [data])]
        calls = [call for call in found if call is not None]
        return calls if calls and len(calls) == len(found) else None
    return parse_pythonic_calls(text, frozenset(_CALLED.findall(text)))


LFM2_MARKUP = register_markup(
    ToolMarkup("lfm2", "<|tool_call_start|>", "<|tool_call_end|>", parse_lfm2_calls))
"""LFM2's ``<|tool_call_start|>[...]<|tool_call_end|>`` form."""
