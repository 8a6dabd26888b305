"""Gemini request formatting: contents, function declarations, tool config
and the response schema (used by ``providers.gemini``).

Facts followed (shared/providers.md §4; ai.google.dev/gemini-api/docs/
{function-calling,structured-output,thought-signatures}):

* roles ``user``/``model``; leading system messages are ``systemInstruction``,
  later ones travel as ``<system-reminder>`` user text; a request never ends
  on a model turn ("Requests ending with a model turn are not supported.");
* ``functionResponse.response`` must be an object: ``{"result": ...}`` or
  ``{"error": ...}``; the call ``id`` is echoed when the vendor gave one;
* ``thoughtSignature`` goes back on the part it came with;
* ``parameters``/``responseSchema`` take an OpenAPI subset (upper-case types,
  no ``$ref``/``additionalProperties``); ``parametersJsonSchema``/
  ``responseJsonSchema`` take JSON Schema; an OBJECT without properties is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

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
from agentflow.providers._adapter import (
    continuation,
    result_name,
    system_reminder,
    tool_calls_by_id,
)
from agentflow.providers._media import gemini_part

__all__ = [
    "CALL_ID",
    "FOREIGN_SIGNATURE",
    "SIGNATURE",
    "calling_config",
    "contents",
    "declaration",
    "response_config",
]

SIGNATURE = "gemini_thought_signature"
"""``provider_data`` key of a part's ``thoughtSignature``."""
CALL_ID = "gemini_call_id"
"""``ToolUseBlock.provider_data`` key: the call id the vendor gave (echoed back)."""


FOREIGN_SIGNATURE = "skip_thought_signature_validator"
"""The ``thoughtSignature`` Google documents for function calls the model did not
make itself (another vendor's turns, a model switched mid-conversation, a
hand-built history): Gemini 3 refuses a step whose first ``functionCall`` has no
signature (400 "Function call is missing a thought_signature in functionCall
parts"; ai.google.dev/gemini-api/docs/thought-signatures, "FAQs")."""


