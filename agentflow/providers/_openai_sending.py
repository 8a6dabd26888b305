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
from typing import Any, ClassVar, Literal

from agentflow.errors import AuthenticationError, BadRequestError
from agentflow.media.tokens import request_media_cost
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ToolSpec
from agentflow.providers._context_cuts import cut_error, prompt_estimate, silent_cut
from agentflow.providers._http import HttpClient
from agentflow.providers._http_errors import STREAM_TYPES
from agentflow.providers._markup import AnyMarkup, filter_for
from agentflow.providers._openai_errors import failed_output
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
                    yield failed_generation(self.vendor, exc)
                    return
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
        window = self._profile.context_window
        async with exchange as response:
            if sse_response(response) or (streaming and response.content_type in STREAM_TYPES):
                source: Any = response  # a stream, asked for or forced by a proxy
            else:  # (any other type was read whole by the transport's check: parsed)
                data = exchange.parsed  # the HTTP layer's parse of the body, when it made one
                raw = b"" if data is not NOT_PARSED else await response.read()
                if data is not NOT_PARSED or not (sse_body(raw) or ndjson_body(raw)):
                    guard = ReplyGuard(self.vendor, stream=False)
                    if data is NOT_PARSED:
                        data = guard.load(raw)
                    for chunk in self.whole_chunks(guard, data, markup):
                        if chunk.type == "usage" and window:
                            self._check_cut(messages, window, chunk.usage.input_tokens)
                        yield chunk
                    return
                # events under another content type (text/plain, application/json), or
                # chunks one a line without ``data:`` (xorbitsai/inference#523)
                source = BufferedBody(raw, response)
            async for chunk in self._read_stream(source, markup):
                if chunk.type == "usage" and window:
                    self._check_cut(messages, window, chunk.usage.input_tokens)
                yield chunk

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
