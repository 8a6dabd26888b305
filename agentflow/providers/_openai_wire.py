"""The OpenAI chat-completions wire format, shared by every OpenAI-style
adapter (OpenAI, DeepSeek, DashScope compatible mode, GLM, MiniMax, and any
OpenAI-compatible server such as llama.cpp, vLLM or LM Studio).

Request side (here): ``format_messages``, ``format_tools``,
``format_tool_choice``, ``format_response_format`` and the JSON-mode
instruction helpers. Reply side (``_openai_chunks``, re-exported here):
``ChunkParser`` folds stream chunks (``chat.completion.chunk``) or a whole
reply (``chat.completion``) into ``ModelChunk``s; ``parse_usage`` and
``finish_reason`` normalize what vendors report.

Wire facts follow shared/providers.md section 1 (OpenAI Chat Completions):
tool-call arguments travel as a JSON *string*; tool results are ``role:
"tool"`` messages with ``tool_call_id``; stream tool-call deltas are keyed by
``index``; a refusal arrives in ``refusal`` instead of ``content``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from agentflow.messages import (
    DocumentBlock,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentflow.model import ResponseFormat, ToolChoice, ToolSpec
from agentflow.providers._call_ids import (
    OPENAI_MAX_ID,
    UniqueCallIds,
    nine_char_call_id,
    openai_call_id,
)
from agentflow.providers._media import ImageUrlStyle, openai_part
from agentflow.providers._openai_chunks import (
    CALL_EXTRAS,
    REASONING_OPAQUE,
    ChunkParser,
    finish_reason,
    parse_usage,
    token_logprobs,
)
from agentflow.providers._payload import dump_json
from agentflow.providers._reasoning_details import REASONING_DETAILS

__all__ = [
    "JSON_INSTRUCTION",
    "SCHEMA_INSTRUCTION",
    "ChunkParser",
    "ReasoningHistory",
    "finish_reason",
    "format_messages",
    "format_response_format",
    "format_tool_choice",
    "format_tools",
    "insert_instruction",
    "mentions_json",
    "parse_usage",
    "sanitize_schema_name",
    "token_logprobs",
]

ReasoningHistory: TypeAlias = Literal["drop", "field", "required", "tags"]
"""How an assistant turn's thinking goes back to the vendor: ``drop`` it,
send it as ``reasoning_content`` on turns that made tool calls (DeepSeek),
the same never empty (``required``: a single space for a turn that kept no
thinking, which Kimi K2.5/K2.6 refuse as missing when it is ``""``), or
inline as ``<think>...</think>`` before the text (MiniMax)."""

JSON_INSTRUCTION = "Reply with a JSON object."
SCHEMA_INSTRUCTION = (
    "Reply with a single JSON object that validates against this JSON Schema, and "
    "nothing else:\n{schema}"
)

# ----------------------------------------------------------------------------- request


def format_messages(
    messages: Sequence[Msg],
    *,
    reasoning: ReasoningHistory = "drop",
    late_system: Literal["system", "user"] = "system",
    images: ImageUrlStyle = "data_url",
    nine_char_ids: bool = False,
    null_content: bool = True,
    call_extras: bool = True,
    foreign_signature: str | None = None,
) -> list[dict[str, Any]]:
    """``Msg``s as chat-completions messages.

    System messages stay inline; ``late_system="user"`` turns the ones after
    the first non-system message into user messages (for chat templates that
    accept a system prompt only at the start). A ``tool`` message becomes one
    ``role: "tool"`` message per result; an error result is prefixed
    ``"Error: "`` (the wire has no error flag). A user turn with images or
    documents has a list of content parts, in block order (``images``: how
    inline image bytes are written, see ``providers._media``). Tool-call ids go
    out unique and as the wire takes them (``providers._call_ids``): at most 40
    characters, or, with ``nine_char_ids``, nine letters and digits (Mistral).
    An assistant turn of tool calls alone has ``content: null``, or ``""``
    without ``null_content`` (llama.cpp builds that refuse null). A call's
    ``extra_content`` goes back with it, as it came, unless ``call_extras``
    is off (a vendor's own host, which never sends one and may refuse the
    field): Gemini's OpenAI-compatible endpoints put the call's thought
    signature there and refuse the call in history without it (400
    "Function call is missing a thought_signature", crmne/ruby_llm#591); so
    do a turn's ``reasoning_details`` (OpenRouter) and ``reasoning_opaque``
    (GitHub Copilot, with its ``reasoning_text``). ``foreign_signature``
    (Gemini 3 and later there): the signature an assistant turn's first call
    gets when it came without one (a history made by another model, or by
    hand), Google's documented stand-in for calls
    Gemini did not make (ai.google.dev/gemini-api/docs/thought-signatures,
    "FAQs"); the native adapter sends the same (``_gemini_request``).
    """
    out: list[dict[str, Any]] = []
    started = False
    tooled = False  # an assistant or tool turn: call ids (and null content) to see to
    for msg in messages:
        role = msg.role
        if role == "system":
            out.append({"role": "user" if started and late_system == "user" else "system",
                        "content": msg.text})
            continue
        started = True
        content = msg.content
        if role == "user" and len(content) == 1 and type(content[0]) is TextBlock:
            out.append({"role": "user", "content": content[0].text})  # the common turn
            continue
        tooled = True
        if role == "assistant":
            out.append(_assistant(msg, reasoning, call_extras, foreign_signature))
            continue
        results = msg.tool_results
        if results:
            out.extend(_tool_result(block) for block in results)
        media = msg.media
        if role == "user" and (msg.text or not results or media):
            out.append({"role": "user",
                        "content": _parts(msg, images) if media else msg.text})
    if not tooled:  # system and plain user turns: no call ids, no assistant content
        return out
    ids = UniqueCallIds()  # a history holding one id twice (providers._call_ids)
    wire_id = nine_char_call_id if nine_char_ids else openai_call_id
    for message in out:
        if not null_content and message["role"] == "assistant" and message["content"] is None:
            message["content"] = ""
        for call in message.get("tool_calls") or ():  # (<id>_<n> within the 40 characters)
            call["id"] = wire_id(ids.call(call["id"]))
        if message["role"] == "tool":
            message["tool_call_id"] = wire_id(ids.result(message["tool_call_id"]))
    return out


def _sign_first(call: dict[str, Any], signature: str) -> None:
    """Give ``call`` (a turn's first) Gemini's ``thought_signature`` when its
    ``extra_content`` holds none."""
    extra = call.get("extra_content")
    google = extra.get("google") if isinstance(extra, Mapping) else None
    if isinstance(google, Mapping) and google.get("thought_signature"):
        return
    kept = dict(extra) if isinstance(extra, Mapping) else {}
    kept["google"] = {**(google if isinstance(google, Mapping) else {}),
                      "thought_signature": signature}
    call["extra_content"] = kept


def _parts(msg: Msg, images: ImageUrlStyle) -> list[dict[str, Any]]:
    """A user turn's text, image and document blocks as content parts."""
    parts: list[dict[str, Any]] = []
    for block in msg.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock | DocumentBlock):
            parts.append(openai_part(block, images))
    return parts


def _assistant(msg: Msg, reasoning: ReasoningHistory, call_extras: bool,
               foreign_signature: str | None = None) -> dict[str, Any]:
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    details: Any = None
    opaque: Any = None
    for block in msg.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thinking.append(block.thinking)
            if call_extras and block.provider_data.get(REASONING_DETAILS):
                details = block.provider_data[REASONING_DETAILS]
            if call_extras and block.provider_data.get(REASONING_OPAQUE):
                opaque = block.provider_data[REASONING_OPAQUE]
        elif isinstance(block, ToolUseBlock):
            call: dict[str, Any] = {
                "id": block.id if len(block.id) <= OPENAI_MAX_ID else openai_call_id(block.id),
                "type": "function",
                "function": {"name": block.name,
                             "arguments": dump_json(dict(block.input)).decode()},
            }
            extra = block.provider_data.get(CALL_EXTRAS) if call_extras else None
            if extra:
                call["extra_content"] = extra
            calls.append(call)
    text = "".join(texts)
    out: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if details:
        out["reasoning_details"] = details
    if opaque:  # GitHub Copilot's reasoning state, back with its text (as its clients send it)
        out["reasoning_opaque"] = opaque
        out["reasoning_text"] = "".join(thinking)
    if reasoning == "tags" and thinking:
        out["content"] = f"<think>\n{''.join(thinking).strip()}\n</think>\n\n{text}"
    if calls:
        out["tool_calls"] = calls
        if foreign_signature is not None:
            _sign_first(calls[0], foreign_signature)
        if reasoning == "field":
            out["reasoning_content"] = "".join(thinking)
        elif reasoning == "required":
            out["reasoning_content"] = "".join(thinking) or " "
    return out


def _tool_result(block: ToolResultBlock) -> dict[str, Any]:
    content = block.output
    if block.is_error and not content.lower().startswith("error"):
        content = f"Error: {content}"
    call_id = block.tool_use_id
    if len(call_id) > OPENAI_MAX_ID:  # another vendor's id (providers._call_ids)
        call_id = openai_call_id(call_id)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def format_tools(tools: Sequence[ToolSpec], *, strict: bool = True) -> list[dict[str, Any]]:
    """Function tools. ``strict: true`` is sent for specs that ask for it when
    ``strict`` is on (vendors that reject or ignore the flag turn it off)."""
    out = []
    for spec in tools:
        params = dict(spec.parameters) if spec.parameters else {}
        params.setdefault("type", "object")
        if params["type"] == "object":
            params.setdefault("properties", {})
        fn: dict[str, Any] = {"name": spec.name, "description": spec.description,
                              "parameters": params}
        if strict and spec.strict:
            fn["strict"] = True
        out.append({"type": "function", "function": fn})
    return out


def format_tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    """``"auto"`` | ``"none"`` | ``"required"`` | ``{"type": "function",
    "function": {"name": ...}}`` for ``specific``."""
    if choice.mode == "specific":
        return {"type": "function", "function": {"name": choice.name or ""}}
    return choice.mode


_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]+")


