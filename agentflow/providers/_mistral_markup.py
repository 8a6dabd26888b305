"""Mistral's ``[TOOL_CALLS]`` tool-call form, written into the reply text.

Mistral models open their calls with the ``[TOOL_CALLS]`` token and never
close them: the calls run to the end of the reply. Tokenizer v3 (Mistral 7B
v0.3, Mixtral, Nemo) writes a JSON array after it, ``[TOOL_CALLS][{"name":
"get_weather", "arguments": {"city": "Paris"}}]``; v11 and later (Mistral
Small 3.2, Devstral, Magistral) write ``[TOOL_CALLS]get_weather[ARGS]{"city":
"Paris"}``, one token per call, with ``[CALL_ID]id`` before ``[ARGS]`` in
some versions. A server without Mistral's tool parser passes the text on
(LM Studio with Mistral Small 3.2 and Mistral 7B v0.3,
lmstudio-ai/lmstudio-bug-tracker#797; vLLM without ``--tool-call-parser
mistral``, vllm-project/vllm#5649), and the call came back as the answer.
``MISTRAL_MARKUP`` (a ``ToolMarkup`` whose block runs to the reply's end)
makes it the calls it is; a block that does not parse stays text.
"""

from __future__ import annotations

import json
import re

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import MarkupCall, ToolMarkup, call_list

__all__ = ["MISTRAL_MARKUP", "TOOL_CALLS", "parse_mistral_calls"]

TOOL_CALLS = "[TOOL_CALLS]"
_ARGS = "[ARGS]"
_CALL_ID = "[CALL_ID]"
_END = "</s>"
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def parse_mistral_calls(body: str) -> list[MarkupCall] | None:
    """The calls after a ``[TOOL_CALLS]`` token, to the reply's end: a JSON
    array (or object) of ``{"name", "arguments"}`` calls, or one or more
    ``name[ARGS]{json}`` (``[CALL_ID]id`` allowed before ``[ARGS]``), each
    after its own ``[TOOL_CALLS]``. ``None`` when anything else is there.

    Raises:
        ValueError: arguments that are not JSON (the block then stays text).
    """
    text = body.strip().removesuffix(_END).strip()
    if text.startswith(("[", "{")):
        return call_list(text)
    calls = []
    for part in text.split(TOOL_CALLS):
        if not part.strip():
            continue
        head, sep, args = part.partition(_ARGS)
        name = head.partition(_CALL_ID)[0].strip()
        if not sep or not _NAME.fullmatch(name):
            return None
        value = json.JSONDecoder(strict=False).decode(args) if args.strip() else {}
        if not isinstance(value, dict):
            return None
        calls.append(MarkupCall(name, value))
    return calls or None


MISTRAL_MARKUP = register_markup(ToolMarkup("mistral", TOOL_CALLS, "", parse_mistral_calls))
"""Mistral's ``[TOOL_CALLS]`` form: from the token to the end of the reply."""