def contents(
    messages: Sequence[Msg], choice: ToolChoice | None = None, *, sign_foreign: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(systemInstruction parts, contents)``: same-role turns merged,
    function responses first in their turn, and never ending on a model turn
    (refused by newer models): a ``continuation`` nudge for ``choice`` closes it.
    ``sign_foreign`` (models that validate signatures, Gemini 3+): a model
    turn whose first ``functionCall`` came without a signature gets
    ``FOREIGN_SIGNATURE``."""
    calls = tool_calls_by_id(messages)
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "system" and not turns:
            system.extend({"text": b.text} for b in msg.content
                          if isinstance(b, TextBlock) and b.text)
            continue
        role = "model" if msg.role == "assistant" else "user"
        parts = _parts(msg, calls)
        if not parts:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["parts"].extend(parts)
        else:
            turns.append({"role": role, "parts": parts})
    for turn in turns:
        if turn["role"] == "user":
            turn["parts"].sort(key=lambda p: "functionResponse" not in p)  # stable
        elif sign_foreign:
            first = next((p for p in turn["parts"] if "functionCall" in p), None)
            if first is not None and not first.get("thoughtSignature"):
                first["thoughtSignature"] = FOREIGN_SIGNATURE
    if turns and turns[-1]["role"] == "model":
        turns.append({"role": "user", "parts": [{"text": continuation(choice)}]})
    return system, turns


def _parts(msg: Msg, calls: Mapping[str, ToolUseBlock]) -> list[dict[str, Any]]:
    if msg.role == "system":
        return [{"text": system_reminder(msg.text)}] if msg.text.strip() else []
    parts: list[dict[str, Any]] = []
    signature = None
    for b in msg.content:
        if isinstance(b, TextBlock) and b.text:
            parts.append({"text": b.text})
        elif isinstance(b, ThinkingBlock):
            signature = b.provider_data.get(SIGNATURE)
        elif isinstance(b, ToolUseBlock):
            call: dict[str, Any] = {"name": b.name, "args": dict(b.input)}
            if b.provider_data.get(CALL_ID):
                call["id"] = b.provider_data[CALL_ID]
            part: dict[str, Any] = {"functionCall": call}
            if b.provider_data.get(SIGNATURE):
                part["thoughtSignature"] = b.provider_data[SIGNATURE]
            parts.append(part)
        elif isinstance(b, ToolResultBlock):
            parts.append({"functionResponse": _function_response(b, calls)})
        elif isinstance(b, ImageBlock | DocumentBlock):
            parts.append(gemini_part(b))
    texts = [p for p in parts if "text" in p]
    if signature and texts:  # a text reply's signature rides on its last text part
        texts[-1]["thoughtSignature"] = signature
    return parts


def _function_response(block: ToolResultBlock, calls: Mapping[str, ToolUseBlock]
                       ) -> dict[str, Any]:
    response: dict[str, Any] = {"name": result_name(block, calls),
                                "response": {"error" if block.is_error else "result": block.output}}
    call = calls.get(block.tool_use_id)
    if call is not None and call.provider_data.get(CALL_ID):
        response["id"] = call.provider_data[CALL_ID]
    return response


_SUBSET = frozenset({
    "type", "format", "description", "nullable", "enum", "properties", "required", "items",
    "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf",
    "propertyOrdering", "title", "default", "example", "minProperties", "maxProperties",
})
_DROPPABLE = frozenset({"additionalProperties", "$schema", "discriminator", "examples"})


_PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""Property names the subset takes: "Parameter names must start with a letter or an
underscore and must only contain chars a-z, A-Z, 0-9, or underscores with a maximum
length of 64" (google-genai ``FunctionDeclaration.parameters``). An alias such as
``full-name`` or a JSON Schema key such as ``first name`` goes as JSON Schema."""


def _openapi(node: Any) -> Any:
    """``node`` in Gemini's OpenAPI ``Schema`` subset (upper-case types,
    harmless extras dropped), or ``None`` if it needs JSON Schema
    (``$ref``, ``const``, type lists, non-string enums...), or if the subset
    would refuse it: a node without a type (an ``Any`` field: "schema didn't
    specify the schema type field"), an ARRAY without ``items`` ("items:
    missing field"), a nested OBJECT without properties (a free-form ``dict``:
    "properties: should be non-empty for OBJECT type"), a property name off
    ``_PARAMETER_NAME``."""
    if not isinstance(node, Mapping):
        return None
    kind = node.get("type")
    if not isinstance(kind, str) and "anyOf" not in node:
        return None
    if isinstance(kind, str) and (
        (kind.lower() == "array" and not node.get("items"))
        or (kind.lower() == "object" and not node.get("properties"))
    ):
        return None
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPABLE:
            continue
        if key not in _SUBSET:
            return None
        if key == "type":
            if not isinstance(value, str):
                return None
            value = value.upper()
        elif key == "properties":
            if not all(_PARAMETER_NAME.fullmatch(k) for k in value):
                return None
            value = {k: _openapi(v) for k, v in value.items()}
            if None in value.values():
                return None
        elif key in ("items", "anyOf"):
            value = _openapi(value) if key == "items" else [_openapi(v) for v in value]
            if value is None or (isinstance(value, list) and None in value):
                return None
        elif key == "enum" and not all(isinstance(v, str) for v in value):
            return None
        out[key] = value
    return out


def _schema_field(schema: Mapping[str, Any], openapi_key: str, json_key: str) -> dict[str, Any]:
    """``{openapi_key: subset schema}`` when the schema fits the subset, else
    ``{json_key: schema}`` (JSON Schema as is)."""
    converted = _openapi(schema)
    return {openapi_key: converted} if converted is not None else {json_key: dict(schema)}


def declaration(tool: ToolSpec) -> dict[str, Any]:
    """The ``functionDeclarations`` entry of ``tool`` (no parameters for a
    tool without any: an OBJECT without properties is refused)."""
    decl: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.parameters.get("properties"):
        decl.update(_schema_field(tool.parameters, "parameters", "parametersJsonSchema"))
    return decl


def calling_config(choice: ToolChoice) -> dict[str, Any]:
    """``toolConfig.functionCallingConfig`` for ``choice``: AUTO / NONE / ANY,
    with ``allowedFunctionNames`` for one named tool."""
    if choice.mode == "specific":
        return {"mode": "ANY", "allowedFunctionNames": [choice.name]}
    return {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice.mode]}


def response_config(fmt: ResponseFormat) -> dict[str, Any]:
    """``generationConfig`` fields for native output: JSON mime type, plus the
    schema when one is given."""
    config: dict[str, Any] = {"responseMimeType": "application/json"}
    if fmt.type == "json_schema" and fmt.schema is not None:
        config.update(_schema_field(fmt.schema, "responseSchema", "responseJsonSchema"))
    return config
