"""The vendors under SDK conformance test (tests/test_sdk_conformance.py):
each ``Kit`` is an adapter and model, its fake, the SDK request type its body
is checked against, the documented vendor extensions it may send beyond
that type, and what the body comparison with the SDK's own request leaves
out, each with the reason. ``comparable`` puts a body in the form both sides
are compared in.
"""

from __future__ import annotations

import contextlib
import importlib
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentflow.model import ChatModel
from agentflow.providers.registry import get_model
from tests.fakes.base import FakeError, FakeServer
from tests.fakes.gemini import camel_keys
from tests.provider_scenarios import FAST

from .strict import signature_type
from .witnesses import WITNESSES, Witness

__all__ = ["KITS", "Kit", "comparable"]


def _openai_types(stream: bool) -> Any:
    from openai.types.chat import completion_create_params as p
    return p.CompletionCreateParamsStreaming if stream else p.CompletionCreateParamsNonStreaming


def _zai_types(stream: bool) -> Any:
    """zai-sdk types its body as ``Completions.create``'s keywords; messages
    and tools are ``object`` there, so they are checked against the OpenAI
    types, whose shape GLM documents (docs.z.ai/api-reference/llm/chat-completion)."""
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
    from zai.api_resource.chat.completions import Completions

    base = signature_type(Completions.create, skip=("extra_headers", "extra_body", "timeout"))
    fields = dict(typing.get_type_hints(base))
    fields["messages"] = list[ChatCompletionMessageParam]
    fields["tools"] = list[ChatCompletionToolParam]
    return typing.TypedDict("ZaiCreateParams", fields, total=False)  # type: ignore[operator]


def _anthropic_types(stream: bool) -> Any:
    from anthropic.types import message_create_params as p
    return p.MessageCreateParamsStreaming if stream else p.MessageCreateParamsNonStreaming


def _gemini_types(stream: bool) -> Any:
    """The generateContent body: google-genai's models for each part (the
    SDK's ``GenerateContentParameters`` is its Python-side shape, not the wire's)."""
    from google.genai import types

    return typing.TypedDict("GenerateContentRequest", {
        "contents": list[types.Content], "systemInstruction": types.Content,
        "tools": list[types.Tool], "toolConfig": types.ToolConfig,
        "generationConfig": types.GenerationConfig,
        "safetySettings": list[types.SafetySetting], "cachedContent": str,
    }, total=False)


def _ollama_types(stream: bool) -> Any:
    """ollama's ``ChatRequest``, with messages held to its ``Message`` model
    (the request type also takes any mapping there)."""
    from ollama._types import ChatRequest, Message, Tool

    fields = {info.alias or name: info.annotation
              for name, info in ChatRequest.model_fields.items()}
    fields["messages"] = list[Message]
    fields["tools"] = list[Tool]
    return typing.TypedDict("OllamaChatRequest", fields, total=False)  # type: ignore[operator]


@dataclass(frozen=True)
class Kit:
    """One vendor adapter and model under test."""

    id: str
    vendor: str
    model: str
    fake: Callable[[], FakeServer]
    request_type: Callable[[bool], Any]
    extensions: Mapping[str, str] = field(default_factory=dict)
    """Body paths outside the SDK's types that we send -> the document that
    defines them."""
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    ours_only: Mapping[str, str] = field(default_factory=dict)
    """Keys our adapter adds by policy where an SDK caller would add them by
    hand -> why; removed from our body before the comparison (still checked
    by the strict types)."""

    sdk_only: Mapping[str, str] = field(default_factory=dict)
    """Keys the SDK adds that mean nothing to the vendor -> why; removed from
    the SDK's body before the comparison."""
    skip: Mapping[str, str] = field(default_factory=dict)
    """Scenario id -> why it does not apply to this kit."""
    no_compare: Mapping[str, str] = field(default_factory=dict)
    """Scenario id -> why the SDK has no equivalent request (strictly checked only)."""
    sdk_drops: Mapping[str, str] = field(default_factory=dict)
    """Keys the SDK's own types drop from what it is given -> why; removed
    from our body before the comparison."""
    canonical: Callable[[Any], Any] = field(default=lambda body: body)
    """How the vendor reads a body (both sides pass through it)."""

    def build(self, fake: FakeServer, stream: bool) -> ChatModel:
        return get_model(f"{self.vendor}:{self.model}", api_key="test-key", base_url=fake.url,
                         settings=FAST, stream=stream, **self.kwargs)

    def refusal(self) -> FakeError:
        """A 400 in this vendor's error envelope."""
        fake = self.fake()
        bad = getattr(fake, "bad", None)
        if bad is not None:
            return bad("the request is invalid")  # type: ignore[no-any-return]
        module = importlib.import_module(type(fake).__module__)
        if self.vendor == "anthropic":
            return module.anthropic_error(400, "invalid_request_error", "the request is invalid")  # type: ignore[no-any-return]
        if self.vendor == "gemini":
            return module.gemini_error(400, "the request is invalid")  # type: ignore[no-any-return]
        return FakeError(400, {"error": "the request is invalid"})

    @property
    def witness(self) -> Witness:
        return WITNESSES[self.vendor]()


