"""Sending one request of an OpenAI-style model (``OpenAISending``, the base
of ``agentflow.providers._openai_compat.OpenAICompatibleModel``): the body
built and sent, sent again after a refusal a remedy fixes
(``_openai_remedies``), and the reply read whole or as a stream, whatever
content type a proxy gives it, refused where the server cut the prompt to
its window without saying so (``_context_cuts``).

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, Literal

import aiohttp

from agentflow.errors import AuthenticationError, BadRequestError
from agentflow.media.tokens import request_media_cost
from agentflow.messages import Msg
from agentflow.model import FinishChunk, GenerateOptions, ModelChunk, ToolSpec
from agentflow.providers._context_cuts import cut_error, prompt_estimate, silent_cut
from agentflow.providers._exchange import Exchange
from agentflow.providers._http import HttpClient
from agentflow.providers._http_errors import STREAM_TYPES
from agentflow.providers._markup import AnyMarkup, MarkupFilter, filter_for
from agentflow.providers._openai_chunks import ChunkParser
from agentflow.providers._openai_errors import failed_output
from agentflow.providers._openai_plain import plain_reply
from agentflow.providers._openai_remedies import (
    MAX_REMEDIES,
    apply_remedy,
    remediable,
    remedy_for,
)
from agentflow.providers._openai_reply import OpenAIReplyHooks, failed_generation
from agentflow.providers._openai_request import OpenAIRequestHooks
from agentflow.providers._payload import NOT_PARSED, ReplyGuard
from agentflow.providers._streams import BufferedBody, ndjson_body, sse_body, sse_response
from agentflow.reply import ReplyBuilder, fold_stream

__all__ = ["OpenAISending"]


class OpenAISending(OpenAIRequestHooks, OpenAIReplyHooks):
    """The sending half of ``OpenAICompatibleModel`` (see the module
    docstring); its attributes are the model's, documented there."""

    env_var: ClassVar[str | None]
    chat_path: ClassVar[str]
    _http: HttpClient
    _markups: tuple[AnyMarkup, ...]
    _key_missing: bool
    _remedied: int

    # -- the request ----------------------------------------------------------
    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Send one request and yield its chunks (errors: ``OpenAICompatibleModel``).

        A strict tool the vendor refuses ("Invalid schema for function 'x': ...",
        code ``invalid_function_parameters``: a schema our strict transform kept
        but the vendor's limits refuse — nesting depth, a ``pattern`` it cannot
        compile) is sent again once without ``strict``, and this model sends no
        ``strict`` from then on (C13 kind: never a 400 for a schema that can go
        non-strict). Nothing was yielded before such a refusal.

        A self-hosted server's constrained-decoding engine refusing a schema
        (llama.cpp, vLLM: ``engine_refused``) is about the part of this request
        that carried one (``schema_carrier``): strict tools are sent again
        without ``strict`` as above; otherwise the ``UnsupportedFeatureError``
        names the response format, the forced ``tool_choice`` or the tools, so
        the engine drops that one (Native -> Tool -> Prompt, forcing by reminder).

        An optional field a server refuses as unknown (``OPTIONAL_FIELDS``:
        ``stream_options``, ``parallel_tool_calls``; "Unrecognized request
        argument supplied: stream_options", "Extra inputs are not permitted")
        is sent no more by this model and the request goes again; so is a
        sampling field a reasoning model takes at its default only
        (``DEFAULT_ONLY_FIELDS``: ``temperature``), and a refused token-limit
        field is sent under its other name (``TOKEN_FIELDS``: ``max_tokens``
        / ``max_completion_tokens``, Azure OpenAI's reasoning models and older
        API versions). A refusal of a request built before a concurrent
        request of this model applied a remedy is sent again the new way
        first when it is such a refusal (``remediable``: it may be the one
        remedied, and two users' conversations that both need it both go
        on); any other 400 is raised, never sent twice. At most ``MAX_REMEDIES`` such resends
        per request.

        One async generator per request (``_send``): nothing is built or sent
        before the first iteration.
        """
        return self._send(messages, tools, options)

    def request_deadline(self, body: Mapping[str, Any]) -> float | Literal["settings"] | None:
        """Seconds the request ``body`` may take, all of it (``HttpClient.open``'s
        ``deadline``): ``"settings"``, the model's ``HttpSettings.deadline``.
        A model whose replies take as long as their token budget says
        (the embedded model: ``agentflow.providers.local``) overrides it."""
        return "settings"

    async def _send(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Build the body, send it (again after a remedied refusal, see
        ``stream``) and yield the reply's chunks."""
        markup = filter_for(self._markups, tools)
        started = await self._start(messages, tools, options)
        if isinstance(started, FinishChunk):  # the model's output failed: sample again
            yield started
            return
        exchange, streaming = started
        async with exchange as response:
            source = await self._reply_source(exchange, response, streaming, markup, messages)
            if isinstance(source, list):  # a whole reply: its chunks, read at once
                for chunk in source:
                    yield chunk
                return
            async for chunk in source:
                yield chunk

    async def whole_reply(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions,
        reply: ReplyBuilder,
    ) -> None:
        """Send one request and fold its whole reply into ``reply`` (the
        ``ChatModel`` contract's optional whole-reply path, ``agentflow.model``):
        what folding ``stream``'s chunks would give, errors included. A plain
        reply (``_openai_plain``) is read at once, with no parser, chunk or
        guard; any other (tool calls, reasoning, a stream a proxy forced...)
        through the chunks ``stream`` reads it as. A subclass that reads its
        replies its own way (its own ``stream``, ``read_payload``,
        ``payload_error`` or parser) has ``stream``'s chunks folded."""
        reads = _READS.get(type(self))
        if reads is None:
            reads = _READS[type(self)] = _reads(type(self))
        if reads == "stream":
            await fold_stream(self.stream(messages, tools, options), reply)
            return
        markup = filter_for(self._markups, tools)
        started = await self._start(messages, tools, options)
        if isinstance(started, FinishChunk):
            reply.add(started)
            return
        exchange, streaming = started
        window = self._profile.context_window
        # ``async with exchange``, spelled out: started already, it is ended
        # (``Exchange.end``) with no coroutine for entering or leaving it
        response = exchange.response
        assert response is not None  # (started)
        try:
            # the HTTP layer's parse of a whole body, when it made one (never of a stream)
            data = exchange.parsed
            if (data is not NOT_PARSED and reads == "plain" and not markup.active
                    and self._parser_type is ChunkParser
                    and (plain := plain_reply(data)) is not None):
                if plain.text:
                    reply.add_text(plain.text, plain.logprobs)
                usage = plain.usage
                if usage is not None:
                    if window:
                        self._check_cut(messages, window, usage.input_tokens)
                    reply.usage = usage
                if plain.reason is not None:
                    reply.add(FinishChunk(plain.reason, "", plain.model, plain.reply_id))
            else:
                source = await self._reply_source(exchange, response, streaming, markup,
                                                  messages)
                if isinstance(source, list):
                    for chunk in source:
                        reply.add(chunk)
                else:
                    async for chunk in source:
                        reply.add(chunk)
        except BaseException as exc:
            exchange.end(exc)
            raise
        exchange.end(None)

    async def _start(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> tuple[Exchange, bool] | FinishChunk:
        """The started exchange of the request and whether it asked for a
        stream, after the remedies ``stream`` describes; a ``FinishChunk``
        (``failed_generation``) when the vendor failed the model's output."""
        media = request_media_cost(messages, self._profile.media_tokens)
        for remedies in range(MAX_REMEDIES + 1):
            remedied = self._remedied  # the way this request is built and sent
            body = self._body(messages, tools, options)
            if self._key_missing:
                raise AuthenticationError(
                    f"no API key: pass api_key=... or set {self.env_var}", vendor=self.vendor)
            streaming = body.get("stream") is True
            exchange = self._http.open(self.chat_path, body, raw=self.body_json(body),
                                       whole=not streaming, media=media,
                                       deadline=self.request_deadline(body))
            del body  # the exchange drops it once sent: not kept alive while the reply comes
            try:
                await exchange.start()
                break
            except BadRequestError as exc:
                if failed_output(exc):  # the model's output, not the request: sample again
                    return failed_generation(self.vendor, exc)
                if self._remedied != remedied and remedies < MAX_REMEDIES and remediable(exc):
                    continue  # a concurrent request remedied this model meanwhile: the new way
                # what the refused request carried is read only now (the same body
                # again): a request that is not refused pays nothing for it
                remedy = remedy_for(exc, self._body(messages, tools, options),
                                    remedies < MAX_REMEDIES)
                if remedy is exc:
                    raise
                if isinstance(remedy, BadRequestError):  # (the feature the refusal names)
                    raise remedy from exc
                options = apply_remedy(self, remedy, exc, options)  # or raises exc
        return exchange, streaming

    async def _reply_source(
        self, exchange: Exchange, response: aiohttp.ClientResponse, streaming: bool,
        markup: MarkupFilter, messages: Sequence[Msg],
    ) -> list[ModelChunk] | AsyncIterator[ModelChunk]:
        """The chunks of the reply ``response`` to ``messages``: a list for a
        whole reply (read at once), else an iterator over its stream, whatever
        content type a proxy gives it; their usage checked for a silent cut
        either way (``_checked``, ``_read_stream``'s ``check_usage``: no
        Python frame per chunk)."""
        if sse_response(response) or (streaming and response.content_type in STREAM_TYPES):
            source: Any = response  # a stream, asked for or forced by a proxy
        else:  # (any other type was read whole by the transport's check: parsed)
            data = exchange.parsed  # the HTTP layer's parse of the body, when it made one
            raw = b"" if data is not NOT_PARSED else await response.read()
            if data is not NOT_PARSED or not (sse_body(raw) or ndjson_body(raw)):
                guard = ReplyGuard(self.vendor, stream=False)
                if data is NOT_PARSED:
                    data = guard.load(raw)
                return self._checked(self.whole_chunks(guard, data, markup), messages)
            # events under another content type (text/plain, application/json), or
            # chunks one a line without ``data:`` (xorbitsai/inference#523)
            source = BufferedBody(raw, response)
        window = self._profile.context_window
        return self._read_stream(source, markup,
                                 partial(self._check_cut, messages, window) if window else None)

    def _checked(self, chunks: list[ModelChunk], messages: Sequence[Msg]) -> list[ModelChunk]:
        """``chunks`` (a whole reply's), their usage checked for a silent cut
        (``_check_cut``, when the profile knows the window): one call per reply."""
        window = self._profile.context_window
        if window:
            for chunk in chunks:
                if chunk.type == "usage":
                    self._check_cut(messages, window, chunk.usage.input_tokens)
        return chunks

    def _check_cut(self, messages: Sequence[Msg], window: int, evaluated: int) -> None:
        """Refuse a reply over a prompt the server cut to its ``window`` without
        saying so (a llama.cpp server with context shift: ``_context_cuts``).

        Raises:
            ContextLengthError: ``evaluated`` prompt tokens, no more than the
                window, while we sent clearly more.
        """
        if evaluated and evaluated <= window:  # our count only then: no cost per reply
            sent = prompt_estimate(messages)
            if silent_cut(sent, window, evaluated):
                raise cut_error(self.vendor, sent, window, evaluated)


_READS: dict[type, Literal["plain", "chunks", "stream"]] = {}
"""Per model class, how ``whole_reply`` reads a reply (``_reads``)."""


def _reads(cls: type[OpenAISending]) -> Literal["plain", "chunks", "stream"]:
    """How ``whole_reply`` reads a reply of a model of class ``cls``: ``stream``'s
    chunks folded (a class with its own ``stream``), a plain reply at once and
    any other through the chunks (the stock readers), or every reply through
    the chunks (its own ``read_payload``, ``payload_error`` or ``whole_chunks``)."""
    if cls.stream is not OpenAISending.stream or cls._send is not OpenAISending._send:
        return "stream"
    if (cls.read_payload is not OpenAISending.read_payload
            or cls.payload_error is not OpenAISending.payload_error
            or cls.whole_chunks is not OpenAISending.whole_chunks):
        return "chunks"
    return "plain"
