"""JSON payloads in and out, made safe for every adapter.

* ``dump_json`` serializes a request body (or a piece of one). orjson refuses
  a string holding a lone surrogate (``os.fsdecode`` of a non-UTF-8 file name
  gives ``"caf\\udce9"``); only then is the value walked again with every lone
  surrogate replaced by U+FFFD (a pair split in two code points is joined),
  so such a string never stops a request.
* ``ReplyGuard`` reads the payloads of one reply, for every reader (OpenAI
  style, Anthropic, Gemini, Ollama). Readers index payloads as the wire format
  says they are shaped; a payload of another shape (``choices`` an object,
  ``delta`` a string, a missing ``index``, token counts that are not numbers,
  data that is not JSON...) raises ``LookupError``/``TypeError``/
  ``AttributeError``/``ValueError`` inside the reader, and the guard turns it
  into a typed error naming the payload: ``ProviderConnectionError(partial=True)``
  in a stream, ``ServerError`` for a whole reply. It also checks the field
  types of the chunks a reader makes (text is a ``str``, ...), and ``end``
  refuses a reply that carried neither content nor a finish reason
  (``[DONE]`` alone, ``{}``, Anthropic's ``message_stop`` alone, Ollama's
  ``done`` line alone): the engine never takes such a reply for an answer.
  An empty text that comes with the vendor's finish reason is an answer.
  A vendor's error event inside a stream (Anthropic's ``event: error``
  ``overloaded_error``, an OpenAI-style ``data: {"error": ...}``, Gemini's
  503 ``UNAVAILABLE`` object, Ollama's error line) comes after the HTTP 200:
  the HTTP layer could not retry it, so it is ``partial`` (``broken``), which
  ``ReActAgent(stream_retries=n)`` may send again when it is retryable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from agentflow._clean_text import json_bytes
from agentflow.errors import AgentflowError, ProviderConnectionError, ProviderError, ServerError
from agentflow.model import (
    FinishChunk,
    ModelChunk,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageChunk,
)
from agentflow.providers._surrogates import SurrogateJoiner, loads_lone

__all__ = ["NOT_PARSED", "ReplyGuard", "dump_json"]

def dump_json(value: Any, *, option: int | None = None) -> bytes:
    """``orjson.dumps(value, option=option)``; strings with lone surrogates
    are repaired (U+FFFD) instead of refused, an integer beyond 64 bits is
    written with its digits (``agentflow._clean_text.json_bytes``).

    Raises:
        TypeError: ``value`` holds something JSON cannot carry (orjson's error).
    """
    return json_bytes(value, option=option)


# ----------------------------------------------------------------------------- replies

_SHAPE_ERRORS = (LookupError, TypeError, AttributeError, ValueError)
_NONE = type(None)
_FIELDS: dict[type, tuple[tuple[str, tuple[type, ...]], ...]] = {
    TextDelta: (("text", (str,)),),
    ThinkingDelta: (("text", (str,)), ("signature", (str, _NONE)),
                    ("provider_data", (Mapping, _NONE))),
    ToolCallDelta: (("index", (int,)), ("id", (str, _NONE)), ("name", (str, _NONE)),
                    ("arguments", (str, bytes)), ("arguments_obj", (Mapping, _NONE)),
                    ("provider_data", (Mapping, _NONE))),
    UsageChunk: (("usage", (Usage,)),),
    FinishChunk: (("raw", (str,)),),
}
"""The field types a chunk must have (payload values end up in these fields)."""


_NO_PAYLOAD: Any = object()
_NO_USAGE = Usage()


def counted(usage: Usage, *parts: int) -> Usage:
    """``usage`` as a vendor reported it, or no usage (all zero: the request's
    usage is unknown, ``Usage.unreported``) when it holds a negative count
    (``parts``: the vendor's counts summed into its fields, checked too).
    A negative count is no count (OpenAI once reported ``"completion_tokens":
    -35`` beside a total below the prompt's, 64bit/async-openai#404); taken
    as it was, it lowered every sum, cost and budget it joined."""
    if (usage.input_tokens < 0 or usage.output_tokens < 0 or usage.cached_tokens < 0
            or usage.reasoning_tokens < 0 or usage.cache_write_tokens < 0
            or any(part < 0 for part in parts)):
        return _NO_USAGE
    return usage


def _excerpt(payload: Any) -> str:
    if isinstance(payload, bytes):
        payload = payload.decode(errors="replace")
    return (payload if isinstance(payload, str) else repr(payload))[:200]


NOT_PARSED: Any = object()
"""``Exchange.parsed`` of a reply the HTTP layer did not parse (a stream, or a
vendor whose whole replies it does not read for a ``BodyErrorCheck``)."""


class ReplyGuard:
    """Typed errors for the malformed payloads of one reply (see the module docstring).

    Args:
        vendor: named in the errors.
        stream: the reply is a stream (errors are ``ProviderConnectionError(partial=True)``)
            or a whole body (``ServerError``).
    """

    __slots__ = ("answered", "joiner", "stream", "vendor")

    def __init__(self, vendor: str, *, stream: bool) -> None:
        self.vendor = vendor
        self.stream = stream
        self.answered = False
        """Whether a payload so far gave content or a finish reason."""
        self.joiner: SurrogateJoiner | None = None
        """Set once a payload held a lone surrogate escape (``load``)."""

    def error(self, problem: str, payload: Any = _NO_PAYLOAD) -> ProviderError:
        """The typed error for ``problem`` (with an excerpt of ``payload``, if given)."""
        where = "stream event" if self.stream else "reply"
        message = f"malformed {where} from {self.vendor}: {problem}"
        if payload is not _NO_PAYLOAD:
            message = f"{message}: {_excerpt(payload)}"
        return self._typed(message)

    def _typed(self, message: str) -> ProviderError:
        if self.stream:
            return ProviderConnectionError(message, partial=True, vendor=self.vendor)
        return ServerError(message, vendor=self.vendor)

    def broken(self, error: ProviderError) -> ProviderError:
        """``error``, a vendor's error payload in this reply: in a stream it is
        ``partial`` (the stream broke after its 200; nothing retried it)."""
        if self.stream:
            error.partial = True
        return error

    def load(self, raw: str | bytes) -> Any:
        """One payload parsed as JSON. A string with a lone UTF-16 surrogate
        escape is read (``"\\ud83d"``: a gateway that cut an emoji's escaped
        pair between two stream events), and from then on ``fold`` mends the
        chunks' text (``_surrogates``). (A whole reply the HTTP layer parsed
        already is not parsed again: ``Exchange.parsed``.)

        Raises:
            ProviderError: it is not JSON.
        """
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            read, value = loads_lone(raw)
            if not read:
                raise self.error("not JSON", raw or "(empty)") from exc
            if self.joiner is None:
                self.joiner = SurrogateJoiner(hold=self.stream)
            return value

    def fold(self, read: Callable[[Any], Iterable[ModelChunk]], payload: Any) -> list[ModelChunk]:
        """The chunks ``read(payload)`` makes, checked.

        Raises:
            ProviderError: what ``read`` raises as such (a vendor's error
                payload), or the typed error for a payload ``read`` could not
                take (a ``LookupError``/``TypeError``/``AttributeError``/
                ``ValueError``, or a chunk field of the wrong type).
        """
        try:
            chunks = list(read(payload))
            if self.joiner is not None:  # a payload held a lone surrogate escape
                chunks = self.joiner.join(chunks)
            for chunk in chunks:  # the field types (inline: once per stream event)
                for name, types in _FIELDS.get(type(chunk), ()):
                    value = getattr(chunk, name)
                    if not isinstance(value, types):
                        raise TypeError(f"{type(chunk).__name__}.{name} would be of type "
                                        f"{type(value).__name__}")
        except ProviderError as exc:
            self.broken(exc)
            raise
        except AgentflowError:
            raise
        except _SHAPE_ERRORS as exc:
            raise self.error(f"{type(exc).__name__}: {exc}", payload) from exc
        if not self.answered:
            for chunk in chunks:  # content, or a finish reason the vendor gave (``raw``)
                if chunk.type != "usage" and (chunk.type != "finish" or chunk.raw):
                    self.answered = True
                    break
        return chunks

    def end(self) -> None:
        """Call once the reply is complete.

        Raises:
            ProviderError: the reply carried neither content nor a finish reason.
        """
        if not self.answered:
            raise self._typed(f"empty reply from {self.vendor}: no choice, no content and no "
                              "finish reason; it is not an answer")
