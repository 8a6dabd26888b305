"""The skeleton the native-protocol adapters (Anthropic, Gemini, Ollama) share.

``HttpChatModel`` is a ``ChatModel`` over one ``HttpClient``: a subclass
says how to build a request (``build_request``) and how to read a streamed
reply (``parse_stream``) or a whole one (``parse_reply``); the base sends it,
streaming or not (``stream=`` at construction, overridden per request by
``GenerateOptions.stream``: ``ReActAgent.call`` asks for whole replies since
nobody reads its deltas), and yields ``ModelChunk``s either way, so the agent
sees one shape whatever the transport. Payloads are
read under a ``ReplyGuard`` (a whole reply here, stream events in each
``parse_stream``): a payload of the wrong shape is a typed ``ProviderError``,
and a reply with neither content nor a finish reason is refused. A reply to
a whole-reply request that is a stream anyway (a proxy forcing streaming:
``streamed_reply`` / ``streamed_body``) is read by ``parse_stream``, and one
``application/json`` reply to a streamed request (a server that ignores
``stream``) by ``parse_reply``, from the HTTP layer's parse of it
(``Exchange.parsed``).

``system_reminder`` wraps a system message that
sits in the middle of a conversation, for vendors whose conversations have
no system role (Anthropic, Gemini): it travels as user text. ``continuation``
is the user nudge those vendors need when a conversation ends on an
assistant turn (newer models refuse prefill).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self

import aiohttp

from agentflow._secrets import redact_urls
from agentflow.errors import BadRequestError
from agentflow.media.tokens import request_media_cost
from agentflow.messages import Msg, ToolResultBlock, ToolUseBlock
from agentflow.model import GenerateOptions, ModelChunk, ModelProfile, ToolChoice, ToolSpec
from agentflow.providers._http import HttpClient
from agentflow.providers._payload import NOT_PARSED, ReplyGuard
from agentflow.providers._streams import BufferedBody, sse_body, sse_response

__all__ = [
    "HttpChatModel",
    "continuation",
    "result_name",
    "system_reminder",
    "tool_calls_by_id",
]


def system_reminder(text: str) -> str:
    """``text`` wrapped as ``<system-reminder>...</system-reminder>`` (unless it
    already is), for a system message carried inside a user turn."""
    stripped = text.strip()
    if stripped.startswith("<system-reminder>"):
        return stripped
    return f"<system-reminder>{stripped}</system-reminder>"


def continuation(choice: ToolChoice | None) -> str:
    """The user nudge that closes a conversation ending on an assistant turn.

    Such a conversation is a prefill to Anthropic and Gemini, and newer models
    refuse it ("This model does not support assistant message prefill. The
    conversation must end with a user message."; "Requests ending with a model
    turn are not supported."). It arises when a retry is forced with
    ``tool_choice`` right after a prose reply; the nudge names the tool then.
    """
    if choice is not None and choice.mode == "specific":
        return system_reminder(f"Continue: call the `{choice.name}` tool now.")
    return system_reminder("Continue.")


def tool_calls_by_id(messages: Iterable[Msg]) -> dict[str, ToolUseBlock]:
    """``{tool call id: call}`` over every tool call in ``messages``, for wire
    formats whose tool results name the tool (Gemini, Ollama)."""
    return {b.id: b for m in messages for b in m.content if isinstance(b, ToolUseBlock)}


def result_name(block: ToolResultBlock, calls: Mapping[str, ToolUseBlock]) -> str:
    """The tool name a result answers: its own, else its call's."""
    call = calls.get(block.tool_use_id)
    return block.name or (call.name if call else "")


class HttpChatModel(ABC):
    """Base of an HTTP ``ChatModel``.

    Args:
        model: the vendor's model id.
        client: the model's ``HttpClient`` (owns the aiohttp session).
        profile: the model's capabilities.
        stream: stream replies (``True``) or ask for whole ones; the chunks
            yielded are the same. A request's ``GenerateOptions.stream``
            overrides it (``streams``).

    ``async with model:`` closes its session at the block's end (``aclose``),
    as the OpenAI-style models do.
    """

    vendor: ClassVar[str] = ""

    def __init__(
        self, model: str, *, client: HttpClient, profile: ModelProfile, stream: bool
    ) -> None:
        self._model = model
        self._client = client
        self._profile = profile
        self._streaming = stream

    @property
    def profile(self) -> ModelProfile:
        """What this model's API can do."""
        return self._profile

    @property
    def model_name(self) -> str:
        """The vendor's model id."""
        return self._model

    @property
    def base_url(self) -> str:
        """The URL requests go to (as given: it may hold a query key, so
        show it through ``agentflow._secrets.redact_urls``)."""
        return self._client.base_url

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(model={self._model!r}, "
                f"base_url={redact_urls(self._client.base_url)!r})")

    async def aclose(self) -> None:
        """Close the HTTP session (idempotent)."""
        await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the HTTP session (``aclose``), however the block ends."""
        await self.aclose()

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Send one request; yield its reply as ``ModelChunk``s.

        Raises:
            ProviderError: the vendor refused or failed the request (mapped by
                the vendor module); ``ProviderConnectionError(partial=True)``
                when a stream ends before the vendor's terminal marker or
                brings a malformed event, ``ServerError`` for a malformed
                whole reply; either for a reply with neither content nor a
                finish reason.
        """
        media = request_media_cost(messages, self._profile.media_tokens)
        while True:
            streaming = self.streams(options)
            path, body = self.build_request(messages, tools, options, stream=streaming)
            exchange = self._client.open(path, body, whole=not streaming, media=media)
            del body  # the exchange drops it once sent: not kept alive while the reply comes
            try:
                await exchange.start()
                break
            except BadRequestError as exc:
                again = self.resend_options(exc, options)
                if again is None:
                    raise
                options = again
        async with exchange as response:
            # a stream, asked for (unless a server that ignores ``stream`` answered
            # with one JSON reply) or forced by a proxy
            if ((streaming and response.content_type != "application/json")
                    or self.streamed_reply(response)):
                async for chunk in self.parse_stream(response):
                    yield chunk
                return
            guard = ReplyGuard(self.vendor, stream=False)
            data = exchange.parsed  # the HTTP layer's parse of the body, when it made one
            if data is NOT_PARSED:
                raw = await response.read()
                if self.streamed_body(raw):  # a stream all the same, mislabelled (``data:`` ...)
                    async for chunk in self.parse_stream(BufferedBody(raw, response)):  # type: ignore[arg-type]
                        yield chunk
                    return
                data = guard.load(raw)
            for chunk in guard.fold(self.parse_reply, data):
                yield chunk
            guard.end()

    def resend_options(self, error: BadRequestError, options: GenerateOptions
                       ) -> GenerateOptions | None:
        """The options to send a refused request again with, when ``error`` (the
        vendor's refusal, before any reply) says what to change and the change
        makes the request a different one; ``None`` (the default) raises it."""
        return None

    def streamed_reply(self, response: aiohttp.ClientResponse) -> bool:
        """Whether a reply to a whole-reply request says it is a stream (its
        content type): some proxies force streaming on every request. Such
        a reply is read by ``parse_stream``. Default: ``text/event-stream``."""
        return sse_response(response)

    def streamed_body(self, raw: bytes) -> bool:
        """Whether a whole reply's body, read, is a stream under another
        content type. Default: it starts with an SSE field (``data:`` ...)."""
        return sse_body(raw)

    def streams(self, options: GenerateOptions) -> bool:
        """Whether this request streams: ``options.stream`` when set, else the
        model's ``stream=``. Vendors override it to keep streaming where a
        whole reply would differ or fail (``options.stream=False`` is a
        "nobody reads the deltas" hint, ``GenerateOptions``)."""
        return self._streaming if options.stream is None else options.stream

    @abstractmethod
    def build_request(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
        *,
        stream: bool,
    ) -> tuple[str, dict[str, Any]]:
        """``(path relative to the base URL, JSON body)`` of one request."""

    @abstractmethod
    def parse_stream(self, response: aiohttp.ClientResponse) -> AsyncIterator[ModelChunk]:
        """The chunks of a streamed reply (each event read under a ``ReplyGuard``,
        whose ``end`` is called once the reply is complete)."""

    @abstractmethod
    def parse_reply(self, data: Any) -> Iterable[ModelChunk]:
        """The chunks of a whole (non-streamed) reply."""