def sanitize_schema_name(name: str) -> str:
    """``name`` made to match OpenAI's ``[a-zA-Z0-9_-]{1,64}`` (other characters
    become ``_``; empty -> ``"output"``)."""
    clean = _NAME_BAD.sub("_", name)[:64]
    return clean if clean.strip("_") else "output"


def format_response_format(rf: ResponseFormat) -> dict[str, Any]:
    """``{"type": "json_object"}`` or ``{"type": "json_schema", "json_schema":
    {"name", "schema", "strict", "description"?}}`` (name sanitized)."""
    if rf.type == "json_object" or rf.schema is None:
        return {"type": "json_object"}
    spec: dict[str, Any] = {"name": sanitize_schema_name(rf.name), "schema": dict(rf.schema),
                            "strict": rf.strict}
    if rf.description:
        spec["description"] = rf.description
    return {"type": "json_schema", "json_schema": spec}


def mentions_json(wire_messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any message text holds the word "json" (any case): JSON mode
    (OpenAI, DeepSeek, DashScope) refuses requests where none does."""
    for m in wire_messages:
        content = m.get("content")
        if isinstance(content, str) and "json" in content.lower():
            return True
        if isinstance(content, list) and any(
            isinstance(p, dict) and "json" in str(p.get("text", "")).lower() for p in content
        ):
            return True
    return False


def insert_instruction(wire_messages: list[dict[str, Any]], text: str) -> None:
    """Insert a system message holding ``text`` after the leading system messages."""
    at = next((i for i, m in enumerate(wire_messages) if m.get("role") != "system"),
              len(wire_messages))
    wire_messages.insert(at, {"role": "system", "content": text})
