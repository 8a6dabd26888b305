"""Anthropic request formatting: messages, tools, tool_choice, cache
breakpoints and the ``output_config`` schema (used by ``providers.anthropic``).

Facts followed (shared/providers.md §3; docs.anthropic.com/en/api/messages,
.../build-with-claude/prompt-caching, .../structured-outputs):

* only ``user``/``assistant`` turns; leading system messages are the top-level
  ``system``; later ones travel as ``<system-reminder>`` user text;
* tool results go in the next user turn, before any other block;
* a request whose history holds tool_use/tool_result blocks must declare
  tools (``history_tools``: the history's, with ``tool_choice: none``);
* tool_use ids match ``^[a-zA-Z0-9_-]+$``: another vendor's ids in the history
  (Kimi K2's ``functions.f:0``) are mapped (``_call_ids.anthropic_call_id``);
* text blocks must hold non-whitespace text (400 "messages: text content
  blocks must contain non-whitespace text"): whitespace-only text — Claude's
  ``"\n\n"`` before a tool call, a blank tool result — is left out;
* a conversation ends on a user turn (Claude 4.6+ refuse assistant prefill);
* thinking / redacted_thinking blocks are sent back unchanged (signed);
* ``cache_control`` on at most 4 blocks; thinking blocks cannot carry it;
* ``output_config.format`` schemas must close every object (a map cannot be
  closed: ``UnsupportedFeatureError``, the engine takes the tool path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agentflow.errors import UnsupportedFeatureError
from agentflow.messages import (
    CACHE_CONTROL,
    DocumentBlock,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentflow.model import ToolChoice
from agentflow.providers._adapter import continuation, system_reminder
from agentflow.providers._call_ids import UniqueCallIds, anthropic_call_id
from agentflow.providers._media import anthropic_block

__all__ = [
    "THINKING_BLOCKS",
    "UNCACHEABLE",
    "Blocks",
    "closed_schema",
    "conversation",
    "history_tools",
    "set_breakpoints",
    "tool_choice",
]

THINKING_BLOCKS = "anthropic_thinking_blocks"
"""``ThinkingBlock.provider_data`` key: the reply's raw thinking and
redacted_thinking blocks, sent back verbatim."""

Blocks = list[tuple[dict[str, Any], bool]]
"""Wire blocks, each with whether it may carry a cache breakpoint."""


def conversation(
    messages: Sequence[Msg], *, thinking: bool, choice: ToolChoice | None = None
) -> tuple[Blocks, list[tuple[str, Blocks]]]:
    """``(system blocks, [(role, blocks)])`` with same-role turns merged,
    tool results first in their user turn, and never ending on an assistant
    turn (a prefill, refused from Claude 4.6 on): a ``continuation`` nudge
    for ``choice`` closes it, with no cache breakpoint."""
    system: Blocks = []
    turns: list[tuple[str, Blocks]] = []
    for msg in messages:
        cacheable = msg.metadata.get(CACHE_CONTROL) is not False
        if msg.role == "system" and not turns:
            system.extend(({"type": "text", "text": b.text}, cacheable)
                          for b in msg.content if isinstance(b, TextBlock) and b.text.strip())
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        blocks = [(b, cacheable) for b in _blocks(msg, thinking)]
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    for role, blocks in turns:
        if role == "user":
            blocks.sort(key=lambda item: item[0]["type"] != "tool_result")  # stable
    _unique_call_ids(turns)
    if turns and turns[-1][0] == "assistant":
        turns.append(("user", [({"type": "text", "text": continuation(choice)}, False)]))
    return system, turns


def _unique_call_ids(turns: list[tuple[str, Blocks]]) -> None:
    """Each ``tool_use`` id of the request unique, its result answering it
    (``UniqueCallIds``: the API refuses a repeated one)."""
    ids = UniqueCallIds()
    for _, blocks in turns:
        for block, _ in blocks:
            kind = block["type"]
            if kind == "tool_use":
                block["id"] = ids.call(block["id"])
            elif kind == "tool_result":
                block["tool_use_id"] = ids.result(block["tool_use_id"])


def _blocks(msg: Msg, thinking: bool) -> list[dict[str, Any]]:
    if msg.role == "system":
        return [{"type": "text", "text": system_reminder(msg.text)}] if msg.text.strip() else []
    out: list[dict[str, Any]] = []
    for b in msg.content:
        if isinstance(b, TextBlock) and b.text.strip():  # the API refuses whitespace-only text
            out.append({"type": "text", "text": b.text})
        elif isinstance(b, ToolUseBlock):
            out.append({"type": "tool_use", "id": anthropic_call_id(b.id), "name": b.name,
                        "input": dict(b.input)})
        elif isinstance(b, ToolResultBlock):
            result: dict[str, Any] = {"type": "tool_result",
                                      "tool_use_id": anthropic_call_id(b.tool_use_id)}
            if b.output.strip():
                result["content"] = b.output
            if b.is_error:
                result["is_error"] = True
            out.append(result)
        elif isinstance(b, ThinkingBlock) and thinking and msg.role == "assistant":
            out.extend(_thinking_blocks(b))
        elif isinstance(b, ImageBlock | DocumentBlock):
            out.append(anthropic_block(b))
    return out


def _thinking_blocks(block: ThinkingBlock) -> list[dict[str, Any]]:
    """The blocks to send back for ``block``: the raw ones when kept, else a
    signed thinking block; unsigned thinking (another vendor's) is dropped."""
    raw = block.provider_data.get(THINKING_BLOCKS)
    if raw:
        return [dict(b) for b in raw]
    if block.signature:
        return [{"type": "thinking", "thinking": block.thinking, "signature": block.signature}]
    return []


HISTORY_TOOL = "Not available in this turn."
"""The description of a tool declared only because the history used it."""


def history_tools(turns: list[tuple[str, Blocks]]) -> list[dict[str, Any]]:
    """Tool declarations for a request that offers no tools but whose history
    holds tool_use/tool_result blocks: one per tool the history names (the
    API refuses such a request, 400 "Requests which include tool_use or
    tool_result blocks must define tools", anthropics/anthropic-sdk-python#494;
    Bedrock: "The toolConfig field must be defined when using toolUse and
    toolResult content blocks"). Sent with ``tool_choice: none``, so none can
    be called. Empty when the history has no tool blocks."""
    names: dict[str, None] = {}
    used = False
    for _, blocks in turns:
        for block, _cacheable in blocks:
            if block["type"] == "tool_use":
                names[block["name"]] = None
                used = True
            elif block["type"] == "tool_result":
                used = True
    if used and not names:
        names["tool"] = None  # results whose calls were compressed away: any declaration does
    return [{"name": name, "description": HISTORY_TOOL,
             "input_schema": {"type": "object", "properties": {}}} for name in names]


def tool_choice(choice: ToolChoice | None, parallel: bool | None) -> dict[str, Any] | None:
    """The wire ``tool_choice``: ``auto`` / ``none`` / ``any`` (our ``required``)
    / ``tool`` (our ``specific``), with ``disable_parallel_tool_use`` when
    ``parallel`` is ``False``; ``None`` leaves the API default (auto)."""
    wire: dict[str, Any] | None
    if choice is None:
        wire = {"type": "auto"} if parallel is False else None
    elif choice.mode == "specific":
        wire = {"type": "tool", "name": choice.name}
    else:
        wire = {"type": {"auto": "auto", "none": "none", "required": "any"}[choice.mode]}
    if wire is not None and parallel is False and wire["type"] != "none":
        wire["disable_parallel_tool_use"] = True
    return wire


_CACHE_MARK = {"type": "ephemeral"}
UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})


