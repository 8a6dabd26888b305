"""Moonshot AI's Kimi K2 models: what is special about them.

* **In-band tool calls.** Kimi K2 (Instruct, Thinking) served without a tool
  parser (llama.cpp without ``--jinja``, a raw vLLM endpoint, some gateways)
  writes its chat template's special tokens into the reply text, or into
  ``reasoning_content`` for the thinking models::

      <|tool_calls_section_begin|>
      <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>
      {"city": "Paris"}<|tool_call_end|>
      <|tool_calls_section_end|>

  (one line per call in the template; wrapped here). Each call's id is
  ``functions.NAME:INDEX`` (the template's form; ``NAME:INDEX`` and a bare
  ``NAME`` are read too) and its arguments a JSON object. Some
  builds write ``<|tool_call_section_begin|>`` (singular). Sources: the
  model's chat template and tool-calling guide
  (huggingface.co/moonshotai/Kimi-K2-Instruct, docs/tool_call_guidance.md)
  and vLLM's ``kimi_k2`` tool parser, which accepts both section tokens.
  ``KIMI_MARKUPS`` read them; a generic OpenAI-compatible server hosting a
  model whose name has ``kimi`` picks them (``MODEL_MARKUPS``), any adapter
  takes them with ``tool_markups=["kimi-k2", "kimi-k2-singular"]``.
"""

from __future__ import annotations

import re

from agentflow.output.decoding import decode_value
from agentflow.providers._markup import MarkupCall, ToolMarkup, only_matches, register_markup

__all__ = ["KIMI_MARKUPS", "parse_kimi_calls"]

_CALL = re.compile(
    r"<\|tool_call_begin\|>(.*?)<\|tool_call_argument_begin\|>(.*?)<\|tool_call_end\|>",
    re.DOTALL)
_ID = re.compile(r"\s*(?:functions\.)?([^\s:<>]{1,64}?)(?::\d+)?\s*")


def parse_kimi_calls(body: str) -> list[MarkupCall] | None:
    """The calls of one Kimi K2 tool-calls section (the text between its
    section tokens): each ``<|tool_call_begin|>functions.NAME:INDEX
    <|tool_call_argument_begin|>{json}<|tool_call_end|>``. ``None`` when the
    section holds anything it cannot read (it then stays text)."""
    found = only_matches(_CALL, body)
    if not found:
        return None  # no call, or text between the calls that is not one
    calls: list[MarkupCall] = []
    for ident, args_text in (match.groups() for match in found):
        name = _ID.fullmatch(ident)
        if name is None:
            return None
        args = decode_value(args_text.strip()) if args_text.strip() else {}
        if not isinstance(args, dict):
            return None
        calls.append(MarkupCall(name.group(1), args))
    return calls


KIMI_MARKUPS = (
    register_markup(ToolMarkup("kimi-k2", "<|tool_calls_section_begin|>",
                               "<|tool_calls_section_end|>", parse_kimi_calls)),
    register_markup(ToolMarkup("kimi-k2-singular", "<|tool_call_section_begin|>",
                               "<|tool_call_section_end|>", parse_kimi_calls)),
)
"""Kimi K2's in-band tool-call sections (plural tokens, as the chat template
writes them, and the singular spelling some builds emit)."""
