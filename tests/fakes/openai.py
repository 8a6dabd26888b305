"""A fake OpenAI chat-completions API (``POST /v1/chat/completions``) on
127.0.0.1, and the base of the other OpenAI-style fakes (DeepSeek, DashScope,
GLM, MiniMax).

Speaks shared/providers.md §1: whole ``chat.completion`` replies, or SSE
``chat.completion.chunk`` frames (role chunk, content/refusal/tool-call
deltas keyed by ``index`` — first fragment with id/type/name and empty
arguments, then argument pieces — a finish chunk, a ``choices: []`` usage
chunk when ``stream_options.include_usage`` is set, ``data: [DONE]``). Errors
use ``{"error": {"message", "type", "param", "code"}}``.

Refuses (400 ``invalid_request_error``) what the real API refuses: a
``tool`` message not answering a preceding ``tool_calls`` message, an
assistant ``tool_calls`` turn not answered for every id, non-string
arguments, tool names off ``^[a-zA-Z0-9_-]{1,64}$``, ``tool_choice`` or
``parallel_tool_calls`` without tools, a ``tool_choice`` naming an unknown
function, JSON mode without the word "json" in the messages, a
``json_schema`` name off the pattern, a ``strict`` schema that is not
strict (root object, ``additionalProperties: false``, every property
required, a type on every schema, no keyword strict mode forbids such as
``oneOf``), and image/file content parts off the vendor's rules (class
attributes: ``image_url_forms``, ``image_types``, ``max_image_bytes``,
``file_parts``, PDF size and pages, request size; ``content_parts=False``
takes string content only). Options make it refuse json_schema (models without structured
outputs) or tools, and check the API key (401).

``FakeReply.extra`` keys: ``refusal`` (text), ``arguments_as_object`` (tool
arguments as JSON objects, as some compatible servers send),
``omit_tool_ids`` (no ``id``/``type``), ``stream_error`` (an error object sent
as a data line after ``error_after`` frames, then the connection ends),
``bare_error`` (an object sent as is as a data line after ``error_after``
frames, then ``[DONE]``: older vLLM's ``{"object": "error", "message", "type",
"param", "code"}``), ``error_field`` (an object sent on an ``error:`` line, no
SSE field, after ``error_after`` frames, then ``[DONE]``: llama.cpp's server
through 2025),
``cached_tokens``, ``reasoning_tokens``, ``no_usage`` (no usage anywhere: a
server that ignores ``stream_options.include_usage``), ``crlf`` (CRLF line endings),
``split_writes`` (each frame written in two halves, cutting UTF-8 characters),
``same_index`` (every streamed tool call at index 0, told apart by its id, as
vLLM/GLM-style servers send parallel calls), ``cumulative_arguments`` (each
streamed argument fragment repeats the text so far, as DeepSeek/Qianfan in
cumulative mode send it), ``split_names`` (a streamed call's name in two
fragments, as Gemini's and LM Studio's OpenAI-compatible streams send it),
``no_finish`` (the finish chunk carries no ``finish_reason``; ``[DONE]`` still
comes), ``inline_thinking`` (``"tags"``: the thinking goes in ``content`` as
``<think>\n…\n</think>\n\n`` before the text, as a generic server without a reasoning parser sends a
reasoning model's reply, vLLM without ``--reasoning-parser`` or llama.cpp
``--reasoning-format none``; ``"opened"``: the same without ``<think>``, which
the chat template put in the prompt: DeepSeek-R1, QwQ).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from aiohttp import web

from . import media
from .base import DEFAULT_LOGPROB, FakeCall, FakeError, FakeReply, FakeServer, fake_tokens, pieces
from .limits import LimitState, go_duration
from .openai_batch import BatchFakeMixin

__all__ = ["OpenAIFake", "OpenAIStyleFake", "openai_error", "strict_schema_problem"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
JSON_WORD = ("'messages' must contain the word 'json' in some form, to use 'response_format' "
             "of type 'json_object'.")
NO_JSON_SCHEMA = ("Invalid parameter: 'response_format' of type 'json_schema' is not supported "
                  "with this model. Learn more about supported models at the Structured Outputs "
                  "guide: https://platform.openai.com/docs/guides/structured-outputs")


def openai_error(status: int, message: str, kind: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None,
                 headers: Mapping[str, str] | None = None) -> FakeError:
    """A scripted error in OpenAI's envelope."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return FakeError(status, body, headers or {})