def _fake(path: str) -> Callable[[], FakeServer]:
    module, _, name = path.partition(":")

    def make() -> FakeServer:
        import importlib
        return getattr(importlib.import_module(module), name)()  # type: ignore[no-any-return]
    return make


DEEPSEEK_EXT = {
    "thinking": "api-docs.deepseek.com/guides/thinking_mode",
    "messages[*].reasoning_content": "api-docs.deepseek.com/guides/thinking_mode (sent back on "
                                     "turns that made tool calls)",
}
ANTHROPIC_EXT = {
    "temperature": "platform.claude.com/docs/en/about-claude/model-deprecations#api-parameter-"
                   "deprecations: removed from the SDK (1.0); the API still takes it on models "
                   "with sampling options (sent only when the caller sets it)",
}
DASHSCOPE_EXT = {
    "enable_thinking": "alibabacloud.com/help/en/model-studio/deep-thinking",
}
GLM_EXT: dict[str, str] = {}
OLLAMA_EXT = {
    "messages[*].tool_calls[*].id": "ollama api/types.go ToolCall.ID (newer servers)",
    "messages[*].tool_calls[*].function.index": "ollama api/types.go ToolCallFunction.Index",
    "messages[*].tool_call_id": "the call a tool result answers; read by newer servers "
                                "(github.com/ollama/ollama api/types.go Message.ToolCallID)",
    "tools[*].function.parameters.additionalProperties":
        "JSON Schema keyword outside ollama's Tool.Function.Parameters; the server's "
        "ToolFunctionParameters (github.com/ollama/ollama api/types.go) ignores it",
}
def _gemini_canonical(body: Any) -> Any:
    """A Gemini body as the API reads it: proto JSON names in lowerCamelCase
    (the SDK sends some snake_case), bytes in either base64 alphabet, and a
    schema in ``parameters`` (OpenAPI subset, no ``additionalProperties``) or
    ``parametersJsonSchema`` (JSON Schema) read as one schema: the comparison
    is of its shape."""
    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {}
        if isinstance(node.get("data"), str) and "mimeType" in node:  # inlineData bytes:
            node = {**node, "data": _standard_base64(node["data"])}  # either alphabet
        for key, value in node.items():
            key = {"parametersJsonSchema": "parameters",
                   "responseJsonSchema": "responseSchema"}.get(key, key)
            if key in ("parameters", "responseSchema"):
                value = _open_shape(value)
            out[key] = walk(value) if key not in ("parameters", "responseSchema") else value
        return out
    return walk(camel_keys(body))


def _standard_base64(text: str) -> str:
    """Base64 ``text`` in the standard alphabet (proto3 JSON reads bytes in the
    standard or the URL-safe one; google-genai writes the latter)."""
    import base64
    data = base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_")
                                    + "=" * (-len(text) % 4))
    return base64.b64encode(data).decode()


def _open_shape(schema: Any) -> Any:
    """``schema`` without ``additionalProperties`` (Gemini's subset has none),
    types lower-case (the subset's ``OBJECT`` is JSON Schema's ``object``)."""
    if isinstance(schema, dict):
        return {k: v.lower() if k == "type" and isinstance(v, str) else _open_shape(v)
                for k, v in schema.items() if k != "additionalProperties"}
    if isinstance(schema, list):
        return [_open_shape(v) for v in schema]
    return schema


