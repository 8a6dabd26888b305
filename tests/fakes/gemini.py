"""A fake Gemini API (``/v1beta/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse``) on 127.0.0.1.

Speaks the wire protocol of shared/providers.md §4: each SSE event is a
whole ``GenerateContentResponse`` carrying only new parts, function calls
arrive whole, the last event carries ``finishReason`` (``STOP`` for calls
too) and there is no terminal marker; errors use the Google RPC envelope.

Refuses what the real API refuses (400 ``INVALID_ARGUMENT`` unless said):
a missing key (403) or the key ``"bad-key"`` (400 ``API_KEY_INVALID``),
roles other than user/model, unknown fields in ``parameters`` or
``responseSchema`` (``$defs``, ``$ref``, ``additionalProperties``...), an
OBJECT without properties, ``responseMimeType: application/json`` together
with function declarations on models before Gemini 3, both response schema
fields at once, ``allowedFunctionNames`` naming an undeclared function, a
non-object ``functionResponse.response``, on Gemini 3 a function call
sent back without the ``thoughtSignature`` it came with, and ``inlineData``
of an unsupported MIME type, not base64 or not of that type, or a request over
20 MB ("Request payload size exceeds the limit").

Token log-probabilities (google-genai ``types.LogprobsResult``): a request with
``generationConfig.responseLogprobs: true`` to a model matching
``logprobs_models`` gets each candidate's ``logprobsResult`` (``chosenCandidates``
of ``{token, tokenId, logProbability}`` and ``topCandidates``, ``logprobs``
alternatives per step) for the text it carries, in every stream event as in a
whole reply; any other model refuses it (400 "Logprobs is not enabled for
models/..."), as does ``logprobs`` outside 1-20 or without ``responseLogprobs``
(wording unconfirmed). Tokens are ``fake_tokens``; a stream event carries
whole tokens. ``avgLogprobs`` comes with every text reply, asked or not.

``FakeReply.extra`` keys: ``token_logprobs`` (``{token: logprob}``; others get
``DEFAULT_LOGPROB``), ``no_finish`` (no finishReason), ``block_reason``
(no candidates, prompt blocked),
``error`` (an error object sent as a stream event after ``error_after``
events; with ``bare_error`` as indented JSON lines without ``data:``, as the
API writes an error into a stream: googleapis/python-genai ``_api_client.py``,
"When API returns an error message, it comes line by line"), ``finish``
(the raw finishReason), ``wrap_list`` (errors only: see ``gemini_error``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from typing import Any

import orjson
from aiohttp import web

from . import media
from .base import DEFAULT_LOGPROB, FakeError, FakeReply, FakeServer, fake_tokens, pieces, sse
from .gemini_batches import GeminiBatches

__all__ = ["MIME_WITH_TOOLS", "MODEL_TURN_LAST", "GeminiFake", "gemini_error"]

MIME_WITH_TOOLS = "Function calling with a response mime type: 'application/json' is unsupported"
MODEL_TURN_LAST = ("Requests ending with a model turn are not supported unless the last part is "
                   "a function response.")
BYPASSES = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")
"""The dummy signatures Google documents for history the model did not produce."""
MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for "
    "tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures."
)
_SCHEMA_FIELDS = frozenset({
    "type", "format", "description", "nullable", "enum", "properties", "required", "items",
    "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf",
    "propertyOrdering", "title", "default", "example", "minProperties", "maxProperties",
})
_FORMATS = {"STRING": frozenset({"enum", "date-time"}), "NUMBER": frozenset({"float", "double"}),
            "INTEGER": frozenset({"int32", "int64"})}
"""The ``Schema.format`` values the API takes per type (ai.google.dev/api/caching#Schema);
any other is a 400 "format: only 'enum' and 'date-time' are supported for STRING type"."""
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
           504: "DEADLINE_EXCEEDED"}


def gemini_error(code: int, message: str, details: list[dict[str, Any]] | None = None, *,
                 headers: Mapping[str, str] | None = None, wrap_list: bool = False) -> FakeError:
    """A scripted error in the Google RPC envelope (optionally wrapped in a
    one-element list, as the API sometimes sends)."""
    body: Any = {"error": {"code": code, "message": message, "status": _STATUS.get(code, "UNKNOWN"),
                           "details": details or []}}
    return FakeError(code, [body] if wrap_list else body, headers or {})


FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")
"""``FunctionDeclaration.name``: "Must start with a letter or an underscore. Must be
a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum
length of 128" (google-genai ``types.FunctionDeclaration``)."""


PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""Property names of a ``Schema`` (google-genai ``FunctionDeclaration.parameters``:
"Parameter names must start with a letter or an underscore and must only contain
chars a-z, A-Z, 0-9, or underscores with a maximum length of 64"; wording of the
error unconfirmed)."""


def _bad(message: str) -> FakeError:
    return gemini_error(400, message)


MEDIA_TYPES = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif",
               "application/pdf")
"""The image and document MIME types the fake takes inline."""
MAX_REQUEST_BYTES = 20 * 1024 * 1024


class GeminiFake(GeminiBatches, FakeServer):
    """The fake; the model name comes from the request path. Batch mode:
    ``GeminiBatches`` (``batches.script`` steers it, ``batches.submitted``
    counts submissions per key)."""

    routes = ("/v1beta/models/{tail:.+(?<!:batchGenerateContent)}",)  # batches: GeminiBatches
    vendor = "gemini"

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self.signatures: set[str] = set()
        self.logprobs_models: tuple[str, ...] = ("gemini-1.5-flash*", "gemini-2.0-flash*")
        """Globs of the models that give token log-probabilities; others refuse them."""
        self.refused_keywords: frozenset[str] = frozenset()
        """Schema keywords this model's validator refuses beyond the documented
        subset (a 400 naming the schema the dialect could not know of)."""
        self._init_batches()

    def base_url(self, root: str) -> str:
        return f"{root}/v1beta"

    def is_stream(self, request: web.Request, body: Any) -> bool:
        return request.path.endswith(":streamGenerateContent") and request.query.get("alt") == "sse"

    @staticmethod
    def _model(request_path: str) -> str:
        return request_path.rsplit("/", 1)[-1].split(":", 1)[0]

    def canonical(self, body: Any) -> Any:
        """Field names in lowerCamelCase: the API parses proto3 JSON, which
        accepts both spellings, and google-genai sends some fields snake_case
        (``thinkingConfig.include_thoughts``, ``property_ordering``...)."""
        return camel_keys(body)

    # -- refusals ------------------------------------------------------------
    def key_error(self, key: str) -> FakeError:
        return gemini_error(400, f"API key not valid: {key} ({key[:12]}...). Please pass a "
                            "valid API key.", [{
                                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                "reason": "API_KEY_INVALID", "domain": "googleapis.com"}])

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        key = request.headers.get("x-goog-api-key")
        if not key:
            return gemini_error(403, "Method doesn't allow unregistered callers (callers without "
                                "established identity). Please use API Key or other form of API "
                                "consumer identity to call this API.")
        if key == "bad-key":
            return gemini_error(400, "API key not valid. Please pass a valid API key.", [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                "domain": "googleapis.com"}])
        model = self._model(request.path)
        gemini3 = model.startswith("gemini-3")
        return (self._check_contents(body, gemini3) or self._check_media(body)
                or self._check_tools(body) or self._check_output(body, gemini3)
                or self._check_logprobs(body, model))

    def _check_logprobs(self, body: dict[str, Any], model: str) -> FakeError | None:
        """``responseLogprobs`` only on ``logprobs_models`` (the API's words for the
        others: mscraftsman/generative-ai#135); ``logprobs`` 1-20 and only with it."""
        config = body.get("generationConfig") or {}
        top = config.get("logprobs")
        if top is not None and (not isinstance(top, int) or isinstance(top, bool)
                                or not 1 <= top <= 20):
            return _bad(f"* GenerateContentRequest.generation_config.logprobs: logprobs must "
                        f"be between 1 and 20, got {top!r}")
        if top is not None and config.get("responseLogprobs") is not True:
            return _bad("* GenerateContentRequest.generation_config.logprobs: logprobs can be "
                        "set only when response_logprobs is true")
        if config.get("responseLogprobs") and not any(
                fnmatchcase(model, glob) for glob in self.logprobs_models):
            return _bad(f"Logprobs is not enabled for models/{model}")
        return None

    def _check_media(self, body: dict[str, Any]) -> FakeError | None:
        """``inlineData`` / ``fileData`` parts as the image-understanding and
        document-processing docs state: supported MIME types, base64 bytes the
        API can read, a request of at most 20 MB (inline data), ``fileData``
        with both ``mimeType`` and ``fileUri``."""
        if len(orjson.dumps(body)) > MAX_REQUEST_BYTES:
            return _bad(f"Request payload size exceeds the limit: {MAX_REQUEST_BYTES} bytes.")
        for i, content in enumerate(body["contents"]):
            for j, part in enumerate(content.get("parts", [])):
                where = f"contents[{i}].parts[{j}]"
                inline, file = part.get("inlineData"), part.get("fileData")
                if file is not None and not (file.get("mimeType") and file.get("fileUri")):
                    return _bad(f"* GenerateContentRequest.{where}.file_data: mime_type and "
                                "file_uri are required")
                if inline is None:
                    continue
                mime = inline.get("mimeType")
                if mime not in MEDIA_TYPES:
                    return _bad(f"Unsupported MIME type: {mime}")
                data = media.decode(inline.get("data"), urlsafe=True)  # proto3 JSON bytes
                if data is None:
                    return _bad(f"Invalid value at '{where}.inline_data.data' (TYPE_BYTES), "
                                "Base64 decoding failed")
                if media.kind_of(data) != mime:
                    kind = "document" if mime == "application/pdf" else "image"
                    return _bad(f"Unable to process input {kind}. Please retry or report in "
                                "https://developers.generativeai.google/guide/troubleshooting")
        return None

    def _check_contents(self, body: Any, gemini3: bool) -> FakeError | None:
        if not isinstance(body, dict) or not body.get("contents"):
            return _bad("* GenerateContentRequest.contents: contents is not specified")
        for i, content in enumerate(body["contents"]):
            if content.get("role") not in ("user", "model"):
                return _bad(f"Please use a valid role: user, model. (contents[{i}])")
            parts = content.get("parts", [])
            for part in parts:
                call = part.get("functionCall")
                if call is not None and not isinstance(call.get("args", {}), dict):
                    return _bad(f"Invalid value at 'contents[{i}].parts[0].function_call.args' "
                                "(type.googleapis.com/google.protobuf.Struct)")
                response = part.get("functionResponse")
                if response is not None and not isinstance(response.get("response"), dict):
                    return _bad(f"Invalid value at 'contents[{i}].parts[0].function_response."
                                "response' (type.googleapis.com/google.protobuf.Struct)")
            if any(p.get("text") == "" and len(p) == 1 for p in parts):
                return _bad("Unable to submit request because it has an empty text parameter. "
                            "Add a value to the parameter and try again.")
            calls = [p for p in parts if "functionCall" in p]
            responses = [p for p in parts if "functionResponse" in p]
            before = body["contents"][i - 1] if i else None
            called = [p for p in (before or {}).get("parts", []) if "functionCall" in p]
            if responses and not called:
                return _bad("Please ensure that function response turn comes immediately after "
                            "a function call turn.")
            if called and len(responses) != len(called):
                return _bad("Please ensure that the number of function response parts is equal "
                            "to the number of function call parts of the function call turn.")
            if calls and before is not None and before.get("role") != "user":
                return _bad("Please ensure that function call turn comes immediately after a "
                            "user turn or after a function response turn.")
            signed = calls and calls[0].get("thoughtSignature")
            if gemini3 and calls and signed not in self.signatures and signed not in BYPASSES:
                return _bad(MISSING_SIGNATURE)  # the first call of a step carries it
        if body["contents"][-1].get("role") == "model":
            return _bad(MODEL_TURN_LAST)
        return None

    def _check_tools(self, body: dict[str, Any]) -> FakeError | None:
        names: list[str] = []
        for t, tool in enumerate(body.get("tools", [])):
            for d, decl in enumerate(tool.get("functionDeclarations", [])):
                names.append(decl["name"])
                if not FUNCTION_NAME.fullmatch(str(decl["name"])):
                    return _bad(f"* GenerateContentRequest.tools[{t}].function_declarations[{d}]"
                                ".name: Invalid function name. Must start with a letter or an "
                                "underscore. Must be alphameric (a-z, A-Z, 0-9), underscores "
                                "(_), dots (.), colons (:) or dashes (-), with a maximum length "
                                "of 128.")
                where = f"tools[{t}].function_declarations[{d}].parameters"
                refused = _schema_refusal(decl.get("parameters"), where, names=True,
                                          refused_keywords=self.refused_keywords)
                if refused:
                    return refused
        config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
        for name in config.get("allowedFunctionNames", []):
            if name not in names:
                return _bad(f"allowed_function_names contains an undeclared function: {name}")
        return None

    def _check_output(self, body: dict[str, Any], gemini3: bool) -> FakeError | None:
        config = body.get("generationConfig") or {}
        if "responseSchema" in config and "responseJsonSchema" in config:
            return _bad("response_schema and response_json_schema cannot both be set")
        refused = _schema_refusal(config.get("responseSchema"), "generation_config.response_schema",
                                  refused_keywords=self.refused_keywords)
        if refused:
            return refused
        declares = any(t.get("functionDeclarations") for t in body.get("tools", []))
        if config.get("responseMimeType") == "application/json" and declares and not gemini3:
            return _bad(MIME_WITH_TOOLS)
        return None

    # -- replies -------------------------------------------------------------
    def _signature(self) -> str:
        signature = f"c2lnbmF0dXJl{next(self._ids):04d}"
        self.signatures.add(signature)
        return signature

    def _call_parts(self, reply: FakeReply, gemini3: bool) -> list[dict[str, Any]]:
        parts = []
        for i, call in enumerate(reply.tool_calls):
            fc: dict[str, Any] = {"name": call.name, "args": call.arguments}
            if gemini3:
                fc["id"] = call.id or f"fc-{next(self._ids)}"
            part: dict[str, Any] = {"functionCall": fc}
            if gemini3 and i == 0:  # the signature rides on the first call of a step
                part["thoughtSignature"] = self._signature()
            parts.append(part)
        return parts

    def _usage(self, reply: FakeReply) -> dict[str, int]:
        if reply.extra.get("no_usage"):  # a reply without usageMetadata
            return {}
        return {"promptTokenCount": reply.usage[0], "candidatesTokenCount": reply.usage[1],
                "totalTokenCount": sum(reply.usage)}

    def _finish(self, reply: FakeReply) -> str:
        if reply.extra.get("no_finish"):  # a stream that ends without its finishReason
            return ""
        return str(reply.extra.get("finish") or reply.finish_reason or "STOP")

    def _thoughts(self, reply: FakeReply, body: Any) -> bool:
        thinking = ((body.get("generationConfig") or {}).get("thinkingConfig") or {})
        return bool(reply.thinking and thinking.get("includeThoughts"))

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        if reply.extra.get("block_reason"):
            return self._blocked(reply)
        parts: list[dict[str, Any]] = []
        if self._thoughts(reply, body):
            parts.append({"text": reply.thinking, "thought": True})
        if reply.text:
            parts.append({"text": reply.text})
        parts.extend(self._call_parts(reply, self._current_model.startswith("gemini-3")))
        out = self._response(parts, self._finish(reply), self._usage(reply))
        self._add_logprobs(out, reply, body, fake_tokens(reply.text))
        return out

    def _add_logprobs(self, response: dict[str, Any], reply: FakeReply, body: Any,
                      tokens: list[str]) -> None:
        """The candidate's ``avgLogprobs`` (any text) and, when the request set
        ``responseLogprobs``, its ``logprobsResult`` for ``tokens``."""
        if not tokens:
            return
        chosen_logprobs: Mapping[str, float] = reply.extra.get("token_logprobs", {})
        logprobs = [float(chosen_logprobs.get(t, DEFAULT_LOGPROB)) for t in tokens]
        candidate = response["candidates"][0]
        candidate["avgLogprobs"] = sum(logprobs) / len(logprobs)
        config = body.get("generationConfig") or {}
        if not config.get("responseLogprobs"):
            return
        top = int(config.get("logprobs") or 0)

        def entry(token: str, logprob: float) -> dict[str, Any]:
            return {"token": token, "tokenId": sum(token.encode()) % 256_000,
                    "logProbability": logprob}

        candidate["logprobsResult"] = {
            "topCandidates": [{"candidates": [entry(t, p)] + [
                entry(f"alt{i}", p - 1 - i) for i in range(max(0, top - 1))]}
                for t, p in zip(tokens, logprobs, strict=True)],
            "chosenCandidates": [entry(t, p) for t, p in zip(tokens, logprobs, strict=True)],
        }

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        if reply.extra.get("block_reason"):
            return [sse(self._blocked(reply))]
        frames = [sse(event) for event in self._events(reply, body)]
        if reply.extra.get("error") is not None:
            at = int(reply.extra.get("error_after", 1))
            error = {"error": reply.extra["error"]}
            frames = [*frames[:at], orjson.dumps(error, option=orjson.OPT_INDENT_2) + b"\n"
                      if reply.extra.get("bare_error") else sse(error)]
        return frames

    def _events(self, reply: FakeReply, body: Any) -> Iterator[dict[str, Any]]:
        gemini3 = self._current_model.startswith("gemini-3")
        groups: list[list[dict[str, Any]]] = []
        if self._thoughts(reply, body):
            groups.extend([{"text": p, "thought": True}] for p in pieces(reply.thinking, 40))
        asked = ((body.get("generationConfig") or {}).get("responseLogprobs"))
        if reply.text:  # an event carries whole tokens when they were asked for
            groups.extend([{"text": p}] for p in (
                _token_pieces(reply.text, reply.chunk_size) if asked
                else pieces(reply.text, reply.chunk_size)))
        if reply.tool_calls:
            groups.append(self._call_parts(reply, gemini3))
        groups = groups or [[{"text": ""}]]
        usage = self._usage(reply)
        for i, parts in enumerate(groups):
            last = i == len(groups) - 1
            event = self._response(parts, self._finish(reply) if last else None,
                                   usage if last or not usage else {
                                       **usage, "candidatesTokenCount": i + 1})
            text = "".join(p["text"] for p in parts if "text" in p and not p.get("thought"))
            self._add_logprobs(event, reply, body, fake_tokens(text))
            yield event

    def _response(self, parts: list[dict[str, Any]], finish: str | None,
                  usage: dict[str, int]) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        out = {"candidates": [candidate], "usageMetadata": usage,
               "modelVersion": self._current_model, "responseId": "resp-1"}
        if not usage:
            del out["usageMetadata"]
        return out

    def _blocked(self, reply: FakeReply) -> dict[str, Any]:
        return {"promptFeedback": {"blockReason": reply.extra["block_reason"]},
                "usageMetadata": {"promptTokenCount": reply.usage[0], "totalTokenCount":
                                  reply.usage[0]}}

    @property
    def _current_model(self) -> str:
        """The model of the request being answered."""
        return self.rendering_model or self._model(self.requests[-1].path)

    # -- request inspectors (for tests) --------------------------------------
    @staticmethod
    def tool_names(body: Any) -> list[str]:
        """Names of the functions the request declares."""
        return [d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]

    @staticmethod
    def forced_tool(body: Any) -> str | None:
        """The function the request forces (``"*"`` for any), or ``None``."""
        config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
        if config.get("mode") != "ANY":
            return None
        names = config.get("allowedFunctionNames") or []
        return names[0] if len(names) == 1 else "*"

    @staticmethod
    def request_text(body: Any) -> str:
        """All text of the request (system instruction, parts, function responses)."""
        texts = [p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", [])]
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                if "text" in part:
                    texts.append(part["text"])
                elif "functionResponse" in part:
                    texts.append(str(part["functionResponse"].get("response")))
        return "\n".join(texts)

    @staticmethod
    def has_native_output(body: Any) -> bool:
        """Whether the request asks for JSON output."""
        return (body.get("generationConfig") or {}).get("responseMimeType") == "application/json"

    @staticmethod
    def rate_limited(retry_after: float = 0) -> FakeError:
        """A 429 RESOURCE_EXHAUSTED with ``google.rpc.RetryInfo``."""
        return gemini_error(429, "You exceeded your current quota, please check your plan and "
                            "billing details.", [
                                {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                                 "violations": [{"quotaMetric": "generate_content_requests"}]},
                                {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                 "retryDelay": f"{retry_after:g}s"}])


def _token_pieces(text: str, size: int | None) -> list[str]:
    """``text`` in fragments of whole ``fake_tokens``, each about ``size``
    characters (a token longer than ``size`` alone)."""
    out: list[str] = []
    for token in fake_tokens(text):
        if out and (not size or len(out[-1]) + len(token) <= size):
            out[-1] += token
        else:
            out.append(token)
    return out or [text]


_OPAQUE = frozenset({"args", "response", "parametersJsonSchema", "responseJsonSchema",
                     "example", "default", "enum"})
"""Fields whose value is user data or JSON Schema, not proto messages."""


def camel_keys(value: Any) -> Any:
    """``value`` with proto field names in lowerCamelCase (``include_thoughts``
    -> ``includeThoughts``), leaving user data (function args and responses,
    JSON Schemas, property names) as it is."""
    if isinstance(value, list):
        return [camel_keys(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _camel(key)
        if name in _OPAQUE:
            out[name] = item
        elif name == "properties" and isinstance(item, dict):
            out[name] = {k: camel_keys(v) for k, v in item.items()}
        else:
            out[name] = camel_keys(item)
    return out


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest) if rest else key


def _schema_refusal(schema: Any, where: str, names: bool = False,
                    refused_keywords: frozenset[str] = frozenset()) -> FakeError | None:
    """The 400 the API gives for a ``Schema`` with unknown fields or an empty OBJECT."""
    if schema is None:
        return None
    unknown = sorted(_unknown_fields(schema))
    if unknown:
        return _bad("\n".join(f"Invalid JSON payload received. Unknown name \"{name}\" at "
                              f"'{where}': Cannot find field." for name in unknown))
    problem = _subset_problem(schema, where, names, refused_keywords)
    return _bad(problem) if problem else None


def _subset_problem(node: Any, where: str, names: bool,
                    refused_keywords: frozenset[str] = frozenset()) -> str | None:
    """The first node, at any depth, that the ``Schema`` proto refuses: an
    OBJECT without properties, an ARRAY without ``items`` (both worded as the
    API words them, e.g. litellm#25718), a node without a type (the Schema's
    ``type`` is required; wording unconfirmed), and with ``names`` (function
    parameters) a property name off ``PARAMETER_NAME``; a union node with any
    field beside ``anyOf`` (``nullable``, ``description``: issue 32; the exact
    wording unconfirmed); and any of ``refused_keywords`` (a model version
    whose validator refuses a keyword the documented subset lists)."""
    if not isinstance(node, dict):
        return None
    if "anyOf" in node and len(node) > 1:  # issue 32: nullable or a description beside it
        beside = ", ".join(sorted(k for k in node if k != "anyOf"))
        return (f"* GenerateContentRequest.{where}.any_of: when any_of is set it must be the "
                f"only field set; found {beside}")
    if refused_keywords and (bad := sorted(refused_keywords & set(node))):
        return (f"Invalid JSON payload received. Unknown name \"{bad[0]}\" at '{where}': "
                "Cannot find field.")
    if isinstance(node.get("type"), list):
        return (f"Invalid JSON payload received. Unknown name \"type\" at '{where}': Proto "
                "field is not repeating, cannot start list.")
    kind = str(node.get("type", "")).upper()
    if not kind and "anyOf" not in node:
        return f"* GenerateContentRequest.{where}.type: must be specified"
    for name in node.get("properties") or {} if names else ():
        if not PARAMETER_NAME.fullmatch(name):
            return (f"* GenerateContentRequest.{where}.properties[{name}]: Invalid parameter "
                    "name. Must start with a letter or an underscore and contain only a-z, "
                    "A-Z, 0-9 or underscores, with a maximum length of 64.")
    fmt = node.get("format")
    if fmt is not None and kind in _FORMATS and fmt not in _FORMATS[kind]:
        allowed = " and ".join(f"'{f}'" for f in sorted(_FORMATS[kind]))
        return (f"* GenerateContentRequest.{where}.format: only {allowed} are supported for "
                f"{kind} type")
    if kind == "OBJECT" and not node.get("properties"):
        return f"* GenerateContentRequest.{where}.properties: should be non-empty for OBJECT type"
    if kind == "ARRAY" and not node.get("items"):
        return f"* GenerateContentRequest.{where}.items: missing field."
    subs = [(f"{where}.properties[{k}]", v) for k, v in (node.get("properties") or {}).items()]
    subs += [(f"{where}.any_of[{i}]", v) for i, v in enumerate(node.get("anyOf") or [])]
    if "items" in node:
        subs.append((f"{where}.items", node["items"]))
    for path, sub in subs:
        if problem := _subset_problem(sub, path, names, refused_keywords):
            return problem
    return None


def _unknown_fields(node: Any) -> set[str]:
    if not isinstance(node, dict):
        return set()
    found = {k for k in node if k not in _SCHEMA_FIELDS}
    for key in ("items",):
        found |= _unknown_fields(node.get(key))
    for value in (node.get("properties") or {}).values():
        found |= _unknown_fields(value)
    for value in node.get("anyOf") or []:
        found |= _unknown_fields(value)
    return found