_NOT_PERMITTED = ("oneOf", "not", "if", "then", "else", "prefixItems", "patternProperties",
                  "discriminator")
"""Keywords a strict schema may not hold (C15 'oneOf'; the rest per
platform.openai.com/docs/guides/structured-outputs#supported-schemas). A
``default`` (C14) is left alone: Azure refuses it, OpenAI today accepts it
(openai/openai-agents-python#4390), and the SDK's own strict schemas keep it."""


def strict_schema_problem(schema: Any, path: str = "()") -> str | None:
    """Why ``schema`` breaks OpenAI's strict rules, or ``None``."""
    if not isinstance(schema, dict):
        return None
    if path == "()" and schema.get("type") != "object":
        return "In context=(), schema must be a JSON Schema of 'type: \"object\"'"
    for word in _NOT_PERMITTED:
        if word in schema:
            return f"In context={path}, '{word}' is not permitted."
    if path != "()" and not ({"type", "anyOf", "enum", "const", "$ref"} & schema.keys()):
        return f"In context={path}, schema must have a 'type' key."
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            return (f"In context={path}, 'additionalProperties' is required to be supplied and "
                    "to be false.")
        props = schema.get("properties") or {}
        missing = [k for k in props if k not in (schema.get("required") or [])]
        if missing:
            return (f"In context={path}, 'required' is required to be supplied and to be an "
                    f"array including every key in properties. Missing '{missing[0]}'.")
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (schema.get(key) or {}).items():
            if problem := strict_schema_problem(sub, f"('{key}', '{name}')"):
                return problem
    for key in ("items", "anyOf"):
        subs = schema.get(key)
        for sub in subs if isinstance(subs, list) else [subs] if subs else []:
            if problem := strict_schema_problem(sub, f"('{key}',)"):
                return problem
    return None