GEMINI_SDK_ONLY = {"systemInstruction.role": "google-genai sets role 'user' on the system "
                                             "instruction; the API ignores a role there"}
ANTHROPIC_OURS = {"cache_control": "prompt-cache breakpoints: our policy (last tool, system "
                                   "block and message block), CacheControlEphemeralParam"}
MINIMAX_EXT = {
    "thinking": "platform.minimax.io/docs/api-reference/text-openai-api (M3: adaptive|disabled; "
                "M2.x ignore it)",
}

def _media_only(kit_id: str) -> dict[str, str]:
    """``Kit.skip`` for a kit of a vendor's vision model: only the media scenarios
    run there (the others run on the vendor's text kit, ``kit_id``)."""
    from .scenarios import MEDIA_SCENARIOS, SCENARIOS
    return {s.id: f"a text scenario: run on the {kit_id} kit" for s in SCENARIOS
            if s.id not in MEDIA_SCENARIOS}


_EMULATED_SPECIFIC = ("no named tool_choice is ever sent (GLM: \"Tool choice must be auto\"; "
                      "MiniMax ignores it): forcing one tool is our emulation (that tool "
                      "only + a reminder, providers._openai_compat.offer_named_tool), tested "
                      "in test_providers_glm / test_providers_minimax")

KITS = [
    Kit("openai", "openai", "gpt-4o-mini", _fake("tests.fakes.openai:OpenAIFake"),
        _openai_types),
    Kit("openai-reasoning", "openai", "gpt-5", _fake("tests.fakes.openai:OpenAIFake"),
        _openai_types),
    Kit("deepseek", "deepseek", "deepseek-v4-flash", _fake("tests.fakes.deepseek:DeepSeekFake"),
        _openai_types, DEEPSEEK_EXT),
    Kit("dashscope", "dashscope", "qwen-plus", _fake("tests.fakes.dashscope:DashScopeFake"),
        _openai_types, DASHSCOPE_EXT),
    Kit("minimax", "minimax", "MiniMax-M2.7", _fake("tests.fakes.minimax:MiniMaxFake"),
        _openai_types, MINIMAX_EXT, skip={
            "error-stream": "MiniMax answers an error as HTTP 200 JSON (base_resp) even to a "
                            "stream request; the openai SDK's stream reader never looks at a "
                            "JSON body, so it cannot witness that case (our adapter reads it: "
                            "test_providers_minimax)"},
        no_compare={"choice-specific": _EMULATED_SPECIFIC}),
    Kit("dashscope-vl", "dashscope", "qwen-vl-max", _fake("tests.fakes.dashscope:DashScopeFake"),
        _openai_types, DASHSCOPE_EXT, skip=_media_only("dashscope")),
    Kit("glm", "glm", "glm-4.6", _fake("tests.fakes.glm:GLMFake"), _zai_types, GLM_EXT,
        no_compare={"choice-specific": _EMULATED_SPECIFIC}),
    Kit("glm-vision", "glm", "glm-4.6v", _fake("tests.fakes.glm:GLMFake"), _zai_types, GLM_EXT,
        skip=_media_only("glm")),
    Kit("anthropic", "anthropic", "claude-sonnet-4-6", _fake("tests.fakes.anthropic:AnthropicFake"),
        _anthropic_types, ANTHROPIC_EXT, ours_only=ANTHROPIC_OURS),
    Kit("anthropic-3", "anthropic", "claude-3-5-haiku-latest",
        _fake("tests.fakes.anthropic:AnthropicFake"), _anthropic_types, ANTHROPIC_EXT,
        ours_only=ANTHROPIC_OURS),
    Kit("gemini", "gemini", "gemini-2.5-flash", _fake("tests.fakes.gemini:GeminiFake"),
        _gemini_types, kwargs={"include_thoughts": True}, sdk_only=GEMINI_SDK_ONLY,
        canonical=_gemini_canonical),
    Kit("gemini-3", "gemini", "gemini-3-pro-preview", _fake("tests.fakes.gemini:GeminiFake"),
        _gemini_types, kwargs={"include_thoughts": True}, sdk_only=GEMINI_SDK_ONLY,
        canonical=_gemini_canonical,
        skip=dict.fromkeys(("multi-turn", "multi-turn-thinking"),
                           "Gemini 3 refuses function calls sent back without the "
                           "thoughtSignature it issued; the scenario's history has none "
                           "(signatures are covered in test_providers_gemini)")),
    Kit("ollama", "ollama", "qwen3:8b", _fake("tests.fakes.ollama:OllamaFake"), _ollama_types,
        OLLAMA_EXT, sdk_drops={
            "additionalProperties": "not in ollama's Tool.Function.Parameters",
            "tool_call_id": "not in ollama's Message", "id": "not in ollama's Message.ToolCall",
            "index": "not in ollama's ToolCall.Function"},
        no_compare={"choice-specific": "/api/chat has no tool_choice; forcing one tool is our "
                                       "emulation (that tool only + a reminder), tested in "
                                       "test_providers_ollama",
                    "native": "ours adds a system instruction holding the format schema (the "
                              "grammar shows it to no one: ollama/ollama#8162), tested in "
                              "test_providers_ollama"}),
    Kit("ollama-vision", "ollama", "qwen2.5vl:7b", _fake("tests.fakes.ollama:OllamaFake"),
        _ollama_types, OLLAMA_EXT, skip=_media_only("ollama")),
]