def set_breakpoints(
    body: dict[str, Any], system: Blocks, turns: list[tuple[str, Blocks]]
) -> None:
    """``cache_control`` on the last tool, the last cacheable system block and
    the last cacheable message block: 3 of the 4 breakpoints allowed."""
    if body.get("tools"):
        body["tools"][-1]["cache_control"] = _CACHE_MARK
    for blocks in ([system], [blocks for _, blocks in turns]):
        flat = [item for group in blocks for item in group]
        for block, cacheable in reversed(flat):
            if cacheable and block["type"] not in UNCACHEABLE:
                block["cache_control"] = _CACHE_MARK
                break


_KEEP_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "allOf", "$ref", "$defs", "description", "format", "pattern",
})
STRING_FORMATS = frozenset({
    "date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid",
})
"""The string ``format`` values ``output_config`` takes (the anthropic SDK's
``SupportedStringFormats``, anthropic.lib._parse._transform); any other format, and a
format on a non-string node, goes into the description, as the SDK does."""


def closed_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as ``output_config.format`` accepts it: every object closed
    (``additionalProperties: false``), ``oneOf`` as ``anyOf``, and the
    constraints the API does not support (min/max, lengths, ``minItems`` > 1,
    defaults, string formats off ``STRING_FORMATS``...) moved into the
    description, as Anthropic's SDK does
    (``anthropic.lib._parse._transform.transform_schema``).

    Raises:
        UnsupportedFeatureError: (feature ``native_output``) an object whose
            ``additionalProperties`` is a schema or ``true`` — a map such as
            ``dict[str, str]``. The API requires ``false`` on every object;
            the SDK forces it, which lets the model answer only ``{}`` there.
            Refusing instead steps the engine down to the tool path, whose
            ``input_schema`` takes maps.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, Mapping):
            return node
        node = dict(node)
        if node.get("additionalProperties") not in (None, False):
            raise UnsupportedFeatureError(
                "Anthropic structured output requires 'additionalProperties': false on every "
                f"object; this schema has a map ({node.get('additionalProperties')!r} values), "
                "which output_config cannot express", feature="native_output", status=None,
                vendor="anthropic")
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
        out: dict[str, Any] = {}
        moved: list[str] = []
        for key, value in node.items():
            if key in ("properties", "$defs"):
                out[key] = {k: walk(v) for k, v in value.items()}
            elif key in ("items", "anyOf", "allOf"):
                out[key] = walk(value)
            elif key == "format" and (value not in STRING_FORMATS
                                      or node.get("type") != "string"):
                moved.append(f"{key}: {orjson.dumps(value).decode()}")
            elif key in _KEEP_KEYWORDS or (key == "minItems" and value in (0, 1)):
                out[key] = value
            elif key != "title":
                moved.append(f"{key}: {orjson.dumps(value).decode()}")
        if moved:
            out["description"] = "; ".join([*filter(None, [out.get("description")]), *moved])
        if out.get("type") == "object" or "properties" in out:
            out.setdefault("additionalProperties", False)
        return out

    result: dict[str, Any] = walk(schema)
    return result
