"""How every OpenAI-style adapter reads a reply (``OpenAIReplyHooks``, a base
of ``_openai_compat.OpenAICompatibleModel``): error replies mapped
(``map_error``: ``_openai_errors``), errors carried in a 200 payload or an
``event: error`` SSE event, and the chunks of a whole reply, of a streamed
one (SSE, ``_read_stream``) or of one stream payload, read under a
``ReplyGuard`` and through the reply's ``MarkupFilter``.
A vendor module overrides the hooks it needs (``map_error``,
``payload_error``, ``ok_body_error``, ``parser_class``) and names its
content-moderation error codes (``moderation_codes``).

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from typing import Any, ClassVar

import aiohttp
import orjson

from agentflow._logging import get_logger
from agentflow.errors import (
    ModeratedRequestError,
    ProviderConnectionError,
    ProviderError,
    ServerError,
    TruncatedStreamError,
)
from agentflow.model import FinishChunk, ModelChunk, ModelProfile
from agentflow.providers._http import error_body, error_message
from agentflow.providers._markup import MarkupFilter
from agentflow.providers._openai_chunks import ChunkParser
from agentflow.providers._openai_errors import (
    enveloped,
    failed_output,
    moderation_error,
    openai_error,
    payload_error,
)
from agentflow.providers._payload import ReplyGuard
from agentflow.providers._streams import iter_sse

__all__ = ["OpenAIReplyHooks", "close_parser", "failed_generation"]

_log = get_logger("agentflow.providers")


class OpenAIReplyHooks:
    """The reply-reading hooks of ``OpenAICompatibleModel`` (see the module docstring)."""

    vendor: ClassVar[str]
    parser_class: ClassVar[type[ChunkParser]]
    moderation_codes: ClassVar[frozenset[str]] = frozenset()
    """The vendor's error codes (or types) saying its content moderation
    blocked the input or the reply. Such an error in a 200 body or a stream
    event is a ``ContentFilteredError`` (never retried), not the
    ``ServerError`` an unknown code would be; in a 4xx reply, a
    ``ModeratedRequestError`` (also a ``BadRequestError``)."""
    _parser_type: type[ChunkParser]
    """The parser this model's replies are read with (``parser_class``, or a
    ``_think_tags`` parser when its profile has ``inline_thinking``)."""
    _profile: ModelProfile
    """The model's profile (``cumulative_stream_deltas``: how a stream's text comes)."""

    # -- errors (hooks) -----------------------------------------------------
    def map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
        """Map an HTTP error reply (``openai_error``)."""
        return openai_error(self.vendor, status, headers, body)

    def _map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
        """``map_error``, except that a 4xx carrying one of ``moderation_codes``
        is a ``ModeratedRequestError`` (a ``ContentFilteredError`` and a
        ``BadRequestError``): the vendor's moderation refused the request."""
        if self.moderation_codes and 400 <= status < 500:
            message, code, _ = error_message(body)
            if code is not None and str(code) in self.moderation_codes:
                return ModeratedRequestError(message, status=status, code=str(code),
                                             vendor=self.vendor)
        return self.map_error(status, headers, body)  # the key is masked by ProviderError

    def payload_error(self, payload: Mapping[str, Any]) -> ProviderError | None:
        """The error a 200 payload or stream event carries, if any: one of
        ``moderation_codes`` -> ``ContentFilteredError``, else OpenAI-style
        (a bare vLLM error object too: ``enveloped``)."""
        payload = enveloped(payload)
        if self.moderation_codes:
            filtered = moderation_error(self.vendor, payload, self.moderation_codes)
            if filtered is not None:
                return filtered
        return payload_error(self.vendor, payload)

    def ok_body_error(self, headers: Mapping[str, str], body: bytes, data: Any
                      ) -> ProviderError | None:
        """The error a 2xx whole-reply body carries instead of a reply
        (``{"error": {...}}`` and no ``choices``: a router whose upstream
        failed once the request was taken, OpenRouter's "Errors and
        Debugging": "the returned HTTP response status will be 200 and any
        error ... emitted in the response body"), which the HTTP layer then
        retries like the HTTP error it stands for. Only a body holding the
        key ``"error"`` is parsed (a reply's own text has its quotes escaped:
        ``error_body``; ``data``, the HTTP layer's parse, answers a reply with
        ``choices`` at once). Vendors with other envelopes override this
        (MiniMax's ``base_resp``). A completion holding neither a choice nor
        an error (``"choices": null`` or ``[]``, or a ``chat.completion``
        without them: OpenRouter's passing "no completion" hiccup,
        pydantic/pydantic-ai#6901, or its completion nested under
        ``provider``, #3994) is the ``ServerError`` of an empty reply, retried
        here like a 5xx; it failed the call at once, "retryable" yet sent again
        by nothing. (Other 200 bodies, a server's ``/tokenize`` or
        ``/apply-template`` answer, are no completion: left alone.)"""
        if type(data) is dict and data.get("choices"):  # a reply: no scan of the body
            return None
        scanned = error_body(body)
        if isinstance(scanned, dict) and not scanned.get("choices"):
            found = self.payload_error(scanned)
            if found is not None:
                return found
        if type(data) is dict and ("choices" in data
                                   or str(data.get("object")).startswith("chat.completion")):
            return ServerError(f"empty reply from {self.vendor}: no choice, no content and no "
                               "finish reason; it is not an answer (retried)",
                               status=200, vendor=self.vendor)
        return None

    def whole_chunks(self, guard: ReplyGuard, data: Any, markup: MarkupFilter
                    ) -> list[ModelChunk]:
        """The chunks of a whole (non-streamed) reply ``data``, read under
        ``guard`` and through ``markup``: the live whole-reply path and batch
        replies (``parse_batch_reply``) share it. A list, made at once (no
        generator per reply): nothing of a reply the guard refuses is passed on.

        Raises:
            ProviderError: a malformed reply or one carrying an error (``guard``).
        """
        parser = self._parser_type()
        chunks = guard.fold(partial(self.read_payload, parser, guard=guard), data)
        if type(parser).close is not ChunkParser.close:  # a parser that holds text back
            held = guard.fold(close_parser, parser)
            if held:
                chunks = chunks + held
        if markup.active:  # one feed of the whole reply, then what the filter still holds
            chunks = markup.feed(chunks)
            rest = markup.close()
            if rest:
                chunks = chunks + rest
        guard.end()
        return chunks

    async def _read_stream(self, response: aiohttp.ClientResponse, markup: MarkupFilter,
                           check_usage: Callable[[int], None] | None = None
                           ) -> AsyncIterator[ModelChunk]:
        """The chunks of a streamed reply (SSE ``chat.completion.chunk`` events):
        asked for, or sent by a proxy that forces streaming on a whole-reply request.

        An event whose data is JSON ``null`` (some OpenAI-compatible upstreams
        put one between chunks, earendil-works/pi#2466) carries nothing and is
        skipped. An error event saying the vendor could not read the model's tool call or
        JSON (``failed_output``: Groq ``tool_use_failed``) ends the reply with
        finish reason ``error`` (``failed_generation``), as a failed generation.
        ``[DONE]`` ends the reading, as the official SDK's (openai-python
        ``AsyncStream.__stream__`` breaks there): a gateway that holds the
        connection open after it (earendil-works/pi#7954) made the whole reply
        wait for ``read_timeout`` and fail as a ``ProviderTimeoutError``.

        ``check_usage``: called with each usage chunk's input tokens (a
        check that raises: ``OpenAISending._check_cut``).

        Raises:
            TruncatedStreamError / ProviderConnectionError: it ended before its
                terminal marker or without a finish reason; a malformed event.
            ProviderError: an error event.
        """
        parser = self._parser_type()
        parser.stream_deltas = self._profile.cumulative_stream_deltas
        guard = ReplyGuard(self.vendor, stream=True)
        done = received = finished = False
        read = partial(self.read_payload, parser, guard=guard)  # no Python frame per event
        filtering = markup.active  # no filter call per event when it looks for nothing
        events = iter_sse(response, bare_json=True)
        async for event in events:
            if event.data.strip() == "[DONE]":
                done = True
                break  # the end: nothing after it is read (a server may hold the connection)
            if event.event == "error":
                error = self.event_error(event.data)
                if failed_output(error):
                    yield failed_generation(self.vendor, error)
                    return
                raise guard.broken(error)
            payload = guard.load(event.data)
            if payload is None:  # ``data: null``: an event that carries nothing
                continue
            received = True
            try:
                chunks = guard.fold(read, payload)
            except ProviderError as error:
                if not failed_output(error):
                    raise
                yield failed_generation(self.vendor, error)
                return
            for chunk in markup.feed(chunks) if filtering else chunks:
                finished = finished or chunk.type == "finish"
                if check_usage is not None and chunk.type == "usage":
                    check_usage(chunk.usage.input_tokens)
                yield chunk
            done = done or parser.terminal
        await events.aclose()
        for chunk in markup.feed(guard.fold(close_parser, parser)):
            if check_usage is not None and chunk.type == "usage":
                check_usage(chunk.usage.input_tokens)
            yield chunk
        for chunk in markup.close():
            if check_usage is not None and chunk.type == "usage":
                check_usage(chunk.usage.input_tokens)
            yield chunk
        if not done and not finished:  # a finish_reason then EOF lost nothing (no [DONE]:
            if not received:              # ik_llama.cpp, text-generation-webui, gateways)
                raise ProviderConnectionError(
                    "the stream ended before its terminal marker ([DONE]); the reply is "
                    "incomplete", vendor=self.vendor)
            raise TruncatedStreamError(
                "the stream ended before its terminal marker ([DONE]); the reply is "
                "incomplete", vendor=self.vendor)
        if received and not finished:
            raise TruncatedStreamError(
                "the stream ended ([DONE]) without a finish_reason; the reply is "
                "incomplete", vendor=self.vendor)
        guard.end()

    def read_payload(
        self, parser: ChunkParser, payload: Any, guard: ReplyGuard
    ) -> list[ModelChunk]:
        """The chunks of one payload (a stream chunk or a whole reply), or the
        error it carries (``payload_error``); run under ``guard.fold``."""
        if not isinstance(payload, dict):
            raise guard.error("not a JSON object", payload)
        # the stock check reads ``error`` (or vLLM's bare ``"object": "error"``) only:
        # a payload without one skips the call
        if ("error" in payload or payload.get("object") == "error"
                or type(self).payload_error is not _STOCK_PAYLOAD_ERROR) and (
                error := self.payload_error(payload)):
            raise error
        failed = _choice_error(payload)
        if failed is not None and (error := self.payload_error({"error": failed})):
            raise error
        return parser.feed(payload)

    def event_error(self, data: str) -> ProviderError:
        """The error an ``event: error`` SSE event reports (its data: JSON or text)."""
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            return ServerError(data[:500], vendor=self.vendor)
        if not isinstance(payload, dict) or "error" not in payload:
            payload = {"error": payload}
        return self.payload_error(payload) or ServerError(data[:500], vendor=self.vendor)


