"""ByteDance Seed-OSS's tool-call form, written into the reply text.

Seed-OSS writes its calls as Qwen3-Coder does, with its own wrapper tokens:
``<seed:tool_call><function=get_weather><parameter=city>Paris</parameter>
</function></seed:tool_call>`` (vLLM's ``seed_oss`` parser is its Qwen3 parser
with the ``<seed:*>`` wrappers, vllm-project/vllm#46314; the markers are
added vocabulary, not special tokens, so a server keeps them in the text).
A server without that parser, or whose streaming parser misses the call
(vllm-project/vllm#26573: "When stream=True, the seed-oss model, the
tool_calls = None"), passes the block on as the answer and the tool never
ran. ``SEED_OSS_MARKUP`` makes it the calls it is (values typed from the
tool's schema, as Qwen3-Coder's); a block that does not parse stays text.
"""

from __future__ import annotations

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import ToolMarkup
from agentflow.providers.dashscope import parse_qwen_xml_call

__all__ = ["SEED_OSS_MARKUP"]

SEED_OSS_MARKUP = register_markup(
    ToolMarkup("seed-oss", "<seed:tool_call>", "</seed:tool_call>", parse_qwen_xml_call))
"""Seed-OSS's ``<seed:tool_call>`` form (Qwen3-Coder's XML inside)."""
