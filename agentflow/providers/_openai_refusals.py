"""What an OpenAI-compatible server's error message says it refuses in a
request, so the adapter can send it again without it: a feature
(``unsupported_feature``; a schema a constrained-decoding engine cannot
compile, ``engine_refused``, carried by the part ``schema_carrier`` names) or
the form of the history a chat template or server will not take (tool-call
ids, ``reasoning_content``, ``null`` content, roles). ``_openai_errors`` maps
errors with these; ``_openai_remedies`` picks the fix.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from agentflow.errors import UnsupportedFeature

__all__ = [
    "call_ids_refused",
    "content_refused",
    "engine_refused",
    "reasoning_refused",
    "roles_refused",
    "schema_carrier",
    "schema_refused",
    "unsupported_feature",
]

_REFUSAL = re.compile(
    r"not support|unsupported|unavailable|not available|not allowed|must be auto|"
    r"isn't supported|is not enabled|must be set to false|may not be enabled|"
    r"cannot be used|can't be used|(?:should|must) be '?auto'?\b|"
    r"\bonly\b[^.\d]{0,80}\b(?:is|are) (?:supported|allowed|accepted)", re.I)
"""Words saying a thing is refused as unsupported. "may not be enabled" is
Anthropic's ("Thinking may not be enabled when tool_choice forces tool use.",
relayed by OpenAI-compatible gateways: C20); "only ... are supported" a server
listing what it takes ("only 'text' and 'json_object' response_format types are
supported"), but not a count ("Only 128 tools are allowed": a limit, not a refusal)."""
_NATIVE_WORDS = re.compile(
    r"response[_ ]?format|response[_ ]?mime[_ ]?type|response[_ ]?schema|json[_ ]schema|"
    r"json[_ ]object|json output|json mode|structured output", re.I)
"""Words naming the response format (native structured output)."""
_FEATURE_WORDS: tuple[tuple[UnsupportedFeature, re.Pattern[str]], ...] = (
    ("tool_choice", re.compile(r"tool[_ ]choice", re.I)),
    ("native_output", _NATIVE_WORDS),
    ("tools", re.compile(r"function[_ ]call|tool use|\btools\b|\btool\b", re.I)),
    ("thinking", re.compile(r"thinking|reasoning", re.I)),
)
_SCHEMA_REFUSAL = re.compile(r"invalid schema for response_format", re.I)
"""A schema the native path refuses ("Invalid schema for response_format 'X':
In context=(), 'additionalProperties' is required to be supplied and to be
false."; platform.openai.com/docs/guides/structured-outputs): the tool path
takes it, so it is an unsupported native output, not a bad request."""
_ENGINE_REFUSAL = re.compile(
    r"json schema conversion failed|unable to generate parser for this template|"
    r"not supported by (?:xgrammar|outlines|guidance|llguidance)|"
    r"failed to transform json schema|grammar error|invalid grammar specification|"
    r"unsupported feature for structured output|failed to parse grammar|"
    r"compiled grammar is too large|too many optional parameters|schema is too complex|"
    r"too many states for serving", re.I)
"""A self-hosted OpenAI-compatible server's constrained-decoding engine refusing a
schema it cannot compile. llama.cpp's server wraps every ``json_schema_to_grammar``
failure as "JSON schema conversion failed:\n<reason>" (a response format, 400 or, in
older builds, 500) or "Unable to generate parser for this template. Automatic parser
generation failed: ..." (the tools of a request); vLLM answers 400 "The provided JSON
schema contains features not supported by xgrammar.", "Failed to transform json
schema into a grammar: ...", "Grammar error: ..." (guidance), "Regex uses unsupported
feature for structured outputs" (its validation of ``response_format`` and of the
tools of a ``required``/named ``tool_choice``); Anthropic's grammar limits relayed by
an OpenAI-compatible gateway ("The compiled grammar is too large, which would cause
performance issues", "Schemas contains too many optional parameters"; TanStack/ai#682)
and Gemini's ("The specified schema produces a constraint that has too many states for
serving", through its OpenAI-compatible endpoint; googleapis/python-genai#660)
are the same kind. Which part of the request the refused
schema came from is read from the request (``schema_carrier``)."""
_FORMAT_TYPE_REFUSAL = re.compile(
    r"response[_ ]?format\W{0,3}\.?\W{0,3}type\W{0,3}\s*must be", re.I)
"""A server that takes only some ``response_format`` types: LM Studio 400
"'response_format.type' must be 'json_schema' or 'text'" (no JSON mode), older
llama.cpp 500 "response_format type must be one of \"text\" or \"json_object\", but
got: json_schema"."""
_FORMAT_SHAPE_REFUSAL = re.compile(
    r"response_format(?:\.\w+)*\W{1,3}\s*(?:missing field|unknown variant|input should be|"
    r"input tag|does not match any of the expected)|"
    r"deserializ\w*\b[^\n]{0,80}?response_format", re.I)
"""A server whose request decoder refuses the ``response_format`` we send as a
shape it does not know: Hugging Face TGI 422 "Failed to deserialize the JSON body
into the target type: response_format: missing field `value`" (its own ``{"type":
"json", "value": schema}`` form; huggingface/huggingface_hub#2744), "unknown
variant `json_schema`"; an older vLLM's validation "response_format.type Input
should be 'text' or 'json_object'". The response format is unsupported there."""
_SERVER_FLAG_REFUSAL = re.compile(r"\btools? (?:param|choice) requires --", re.I)
"""A server started without tool calling: llama.cpp "tools param requires --jinja
flag" (500 in many builds), vLLM "\"auto\" tool choice requires
--enable-auto-tool-choice and --tool-call-parser to be set" (400)."""
_GEMINI_FIELD = r"(?:\bat '(?:request\.)?|\bGenerateContentRequest\.)"
_RESPONSE_SCHEMA_REFUSAL = re.compile(
    _GEMINI_FIELD + r"generation_config\.response_(?:json_)?schema\b", re.I)
_PARAMETERS_REFUSAL = re.compile(
    _GEMINI_FIELD + r"tools\[\d+\]\.function_declarations\[\d+\]\.parameters\b", re.I)
"""Gemini refusing a schema keyword it does not take, relayed by an
OpenAI-compatible gateway in an OpenAI error envelope: "Invalid JSON payload
received. Unknown name "$schema" at 'generation_config.response_schema': Cannot
find field." (QuantumNous/new-api#1037), "[gemini/gemini-3.1-pro-preview]
[400]: Invalid JSON payload received. Unknown name "additionalProperties" at
'tools[0].function_declarations[0].parameters': Cannot find field."
(openswarm-ai/openswarm#24), "Invalid value at
'generation_config.response_schema.properties[4].value.any_of[1].type'"
(simonw/llm-gemini#49), "* GenerateContentRequest.generation_config.
response_schema...". The field path names the part that carried the schema:
the response format (``native_output``) or a function's parameters
(``tool_schema``); either way the engine steps down a strategy."""
_PARAM_FEATURE: dict[str, UnsupportedFeature] = {
    "tool_choice": "tool_choice", "response_format": "native_output", "tools": "tools",
}


def unsupported_feature(message: str, param: Any = None) -> UnsupportedFeature | None:
    """Which feature a 400 refuses as unsupported, or ``None`` for any other 400.

    The message must say the thing is unsupported/unavailable/not allowed;
    the feature is then read from ``param`` (OpenAI's ``error.param``) or from
    the words of the message, tool_choice first ("Thinking mode does not
    support this tool_choice" is about tool_choice, not thinking), then the
    response format before tools: a refused combination of the two (Gemini:
    "Function calling with a response mime type: 'application/json' is
    unsupported") is ``native_output``, even with ``param="tools"``, so the
    engine drops the response format and keeps the caller's tools. A
    response-format schema refused as invalid is ``native_output`` too, and so
    is a response format type a server does not take (LM Studio: no JSON mode)
    or a shape its request decoder does not know (TGI, older vLLM), and a
    schema keyword Gemini refuses at the response schema's field path (a
    function's parameters there: ``tool_schema``; ``_RESPONSE_SCHEMA_REFUSAL``).
    A self-hosted server started without tool calling is ``tools``. A schema
    its constrained-decoding engine cannot compile (``engine_refused``) is
    ``native_output`` here; the adapter, which knows the request, names the
    part that carried the schema (``schema_carrier``).
    """
    if (_SCHEMA_REFUSAL.search(message) or _FORMAT_TYPE_REFUSAL.search(message)
            or _FORMAT_SHAPE_REFUSAL.search(message) or _RESPONSE_SCHEMA_REFUSAL.search(message)):
        return "native_output"
    if _PARAMETERS_REFUSAL.search(message):
        return "tool_schema"
    if _SERVER_FLAG_REFUSAL.search(message):
        return "tools"
    if _ENGINE_REFUSAL.search(message):
        return "native_output"  # the usual carrier; ``schema_carrier`` tells the real one
    if not _REFUSAL.search(message):
        return None
    named = _PARAM_FEATURE.get(param) if isinstance(param, str) else None
    if named == "tools" and _NATIVE_WORDS.search(message):
        return "native_output"
    if named is not None:
        return named
    for feature, words in _FEATURE_WORDS:
        if words.search(message):
            return feature
    return None


def schema_refused(message: str) -> bool:
    """Whether an error message refuses the schema the request carried (invalid
    for the native path, ``_SCHEMA_REFUSAL``; a keyword Gemini's response schema
    does not take, ``_RESPONSE_SCHEMA_REFUSAL``; beyond a constrained-decoding
    engine, ``_ENGINE_REFUSAL``), not the feature: another schema would pass
    (``UnsupportedFeatureError.schema_only``)."""
    return bool(_SCHEMA_REFUSAL.search(message) or _ENGINE_REFUSAL.search(message)
                or _RESPONSE_SCHEMA_REFUSAL.search(message))


def engine_refused(message: str) -> bool:
    """Whether an error message is a self-hosted server's constrained-decoding
    engine refusing a schema it cannot compile (see ``_ENGINE_REFUSAL``)."""
    return bool(_ENGINE_REFUSAL.search(message))


_CALL_ID_REFUSAL = re.compile(
    r"tool call id was .{0,200}? but must be a-z, a-z, 0-9, with a length of 9", re.I | re.S)
"""Mistral's refusal of a history's tool-call id ("Tool call id was
call_0fypS1hVX but must be a-z, A-Z, 0-9, with a length of 9."): its API (400,
code ``3280``), and its chat template on vLLM or mlx-lm servers (500 from
omlx, jundot/omlx#1997): the same request fails the same way, never retried;
sent again with nine-character ids (``_openai_remedies``)."""


def call_ids_refused(message: str) -> bool:
    """Whether an error message refuses the history's tool-call ids as not
    nine letters and digits (Mistral's rule, ``_CALL_ID_REFUSAL``)."""
    return bool(_CALL_ID_REFUSAL.search(message))


_REASONING_MISSING = re.compile(
    r"\breasoning_content\b[^.]{0,40}?\bmissing\b|\bmissing\W{1,3}reasoning_content\b", re.I)
"""A thinking model's server refusing a history whose tool-call turns do not
carry their ``reasoning_content``: Moonshot's Kimi K2 thinking models ("thinking
is enabled but reasoning_content is missing in assistant tool call message at
index 2"; farion1231/cc-switch#2365, openclaw/openclaw#59689, an empty one
counting as missing on K2.5/K2.6: theopenco/llmgateway#2093) and DeepSeek's
("Missing `reasoning_content` field in the assistant message at message index
2"), reached through a generic OpenAI-compatible adapter or a gateway."""


def reasoning_refused(message: str) -> bool:
    """Whether an error message refuses the history for tool-call turns without
    their ``reasoning_content`` (``_REASONING_MISSING``)."""
    return bool(_REASONING_MISSING.search(message))


_CONTENT_REFUSAL = re.compile(r"expected 'content' to be a string or an array", re.I)
"""llama.cpp's server (builds from b5331) refusing an assistant turn of tool calls
whose ``content`` is ``null``, as OpenAI writes it: 500 "Expected 'content' to be
a string or an array" (ggml-org/llama.cpp#13471, browser-use/browser-use#1635);
every tool loop failed at its second request."""


def content_refused(message: str) -> bool:
    """Whether an error message refuses a message's ``null`` content (``_CONTENT_REFUSAL``)."""
    return bool(_CONTENT_REFUSAL.search(message))


_ROLES_REFUSAL = re.compile(
    r"roles must alternate|unexpected role '?\w+'? after role '?\w+", re.I)
_SYSTEM_REFUSAL = re.compile(
    r"system role (?:is )?not supported|does not support '?system'?|"
    r"'?system'? role is not (?:supported|allowed)", re.I)
"""A template or model that takes no system message at all: Gemma 2's "System role
not supported", OpenAI's o1 models at launch ("Unsupported value: 'messages[0].role'
does not support 'system' with this model.")."""
"""A chat template refusing the conversation's roles while the prompt is built
(``providers._alternating``): "After the optional system message, conversation
roles must alternate user/assistant/user/assistant/..." (Mistral, Gemma and
Llama 2 templates on vLLM: 400, vllm-project/vllm#6862; TGI: 422; llama.cpp:
500), "System role not supported" (Gemma 2), Mistral's API and tokenizer
"Unexpected role 'system' after role 'assistant'" / "Unexpected role 'user'
after role 'tool'". The same request fails the same way."""


def roles_refused(message: str) -> Literal["turns", "system"] | None:
    """How an error message refuses the conversation's roles: ``"system"`` when
    no system message is taken at all (``_SYSTEM_REFUSAL``), ``"turns"`` when
    they must alternate (``_ROLES_REFUSAL``), else ``None``."""
    if _SYSTEM_REFUSAL.search(message):
        return "system"
    return "turns" if _ROLES_REFUSAL.search(message) else None


_LOCAL_SERVER_WORDING = (_ENGINE_REFUSAL, _FORMAT_TYPE_REFUSAL, _SERVER_FLAG_REFUSAL)


def schema_carrier(body: Mapping[str, Any]) -> UnsupportedFeature | Literal["strict"] | None:
    """The part of request ``body`` whose schema a constrained-decoding engine
    compiles, i.e. what to drop when it refuses one (``engine_refused``):
    ``native_output`` for a json_schema ``response_format``; ``strict`` for
    strict function tools (sent again without ``strict``); ``tool_choice`` for a
    ``required`` or named choice (vLLM compiles the tools' schemas into a
    grammar for those only); ``tools`` for other tools (llama.cpp builds a
    grammar for its tool-call parser from every tool); ``None`` without any."""
    rf = body.get("response_format")
    if isinstance(rf, Mapping) and rf.get("type") == "json_schema":
        return "native_output"
    tools = body.get("tools") or ()
    if not tools:
        return None
    if any(isinstance(t, Mapping) and (t.get("function") or {}).get("strict") for t in tools):
        return "strict"
    choice = body.get("tool_choice")
    if choice == "required" or isinstance(choice, Mapping):
        return "tool_choice"
    return "tools"
