"""NVIDIA Nemotron's ``<TOOLCALL>`` tool-call form, written into the reply text.

Llama-Nemotron (Llama-3.x-Nemotron Super/Nano/Ultra) and Nemotron-Nano v2
write their calls as a JSON array between ``<TOOLCALL>`` and
``</TOOLCALL>``: ``<TOOLCALL>[{"name": "get_weather", "arguments": {"city":
"Paris"}}]</TOOLCALL>`` (vLLM's ``llama_nemotron_json`` and ``nemotron_json``
tool parsers read that block). A server without that parser passes the
block on as the answer (ai-dynamo/dynamo#10115: the markers and the call
leaked into ``content``, and the call was dropped). ``NEMOTRON_MARKUP`` makes
it the calls it is; a block that does not parse stays text. Nemotron 3 Nano
writes Qwen3-Coder's ``<tool_call><function=...>`` form instead
(``dashscope.QWEN_XML_MARKUP``), which ``MODEL_MARKUPS`` gives it too.
"""

from __future__ import annotations

import json

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import MarkupCall, ToolMarkup, call_object

__all__ = ["NEMOTRON_MARKUP", "parse_nemotron_calls"]


def parse_nemotron_calls(body: str) -> list[MarkupCall] | None:
    """The calls of a ``<TOOLCALL>`` block: a JSON array (or one object) of
    ``{"name", "arguments"}`` calls; ``None`` when anything else is there.

    Raises:
        ValueError: text that is not JSON (the block then stays text).
    """
    data = json.JSONDecoder(strict=False).decode(body.strip())
    found = [call_object(item) for item in (data if isinstance(data, list) else [data])]
    calls = [call for call in found if call is not None]
    return calls if calls and len(calls) == len(found) else None


NEMOTRON_MARKUP = register_markup(
    ToolMarkup("nemotron", "<TOOLCALL>", "</TOOLCALL>", parse_nemotron_calls))
"""Nemotron's ``<TOOLCALL>[...]</TOOLCALL>`` form."""
