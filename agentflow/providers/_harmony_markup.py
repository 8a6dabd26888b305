"""gpt-oss's Harmony tool-call form, written into the reply text.

gpt-oss calls a tool by addressing a message to it:
``<|start|>assistant<|channel|>commentary to=functions.get_weather
<|constrain|>json<|message|>{"city": "Berlin"}<|call|>`` (the analysis
channel is used too). A server without a Harmony parser passes the text on,
often without ``<|call|>`` (a stop token) and sometimes without any special
token (``commentary to=functions.get_weather json{...}``): the reply had no
tool call and looked complete (kekzl/imp#1719, lablup/mlxcel#654;
jundot/omlx#2216 for calls on the analysis channel). ``HARMONY_MARKUP`` (a
``ToolMarkup`` from the recipient ``to=functions.`` to the reply's end)
makes each addressed message the call it is; anything else in the block
leaves it text.
"""

from __future__ import annotations

import json
import re

from agentflow.providers._markup import register_markup
from agentflow.providers._markup_calls import MarkupCall, ToolMarkup

__all__ = ["HARMONY_MARKUP", "RECIPIENT", "parse_harmony_calls"]

RECIPIENT = "to=functions."
_HEAD = re.compile(r"([A-Za-z0-9_.:-]{1,128})\s*(?:<\|constrain\|>)?\s*(?:json)?\s*"
                   r"(?:<\|message\|>)?\s*")
_FILLER = re.compile(r"(?:\s|<\|[a-z_]+\|>|assistant|commentary|analysis)*")
"""What may follow a call's arguments: Harmony's tokens and the next header."""


def parse_harmony_calls(body: str) -> list[MarkupCall] | None:
    """The calls after ``to=functions.``: ``name [<|constrain|>json]
    <|message|>{json}``, more after each further ``to=functions.``; between
    and after them only Harmony tokens and headers. ``None`` otherwise.

    Raises:
        ValueError: arguments that are not JSON (the block then stays text).
    """
    decoder = json.JSONDecoder(strict=False)
    calls: list[MarkupCall] = []
    for part in body.split(RECIPIENT):
        head = _HEAD.match(part)
        if head is None:
            return None
        args, end = decoder.raw_decode(part, head.end())
        if not isinstance(args, dict) or not _FILLER.fullmatch(part, end):
            return None
        calls.append(MarkupCall(head.group(1), args))
    return calls or None


HARMONY_MARKUP = register_markup(ToolMarkup("harmony", RECIPIENT, "", parse_harmony_calls))
"""gpt-oss's Harmony calls: from the recipient to the end of the reply."""