_STOCK_PAYLOAD_ERROR = OpenAIReplyHooks.payload_error


def _choice_error(payload: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The error object a choice ended with, or ``None``. OpenRouter reports an
    upstream failure after its 200 inside the choice, ``{"finish_reason":
    "error", "error": {"code": 404, "message": "No endpoints found that
    support image input"}}`` (nodetool-ai/nodetool#5755), in a whole reply and
    in a stream chunk: typed by its code as its HTTP twin (a 404 is never
    retried), where the bare finish reason said only that the generation
    failed."""
    choices = payload.get("choices")
    if not isinstance(choices, list):
        return None
    for choice in choices:
        if isinstance(choice, Mapping) and choice.get("finish_reason") == "error":
            error = choice.get("error")
            if isinstance(error, Mapping) and error:
                return error
    return None


def failed_generation(vendor: str, error: ProviderError) -> FinishChunk:
    """The end of a reply whose generation the vendor failed at the model's output
    (``failed_output``): finish reason ``error``, its raw value the
    vendor's code. The engine sends an output call again and ends a text call
    with a retryable ``ServerError`` (``call_outcome.stops``)."""
    _log.warning("openai_compat.failed_output", vendor=vendor, code=error.code,
                 error=str(error)[:200])
    return FinishChunk("error", str(error.code or "error"))


def close_parser(parser: ChunkParser) -> list[ModelChunk]:
    """What ``parser`` still holds at the end of a reply (``ReplyGuard.fold``'s reader)."""
    return parser.close()