class OpenAIStyleFake(FakeServer):
    """Shared rendering and checks of OpenAI-style fakes; subclasses set the
    routes and override the hooks (``validate``, ``thinking_on``,
    ``error_body``, ``usage_on_finish``, ``whole_tool_calls``...)."""

    routes: Sequence[str] = ("/v1/chat/completions",)
    vendor = "openai"
    usage_on_finish = False  # usage rides on the finish chunk (DeepSeek, GLM)
    whole_tool_calls = False  # each call in one delta (GLM without tool_stream)
    reasoning_field = "reasoning_content"

    def __init__(self, *, api_key: str | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        """When set, requests must carry ``Authorization: Bearer <api_key>``."""
        self.n_ctx: int | None = None
        """A llama.cpp-style server's context window (tokens, 4 characters each):
        a longer prompt is cut silently to it (context shift), its
        ``usage.prompt_tokens`` the window's; ``cut_prompts`` counts them."""
        self.truncated_flag = False
        """With ``n_ctx``: a cut reply also says ``"truncated": true`` (llama.cpp)."""
        self.cut_prompts = 0
        self._cut: int | None = None

    # -- errors ----------------------------------------------------------------
    def bad(self, message: str, param: str | None = None, code: str | None = None) -> FakeError:
        """A 400 in this vendor's envelope."""
        return openai_error(400, message, param=param, code=code)

    def limit_headers(self, state: LimitState) -> dict[str, str]:
        """``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (resets as Go durations)."""
        headers: dict[str, str] = {}
        for dim, limit, remaining, reset in (
                ("requests", state.requests_limit, state.requests_remaining, state.requests_reset),
                ("tokens", state.tokens_limit, state.tokens_remaining, state.tokens_reset)):
            if limit is not None:
                headers[f"x-ratelimit-limit-{dim}"] = str(limit)
                headers[f"x-ratelimit-remaining-{dim}"] = str(remaining)
                headers[f"x-ratelimit-reset-{dim}"] = go_duration(reset)
        return headers

    def rate_limit_error(self, state: LimitState) -> FakeError:
        """OpenAI's 429 ``rate_limit_exceeded`` with ``retry-after`` (whole seconds)."""
        return openai_error(
            429, f"Rate limit reached for requests. Please try again in "
            f"{go_duration(state.retry_after)}.", "requests", code="rate_limit_exceeded",
            headers={"retry-after": str(math.ceil(state.retry_after))})

    def unauthorized(self) -> FakeError:
        """The vendor's answer to a wrong key."""
        return openai_error(401, "Incorrect API key provided: sk-***. You can find your API key "
                            "at https://platform.openai.com/account/api-keys.",
                            code="invalid_api_key")

    def key_error(self, key: str) -> FakeError:
        return openai_error(401, f"Incorrect API key provided: {key}. Keys start with "
                            f"{key[:12]}...", code="invalid_api_key")

    # -- checks ------------------------------------------------------------------
    def check(self, request: web.Request, body: Any) -> FakeError | None:
        if self.api_key is not None and request.headers.get(
                "Authorization") != f"Bearer {self.api_key}":
            return self.unauthorized()
        if not isinstance(body, dict):
            return self.bad("We could not parse the JSON body of your request.")
        return self.validate(body)

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        """The vendor's request checks, first failure wins."""
        return (self.check_messages(body) or self.check_tools(body)
                or self.check_tool_choice(body) or self.check_response_format(body)
                or self.check_logprobs(body))

    def check_logprobs(self, body: dict[str, Any]) -> FakeError | None:
        """OpenAI's rules: ``top_logprobs`` an integer 0-20, and only with
        ``logprobs: true``."""
        top = body.get("top_logprobs")
        if top is None:
            return None
        if not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= 20:
            return self.bad(f"Invalid 'top_logprobs': expected an integer between 0 and 20, "
                            f"got {top!r}.", "top_logprobs")
        if body.get("logprobs") is not True:
            return self.bad("Invalid value for 'top_logprobs': 'logprobs' must be set to true "
                            "when 'top_logprobs' is set.", "top_logprobs")
        return None

    # what a vendor takes in content parts (OpenAI's: images-vision and pdf-files guides)
    content_parts = True
    """``False``: string content only (DeepSeek)."""
    image_url_forms: tuple[str, ...] = ("data_url", "http")
    """How an image may be given in ``image_url.url`` (GLM: ``"base64"``, the bare text)."""
    image_types: tuple[str, ...] = ("image/png", "image/jpeg", "image/gif", "image/webp")
    max_image_bytes: int | None = None
    file_parts = True
    """Whether ``{"type": "file"}`` parts (PDFs as ``file_data``) are taken."""
    max_file_bytes = 32 * 1024 * 1024
    max_pdf_pages = 100
    max_request_bytes: int | None = 50 * 1024 * 1024

    def media_error(self, message: str, param: str | None = None,
                    code: str | None = "invalid_value") -> FakeError:
        """The refusal of an image or file part (a 400 in this vendor's envelope)."""
        return self.bad(message, param, code)

    def check_media(self, body: dict[str, Any]) -> FakeError | None:
        """Image and file content parts: their shapes, media types, sizes."""
        if self.max_request_bytes is not None and len(
                orjson.dumps(body)) > self.max_request_bytes:
            return self.media_error(f"Request too large: the total payload size exceeds "
                                    f"{self.max_request_bytes} bytes.", None, "request_too_large")
        pages = 0
        for i, m in enumerate(body["messages"]):
            content = m.get("content")
            for j, part in enumerate(content if isinstance(content, list) else ()):
                kind = part.get("type") if isinstance(part, dict) else None
                where = f"messages[{i}].content[{j}]"
                if kind != "text" and not self.content_parts:
                    return self.media_error(
                        f"Failed to deserialize the JSON body into the target type: {where}: "
                        f"unknown variant `{kind}`, expected `text`", None, None)
                if kind == "image_url":
                    if m.get("role") != "user":
                        return self.media_error(f"Invalid '{where}.type': image content parts "
                                                "are only allowed in user messages.", where)
                    problem = self._image_problem((part.get("image_url") or {}).get("url"),
                                                  f"{where}.image_url.url")
                    if problem:
                        return problem
                elif kind == "file":
                    problem, n = self._file_problem(part.get("file") or {}, f"{where}.file")
                    if problem:
                        return problem
                    pages += n
                elif kind != "text":
                    return self.media_error(f"Invalid value: '{kind}'. Supported values are: "
                                            "'text', 'image_url', 'input_audio', 'refusal', "
                                            "'audio', and 'file'.", f"{where}.type")
        if pages > self.max_pdf_pages:
            return self.media_error(f"Invalid input: the PDF files hold {pages} pages; at most "
                                    f"{self.max_pdf_pages} pages may be provided.", None)
        return None

    def _image_problem(self, url: Any, param: str) -> FakeError | None:
        if not isinstance(url, str) or not url:
            return self.media_error(f"Missing required parameter: '{param}'.", param)
        if url.startswith(("http://", "https://")) and "http" in self.image_url_forms:
            return None
        parsed = media.parse_data_url(url)
        if parsed is not None and "data_url" in self.image_url_forms:
            declared, data = parsed
        elif "base64" in self.image_url_forms and (data := media.decode(url)) is not None:
            declared = media.kind_of(data) or "unknown"
        else:
            forms = " or ".join(self.image_url_forms)
            return self.media_error(f"Invalid image URL: '{param}'. Expected {forms}, got "
                                    f"{url[:30]!r}.", param)
        if declared not in self.image_types or media.kind_of(data) != declared:
            names = [t.split("/")[1] for t in self.image_types]
            return self.media_error("You uploaded an unsupported image. Please make sure your "
                                    f"image has of one the following formats: {names}.", None,
                                    "invalid_image_format")
        if self.max_image_bytes is not None and len(data) > self.max_image_bytes:
            return self.media_error(f"Exceeded limit on max bytes per data-uri item : "
                                    f"{self.max_image_bytes}", param, "image_too_large")
        return None

    def _file_problem(self, file: dict[str, Any], param: str) -> tuple[FakeError | None, int]:
        if not self.file_parts:
            return self.media_error("Invalid value: 'file'. Supported values are: 'text' and "
                                    "'image_url'.", param.rsplit(".", 1)[0] + ".type"), 0
        if "file_data" in file and not file.get("filename"):
            return self.media_error(f"Missing required parameter: '{param}.filename'.",
                                    f"{param}.filename"), 0
        parsed = media.parse_data_url(file.get("file_data"))
        if parsed is None or parsed[0] != "application/pdf" or media.kind_of(
                parsed[1]) != "application/pdf":
            return self.media_error(
                f"Invalid file data: '{param}.file_data'. Expected a base64-encoded data URL with "
                "an application/pdf MIME type (e.g. 'data:application/pdf;base64,SGVsbG8='), "
                f"but got {str(file.get('file_data'))[:30]!r}.", f"{param}.file_data"), 0
        if len(parsed[1]) > self.max_file_bytes:
            return self.media_error(f"Invalid file data: '{param}.file_data'. The file exceeds "
                                    f"{self.max_file_bytes} bytes.", f"{param}.file_data"), 0
        return None, media.pdf_pages(parsed[1])

    def check_messages(self, body: dict[str, Any]) -> FakeError | None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return self.bad("[] is too short - 'messages'", "messages")
        pending: set[str] = set()
        answerable: set[str] = set()
        for i, m in enumerate(messages):
            role = m.get("role")
            if role not in ("system", "developer", "user", "assistant", "tool"):
                return self.bad(f"Invalid value: '{role}'. Supported values are: 'system', "
                                "'assistant', 'user', 'function', 'tool', and 'developer'.",
                                f"messages[{i}].role")
            if pending and role != "tool":
                return self.bad("An assistant message with 'tool_calls' must be followed by "
                                "tool messages responding to each 'tool_call_id'. The following "
                                f"tool_call_ids did not have response messages: "
                                f"{', '.join(sorted(pending))}", "messages")
            if role == "tool":
                too_long = self.id_problem(m.get("tool_call_id"), f"messages[{i}].tool_call_id")
                if too_long:
                    return too_long
                if m.get("tool_call_id") not in answerable:
                    return self.bad("Invalid parameter: messages with role 'tool' must be a "
                                    "response to a preceeding message with 'tool_calls'.",
                                    f"messages.[{i}].role")
                pending.discard(m["tool_call_id"])
                continue
            answerable = set()
            for j, call in enumerate(m.get("tool_calls") or ()):
                if not isinstance(call.get("function", {}).get("arguments"), str):
                    return self.bad(f"Invalid type for 'messages[{i}].tool_calls[{j}].function."
                                    "arguments': expected a string, but got an object instead.",
                                    f"messages[{i}].tool_calls[{j}].function.arguments")
                too_long = self.id_problem(call.get("id"), f"messages[{i}].tool_calls[{j}].id")
                if too_long:
                    return too_long
                answerable.add(call.get("id"))
            pending = set(answerable)
        if pending:
            return self.bad("An assistant message with 'tool_calls' must be followed by tool "
                            "messages responding to each 'tool_call_id'.", "messages")
        return self.check_media(body)

    max_call_id = 40
    """The longest tool-call id taken (OpenAI: 400 ``string_above_max_length``)."""

    def id_problem(self, call_id: Any, param: str) -> FakeError | None:
        """The 400 for a tool-call id over ``max_call_id`` characters, if it is."""
        if isinstance(call_id, str) and len(call_id) > self.max_call_id:
            return self.bad(f"Invalid '{param}': string too long. Expected a string with maximum "
                            f"length {self.max_call_id}, but got a string with length "
                            f"{len(call_id)} instead.", param, "string_above_max_length")
        return None

    def check_tools(self, body: dict[str, Any]) -> FakeError | None:
        tools = body.get("tools")
        if not tools:
            if "parallel_tool_calls" in body:
                return self.bad("Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' "
                                "is only allowed when 'tools' are specified.",
                                "parallel_tool_calls")
            return None
        for i, tool in enumerate(tools):
            fn = tool.get("function") or {}
            if not _NAME.match(str(fn.get("name", ""))):
                return self.bad(f"Invalid 'tools[{i}].function.name': string does not match "
                                "pattern. Expected a string that matches the pattern "
                                "'^[a-zA-Z0-9_-]+$'.", f"tools[{i}].function.name")
            if fn.get("strict") and (problem := strict_schema_problem(fn.get("parameters"))):
                return self.bad(f"Invalid schema for function '{fn['name']}': {problem}",
                                f"tools[{i}].function.parameters", "invalid_function_parameters")
        return None

    def check_tool_choice(self, body: dict[str, Any]) -> FakeError | None:
        choice = body.get("tool_choice")
        if choice is None:
            return None
        if not body.get("tools"):
            return self.bad("Invalid value for 'tool_choice': 'tool_choice' is only allowed "
                            "when 'tools' are specified.", "tool_choice")
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            names = {t["function"]["name"] for t in body["tools"]}
            if name not in names:
                return self.bad(f"Invalid value for 'tool_choice': function '{name}' not found "
                                "in 'tools'.", "tool_choice")
        elif choice not in ("auto", "none", "required"):
            return self.bad(f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', "
                            "and 'required'.", "tool_choice")
        return None

    def check_response_format(self, body: dict[str, Any]) -> FakeError | None:
        rf = body.get("response_format")
        if not rf:
            return None
        if rf.get("type") == "json_object" and "json" not in orjson.dumps(
                body["messages"]).decode().lower():
            return self.bad(JSON_WORD, "messages")
        if rf.get("type") == "json_schema":
            spec = rf.get("json_schema") or {}
            if not _NAME.match(str(spec.get("name", ""))):
                return self.bad("Invalid 'response_format.json_schema.name': string does not "
                                "match pattern. Expected a string that matches the pattern "
                                "'^[a-zA-Z0-9_-]+$'.", "response_format.json_schema.name")
            if spec.get("strict") and (problem := strict_schema_problem(spec.get("schema"))):
                return self.bad(f"Invalid schema for response_format '{spec['name']}': {problem}",
                                "response_format")
        return None

    def thinking_on(self, body: dict[str, Any]) -> bool:
        """Whether the request runs in thinking mode (thinking text is sent only then)."""
        return True

    def whole_calls(self, body: dict[str, Any]) -> bool:
        """Whether tool calls stream whole, in one delta each."""
        return self.whole_tool_calls

    # -- rendering -------------------------------------------------------------
    def finish_of(self, reply: FakeReply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    def cut_to(self, body: Any) -> int | None:
        """The window a prompt longer than ``n_ctx`` (4 characters a token) was
        cut to, else ``None``."""
        if self.n_ctx is None or not isinstance(body, dict):
            return None
        chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        if chars // 4 > self.n_ctx:
            self.cut_prompts += 1
            return self.n_ctx
        return None

    def usage_json(self, reply: FakeReply) -> dict[str, Any] | None:
        if reply.extra.get("no_usage"):  # a server that reports none (ignores include_usage)
            return None
        inp, out = reply.usage
        if self._cut is not None:  # what a server that cut the prompt evaluated
            inp = self._cut
        return {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out,
                "prompt_tokens_details": {"cached_tokens": reply.extra.get("cached_tokens", 0)},
                "completion_tokens_details": {
                    "reasoning_tokens": reply.extra.get("reasoning_tokens", 0)}}

    def call_id(self, index: int, call: FakeCall) -> str:
        return call.id or f"call_{index}_fake"

    def arguments(self, call: FakeCall, reply: FakeReply) -> Any:
        if isinstance(call.arguments, str):
            return call.arguments
        if reply.extra.get("arguments_as_object"):
            return dict(call.arguments)
        return orjson.dumps(dict(call.arguments)).decode()

    def tool_json(self, index: int, call: FakeCall, reply: FakeReply) -> dict[str, Any]:
        out: dict[str, Any] = {"function": {"name": call.name,
                                            "arguments": self.arguments(call, reply)}}
        if not reply.extra.get("omit_tool_ids"):
            out = {"id": self.call_id(index, call), "type": "function", **out}
        return out

    def content_of(self, reply: FakeReply) -> str:
        """The reply's ``content``: its text, after inline thinking (``inline_thinking``)."""
        inline = reply.extra.get("inline_thinking")
        if not inline or not reply.thinking:
            return reply.text
        opening = "" if inline == "opened" else "<think>\n"
        return f"{opening}{reply.thinking}\n</think>\n\n{reply.text}"

    def message_json(self, reply: FakeReply, body: Any) -> dict[str, Any]:
        content = self.content_of(reply)
        message: dict[str, Any] = {"role": "assistant", "content": content or None,
                                   "refusal": reply.extra.get("refusal")}
        inline = content is not reply.text
        if reply.thinking and self.thinking_on(body) and not inline:
            message[self.reasoning_field] = reply.thinking
        if reply.tool_calls:
            message["tool_calls"] = [self.tool_json(i, c, reply)
                                     for i, c in enumerate(reply.tool_calls)]
        return message

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        self._cut = self.cut_to(body)
        out = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1,
               "model": body.get("model"),
               "choices": [{"index": 0, "message": self.message_json(reply, body),
                            "finish_reason": self.finish_of(reply),
                            "logprobs": self.logprobs_json(
                                body, reply, fake_tokens(self.content_of(reply)))}],
               "usage": self.usage_json(reply)}
        if self._cut is not None and self.truncated_flag:
            out["truncated"] = True
        return out

    def logprobs_json(self, body: Any, reply: FakeReply,
                      tokens: list[str]) -> dict[str, Any] | None:
        """``choices[].logprobs`` for ``tokens`` when the request set ``logprobs``
        (OpenAI's chat completions reference: ``{"content": [{"token",
        "logprob", "bytes", "top_logprobs": [...]}], "refusal": null}``), else
        ``null``. A token's logprob is ``extra["token_logprobs"][token]``,
        else ``DEFAULT_LOGPROB``; ``top_logprobs`` lists the token itself
        first, then made-up alternatives, ``top_logprobs`` entries in all."""
        if not body.get("logprobs") or not tokens:
            return None
        chosen: Mapping[str, float] = reply.extra.get("token_logprobs", {})
        top = int(body.get("top_logprobs") or 0)

        def entry(token: str, logprob: float) -> dict[str, Any]:
            return {"token": token, "logprob": logprob, "bytes": list(token.encode())}

        content = []
        for token in tokens:
            logprob = float(chosen.get(token, DEFAULT_LOGPROB))
            alternatives = [entry(token, logprob)] + [entry(f"alt{i}", logprob - 1 - i)
                                                      for i in range(max(0, top - 1))]
            content.append({**entry(token, logprob), "top_logprobs": alternatives[:top]})
        return {"content": content, "refusal": None}

    def chunk(self, body: Any, delta: dict[str, Any] | None, finish: str | None = None,
              usage: Any = None, choices: bool = True) -> dict[str, Any]:
        frame: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                                 "created": 1, "model": body.get("model")}
        frame["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish,
                             "logprobs": None}] if choices else []
        if usage is not None or (body.get("stream_options") or {}).get("include_usage"):
            frame["usage"] = usage
        return frame

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        """The chunks before the finish chunk."""
        size = reply.chunk_size
        frames = [self.chunk(body, {"role": "assistant", "content": ""})]
        content = self.content_of(reply)
        if reply.thinking and self.thinking_on(body) and content is reply.text:
            frames += [self.chunk(body, {self.reasoning_field: p})
                       for p in pieces(reply.thinking, size)]
        if content and body.get("logprobs"):  # one token per chunk, with its logprob
            for token in fake_tokens(content):
                frame = self.chunk(body, {"content": token})
                frame["choices"][0]["logprobs"] = self.logprobs_json(body, reply, [token])
                frames.append(frame)
        elif content:
            frames += [self.chunk(body, {"content": p}) for p in pieces(content, size)]
        if reply.extra.get("refusal"):
            frames += [self.chunk(body, {"refusal": p})
                       for p in pieces(reply.extra["refusal"], size)]
        for i, call in enumerate(reply.tool_calls):
            whole = self.tool_json(i, call, reply)
            args = whole["function"]["arguments"]
            at = 0 if reply.extra.get("same_index") else i
            if self.whole_calls(body) or not isinstance(args, str):
                frames.append(self.chunk(body, {"tool_calls": [{**whole, "index": at}]}))
                continue
            cut = len(call.name) // 2 if reply.extra.get("split_names") else len(call.name)
            first = {**whole, "index": at, "function": {"name": call.name[:cut],
                                                         "arguments": ""}}
            frames.append(self.chunk(body, {"tool_calls": [first]}))
            if call.name[cut:]:  # the rest of the name, as its own fragment
                frames.append(self.chunk(body, {"tool_calls": [{"index": at, "function": {
                    "name": call.name[cut:], "arguments": ""}}]}))
            parts = [p for p in pieces(args, size) if p]
            if reply.extra.get("cumulative_arguments"):  # each fragment: the text so far
                parts = ["".join(parts[: n + 1]) for n in range(len(parts))]
            frames += [self.chunk(body, {"tool_calls": [{"index": at, "function": {
                "arguments": p}}]}) for p in parts]
        return frames

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        """The finish chunk and the usage chunk."""
        self._cut = self.cut_to(body)
        usage = self.usage_json(reply)
        finish = None if reply.extra.get("no_finish") else self.finish_of(reply)
        if self.usage_on_finish:
            frames = [self.chunk(body, {}, finish, usage=usage)]
        else:
            frames = [self.chunk(body, {}, finish)]
        if self._cut is not None and self.truncated_flag:
            frames[0]["truncated"] = True
        if self.usage_on_finish:
            return frames
        if (body.get("stream_options") or {}).get("include_usage") and usage is not None:
            frames.append(self.chunk(body, None, usage=usage, choices=False))
        return frames

    def preamble(self) -> list[bytes]:
        """Raw bytes sent before the first frame (DeepSeek keep-alives)."""
        return []

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = [b"data: " + orjson.dumps(f) + b"\n\n"
                  for f in self.delta_frames(reply, body) + self.tail_frames(reply, body)]
        if not reply.extra.get("no_done"):  # ik_llama.cpp, text-generation-webui: no [DONE]
            frames.append(b"data: [DONE]\n\n")
        if "stream_error" in reply.extra:
            at = int(reply.extra.get("error_after", 1))
            frames = [*frames[:at],
                      b"data: " + orjson.dumps({"error": reply.extra["stream_error"]}) + b"\n\n"]
        if "bare_error" in reply.extra:  # older vLLM: its ErrorResponse as is, then [DONE]
            at = int(reply.extra.get("error_after", 1))
            frames = [*frames[:at], b"data: " + orjson.dumps(reply.extra["bare_error"]) + b"\n\n",
                      b"data: [DONE]\n\n"]
        if "error_field" in reply.extra:  # llama.cpp through 2025: an ``error:`` line, [DONE]
            at = int(reply.extra.get("error_after", 1))
            frames = [*frames[:at], b"error: " + orjson.dumps(reply.extra["error_field"])
                      + b"\n\n", b"data: [DONE]\n\n"]
        frames = self.preamble() + frames
        if reply.extra.get("crlf"):
            frames = [f.replace(b"\n", b"\r\n") for f in frames]
        if reply.extra.get("split_writes"):
            frames = [half for f in frames for half in (f[: len(f) // 2], f[len(f) // 2:])]
        return frames


class OpenAIFake(BatchFakeMixin, OpenAIStyleFake):
    """OpenAI itself. Options: ``json_schema`` (models with structured
    outputs; ``False`` answers 400 to json_schema), ``tools`` (``False``
    answers 400 to tools), ``api_key``. Has the Batch API (``openai_batch``)."""

    def __init__(self, *, api_key: str | None = None, json_schema: bool = True,
                 tools: bool = True) -> None:
        super().__init__(api_key=api_key)
        self.json_schema = json_schema
        self.tools = tools
        self.init_batches()

    def check_body(self, body: Any) -> FakeError | None:
        """The checks of one batch request's body (the batch carries the key)."""
        if not isinstance(body, dict):
            return self.bad("We could not parse the JSON body of your request.")
        if body.get("stream"):
            return self.bad("Streaming is not supported in the Batch API.", "stream")
        return self.validate(self.canonical(body))

    def base_url(self, root: str) -> str:
        return root + "/v1"

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        if body.get("tools") and not self.tools:
            return self.bad("tools is not supported in this model. For a list of supported "
                            "models, refer to https://platform.openai.com/docs/guides/function-"
                            "calling#models-supporting-function-calling.", "tools")
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema" and not self.json_schema:
            return self.bad(NO_JSON_SCHEMA, "response_format")
        return super().validate(body)