def schema_shape(schema: Any, path: str = "#") -> list[tuple[str, Any, Any, Any]]:
    """The object structure of a JSON Schema: ``(path, properties, required,
    additionalProperties)`` per object node. Output schemas are compared by
    shape: the SDKs keep titles and defaults where our dialect transforms drop
    them or make defaulted fields nullable; both are valid for the vendor."""
    shapes: list[tuple[str, Any, Any, Any]] = []
    if isinstance(schema, dict):
        if "properties" in schema:
            shapes.append((path, sorted(schema["properties"]), sorted(schema.get("required", [])),
                           schema.get("additionalProperties")))
        for key, value in schema.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    shapes += schema_shape(sub, f"{path}/{key}/{name}")
            elif key in ("items", "anyOf", "allOf", "oneOf"):
                shapes += schema_shape(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, sub in enumerate(schema):
            shapes += schema_shape(sub, f"{path}/{i}")
    return shapes


_SCHEMA_KEYS = ("schema", "format", "responseSchema", "responseJsonSchema", "response_schema",
                "response_json_schema")


def _normalize(value: Any) -> Any:
    """JSON with tool-call argument strings parsed (spacing is not meaning)
    and output schemas reduced to their shape."""
    if isinstance(value, dict):
        out = {k: schema_shape(v) if k in _SCHEMA_KEYS else _normalize(v)
               for k, v in value.items()
               if v not in (None, {}, [], "")  # SDKs send or drop unset fields as null/empty
               and (k != "description" or _SCHEMA_KEYS[0] not in value)}
        if isinstance(out.get("arguments"), str):
            with contextlib.suppress(orjson.JSONDecodeError):
                out["arguments"] = orjson.loads(out["arguments"])
        return out
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value


def _without(value: Any, keys: Mapping[str, str], path: str = "") -> Any:
    """``value`` without ``keys``: a bare name anywhere, a dotted path
    (``systemInstruction.role``) at that place only."""
    if isinstance(value, dict):
        return {k: _without(v, keys, f"{path}.{k}" if path else k) for k, v in value.items()
                if k not in keys and (f"{path}.{k}" if path else k) not in keys}
    if isinstance(value, list):
        return [_without(v, keys, path) for v in value]
    return value



def comparable(kit: Kit, body: Any, *, ours: bool) -> Any:
    """``body`` as it is compared: our body without ``kit.ours_only`` and
    ``kit.sdk_drops``, the SDK's without ``kit.sdk_only``; then read as the
    vendor reads it (``kit.canonical``) and normalized."""
    if ours:
        body = _without(_without(body, kit.ours_only), kit.sdk_drops)
    else:
        body = _without(body, kit.sdk_only)
    return _normalize(kit.canonical(body))
