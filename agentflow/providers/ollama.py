"""Ollama native chat adapter (``POST /api/chat``).

Wire facts (shared/providers.md §6; github.com/ollama/ollama docs/api.md,
api/types.go, server/routes.go):

* No auth locally (cloud: ``Authorization: Bearer``). Roles system / user /
  assistant / tool, system messages anywhere. Tool results are one
  ``{"role":"tool","content","tool_name","tool_call_id"}`` message each
  (the wire has no error flag: an error result's text starts ``Error: ``).
* Tool-call ``arguments`` are JSON **objects** both ways (a string sent back
  is refused); ``id`` is optional and often absent, so ids are synthesised
  (by ``ToolCallAssembler``) when missing.
* There is **no** ``tool_choice`` (unknown fields are ignored): forcing is
  emulated here. ``specific(name)`` sends only that tool plus a closing
  system reminder; ``required`` sends every tool plus a reminder; ``none``
  sends no tools. Profiles list ``specific`` as a mode (emulated) but not
  ``required``.
* Native output: ``format`` is a JSON Schema (grammar-constrained) or
  ``"json"``. The wire takes it beside ``tools``, but the grammar then holds
  the reply to the schema, so the model can never call a tool (an empty
  ``tool_calls``, ollama/ollama#8095): profiles say ``native_output_with_tools
  =False`` and the engine takes the tool path when tools are offered. The
  grammar only constrains sampling: the model never sees the schema, its field
  descriptions included (ollama/ollama#8162; the docs advise putting the schema
  in the prompt too), so a ``format`` schema also goes in a system instruction.
* Streaming is NDJSON (``application/x-ndjson``), one object per line;
  tool calls arrive whole in one line; the last line has ``done: true``,
  ``done_reason`` (``stop`` for tool calls too) and the token counts. An
  error after the 200 is a line ``{"error": "..."}``; a stream without the
  ``done`` line was cut.
* A model without the tools capability: 400 ``"... does not support tools"``
  -> ``UnsupportedFeatureError("tools")``, so the structured-output engine
  falls back to the prompt strategy.
* A call the server's template parser missed stays in ``content`` (llama3.2
  writes ``{"name": ..., "parameters": ...}``, ollama/ollama#13519): the
  model name's in-band forms (``_markup.MODEL_MARKUPS``) are read as calls.

Vendor extensions sent (outside the ollama SDK's ``ChatRequest``/``Message``;
checked by tests/test_sdk_conformance.py): ``messages[].tool_call_id``,
``tool_calls[].id`` and ``tool_calls[].function.index`` (api/types.go; older
servers ignore them), and ``additionalProperties`` inside tool parameters
(ignored by the server's ``ToolFunctionParameters``).

The request is built in ``_ollama_request``, the reply read in
``_ollama_reply``, errors classified in ``_ollama_errors``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import aiohttp
import orjson

from agentflow.errors import TruncatedStreamError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ModelProfile, ToolSpec
from agentflow.providers._adapter import HttpChatModel, system_reminder
from agentflow.providers._context_cuts import (
    cut_error,
    prompt_estimate,
    silent_cut,
    window_needed,
)
from agentflow.providers._http import (
    HttpClient,
    HttpSettings,
    api_key_from,
    iter_ndjson,
    own_host,
    shared_governor,
)
from agentflow.providers._http_settings import checked_base_url
from agentflow.providers._markup import filter_for, markups_for_model, resolve_markups
from agentflow.providers._ollama_errors import VENDOR, body_error, map_error
from agentflow.providers._ollama_host import DEFAULT_BASE_URL as DEFAULT_BASE_URL
from agentflow.providers._ollama_host import ollama_host
from agentflow.providers._ollama_reply import Reader
from agentflow.providers._ollama_request import offer, wire_messages
from agentflow.providers._openai_wire import SCHEMA_INSTRUCTION, insert_instruction
from agentflow.providers._payload import ReplyGuard
from agentflow.providers._profiles import ProfileRule, match_profile
from agentflow.providers._streams import ndjson_body
from agentflow.ratelimit import model_family

__all__ = ["DEFAULT_PROFILE", "PROFILES", "OllamaChatModel", "create", "map_error"]

CLOUD_URL = "https://ollama.com"
"""Ollama cloud: the only host that receives ``$OLLAMA_API_KEY`` unasked."""
API_KEY_VARIABLES = ("OLLAMA_API_KEY",)
"""Environment variables the API key is read from, in order (``agentflow models`` lists them).
Only Ollama cloud needs one: a local server takes none."""
API_KEY_REQUIRED = False

_DEFAULT = ModelProfile(tool_choice_modes=frozenset({"auto", "none", "specific"}),
                        native_output="json_schema", native_output_with_tools=False,
                        context_window=4096)
"""Ollama's window is the server's ``num_ctx``, 4096 tokens unless set
(docs.ollama.com/faq, "How can I specify the context window size?"); for a
larger window pass ``num_ctx=`` (or ``profile=`` with its ``context_window``):
it is sent with every request, so the server's window is the one long
documents are chunked for."""
_THINKING = _DEFAULT.with_(supports_thinking=True, thinking_default=True)
_NO_TOOLS = _DEFAULT.with_(supports_tools=False, tool_choice_modes={"auto", "none"})
_IMAGES = {"input_modalities": {"text", "image"}, "image_media_types": {"image/png", "image/jpeg"}}
"""Vision models ("vision" on ollama.com/library): images as base64 in the message's
``images`` (docs/api.md "Chat request (with images)"); no URLs, no documents."""
_VISION = _DEFAULT.with_(**_IMAGES)

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("qwen3-vl*", _THINKING.with_(**_IMAGES), "vision; thinks unless think=false"),
    ProfileRule("qwen2.5vl*", _VISION, "vision"),
    ProfileRule("llama3.2-vision*", _NO_TOOLS.with_(**_IMAGES), "vision; no tools capability"),
    ProfileRule("llama4*", _VISION, "vision"),
    ProfileRule("mistral-small3.[1-9]*", _VISION, "vision"),
    ProfileRule("granite3.2-vision*", _VISION, "vision"),
    ProfileRule("minicpm-v*", _NO_TOOLS.with_(**_IMAGES), "vision; no tools capability"),
    ProfileRule("*llava*", _NO_TOOLS.with_(**_IMAGES), "vision; no tools capability"),
    ProfileRule("moondream*", _NO_TOOLS.with_(**_IMAGES), "vision; no tools capability"),
    ProfileRule("gemma3n*", _NO_TOOLS, "no tools capability; text only in Ollama"),
    ProfileRule("gemma3:270m*", _NO_TOOLS, "no tools capability; text only"),
    ProfileRule("gemma3:1b*", _NO_TOOLS, "no tools capability; text only"),
    ProfileRule("gemma3*", _NO_TOOLS.with_(**_IMAGES), "vision (4b and up); no tools capability"),
    ProfileRule("qwen3*", _THINKING, "thinks unless think=false"),
    ProfileRule("deepseek-r1*", _THINKING, "thinks"),
    ProfileRule("gpt-oss*", _THINKING, "thinks (levels only)"),
    ProfileRule("magistral*", _THINKING, "thinks"),
    ProfileRule("gemma*", _NO_TOOLS, "no tools capability"),
    ProfileRule("llama2*", _NO_TOOLS, "no tools capability"),
    ProfileRule("codellama*", _NO_TOOLS, "no tools capability"),
    ProfileRule("phi*", _NO_TOOLS, "no tools capability"),
)
"""Model-name globs (the name without ``:tag`` handled by the glob's ``*``)
-> profile. Every model gets ``format`` output without tools (the tool path
with them) and emulated ``specific`` forcing; a model missing here that lacks
tools is found at run time (400 "does not support tools")."""
DEFAULT_PROFILE = _DEFAULT
"""The profile of model names no pattern matches: ``format`` output without tools, emulated
forcing."""


class OllamaChatModel(HttpChatModel):
    """A model served by Ollama.

    Args:
        model: e.g. ``"qwen3:8b"``.
        api_key: only for Ollama cloud; defaults to ``$OLLAMA_API_KEY``.
        base_url: server root (cloud: ``https://ollama.com``); default
            ``$OLLAMA_HOST`` as the ollama CLI and SDK read it
            (``_ollama_host``), else ``http://localhost:11434``.
        profile: overrides the ``PROFILES`` entry.
        settings: HTTP timeouts and retries.
        keep_alive: how long the server keeps the model loaded (``"5m"``), if set.
        stream: stream replies (NDJSON) or ask for whole ones.
        num_ctx: the context window (tokens) to ask the server for, sent as
            ``options.num_ctx`` with every request; it becomes the profile's
            ``context_window`` too. Default: the ``context_window`` of a
            ``profile=`` you pass (the window long documents are chunked for is
            then the one the server uses: Ollama silently cuts a prompt longer
            than its ``num_ctx``, keeping its end, ollama/ollama#7043, #8099),
            else none is sent (the server's own, ``OLLAMA_CONTEXT_LENGTH`` or
            4096, which the default profile assumes).
    """

    vendor = VENDOR

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        profile: ModelProfile | None = None,
        settings: HttpSettings | None = None,
        keep_alive: str | None = None,
        stream: bool = True,
        num_ctx: int | None = None,
    ) -> None:
        base_url = checked_base_url(VENDOR, base_url or ollama_host())
        key = api_key_from(api_key, "OLLAMA_API_KEY" if own_host(base_url, CLOUD_URL) else "")
        client = HttpClient(base_url, headers={"authorization": f"Bearer {key}"} if key else {},
                            vendor=VENDOR, error_mapper=map_error, settings=settings,
                            model=model, body_error=body_error,
                            governor=shared_governor(VENDOR, base_url, key, model_family(model),
                                                     settings))
        resolved = profile or match_profile(PROFILES, model, DEFAULT_PROFILE)
        if num_ctx is None and profile is not None:
            num_ctx = profile.context_window
        if num_ctx is not None:
            resolved = resolved.with_(context_window=num_ctx)
        super().__init__(model, client=client, profile=resolved, stream=stream)
        self.keep_alive = keep_alive
        self.num_ctx = num_ctx
        self._markups = resolve_markups(markups_for_model(model))
        """In-band tool-call forms the model may leave in its text when the
        server's template parser misses them (Llama 3.x's JSON call:
        ollama/ollama#13519; ``agentflow.providers._markup.MODEL_MARKUPS``)."""

    def build_request(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
        *,
        stream: bool,
    ) -> tuple[str, dict[str, Any]]:
        """The ``/api/chat`` body, with tool forcing emulated."""
        wire = wire_messages(messages)
        body: dict[str, Any] = {"model": self.model_name, "messages": wire, "stream": stream}
        offered, reminder = offer(tools, options.tool_choice)
        if offered:
            body["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": dict(t.parameters),
            }} for t in offered]
        if reminder:
            wire.append({"role": "system", "content": system_reminder(reminder)})
        fmt = options.response_format
        if fmt is not None and fmt.schema is not None:
            body["format"] = dict(fmt.schema)
            insert_instruction(wire, SCHEMA_INSTRUCTION.format(
                schema=orjson.dumps(body["format"]).decode()))  # the grammar shows it to no one
        elif fmt is not None:
            body["format"] = "json"
        if options.thinking is not None:
            body["think"] = options.thinking
        settings: dict[str, Any] = {}
        if options.max_tokens is not None:
            settings["num_predict"] = options.max_tokens
        if options.temperature is not None:
            settings["temperature"] = options.temperature
        send = self.window(messages, options)[1]
        if send is not None:
            settings["num_ctx"] = send
        if settings:
            body["options"] = settings
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive
        body.update(options.extra)
        return "/api/chat", body

    async def parse_stream(self, response: aiohttp.ClientResponse) -> AsyncIterator[ModelChunk]:
        """Chunks of the NDJSON stream.

        Raises:
            ProviderError: an ``{"error": ...}`` line.
            TruncatedStreamError / ProviderConnectionError: the stream ended
                before the ``done`` line (``partial=True``),
                a line is malformed, or the reply had neither content nor a
                ``done_reason`` (a ``done`` line alone).
        """
        guard = ReplyGuard(VENDOR, stream=True)
        reader = Reader()
        async for line in iter_ndjson(response):
            for chunk in guard.fold(reader.feed, line):
                yield chunk
            if reader.done:
                guard.end()
                return
        raise TruncatedStreamError("the stream ended before the done line", vendor=VENDOR)

    def window(self, messages: Sequence[Msg], options: GenerateOptions
               ) -> tuple[int, int | None, int | None]:
        """``(our count of the prompt's tokens, the num_ctx to send or None, the
        window the server will use)``. ``num_ctx=`` given: it, always. Else the
        window the request needs (``window_needed``: prompt and reply) when it
        is larger than the server's assumed one (the profile's
        ``context_window``, 4096 by default), else none (the server's own)."""
        sent = prompt_estimate(messages)
        if self.num_ctx is not None:
            return sent, self.num_ctx, self.num_ctx
        assumed = self._profile.context_window
        need = window_needed(sent, options.max_tokens)
        if assumed is not None and need > assumed:
            return sent, need, need
        return sent, None, assumed

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Send one request; yield its reply as ``ModelChunk``s (``HttpChatModel.stream``).

        Raises:
            ContextLengthError: the server cut the prompt to its window without
                saying so (``prompt_eval_count`` no more than the window, while we
                sent clearly more: ``_context_cuts``); raised at the ``done`` line,
                before the finish, so the reply is never taken for an answer.
            ProviderError: as ``HttpChatModel.stream``.
        """
        sent, _, window = self.window(messages, options)
        markup = filter_for(self._markups, tools)
        filtering = markup.active  # no filter call per chunk when it looks for nothing
        async for chunk in super().stream(messages, tools, options):
            if chunk.type == "usage" and window is not None and silent_cut(
                    sent, window, chunk.usage.input_tokens):
                raise cut_error(VENDOR, sent, window, chunk.usage.input_tokens)
            if filtering:
                for passed in markup.feed([chunk]):
                    yield passed
            else:
                yield chunk
        if filtering:
            for passed in markup.close():
                yield passed

    def streamed_reply(self, response: aiohttp.ClientResponse) -> bool:
        """An NDJSON stream (``application/x-ndjson``) answering ``stream: false``."""
        return response.content_type == "application/x-ndjson"

    def streamed_body(self, raw: bytes) -> bool:
        """A body of one JSON object a line (NDJSON under another content type)."""
        return ndjson_body(raw)

    def parse_reply(self, data: Any) -> Iterable[ModelChunk]:
        """Chunks of a whole reply (one object with ``done: true``)."""
        yield from Reader().feed(data)


def create(model_name: str, **kwargs: Any) -> OllamaChatModel:
    """Registry factory: ``OllamaChatModel(model_name, **kwargs)``."""
    return OllamaChatModel(model_name, **kwargs)

