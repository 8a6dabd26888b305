"""OpenTelemetry tracing, following the GenAI semantic conventions
(https://opentelemetry.io/docs/specs/semconv/gen-ai/, status Development).

Through ``opentelemetry-api`` only (extra ``otel``); without it, or with
``Telemetry(enabled=False)``, every hook is a no-op; so it is, at the cost
of one check per call, while no global tracer provider is set. Configure an
SDK ``TracerProvider`` as usual (globally, or ``Telemetry(tracer_provider=...)``).

Spans of one call::

    invoke_agent {agent name}          INTERNAL  one per call
    ├── chat {model name}              CLIENT    one per model request (retries too)
    └── execute_tool {tool name}       INTERNAL  one per tool run (current while it runs)

Attributes: ``gen_ai.operation.name`` (``invoke_agent`` / ``chat`` /
``execute_tool``), ``gen_ai.provider.name`` (the model's ``otel_provider`` or
``vendor`` attribute; also as the older ``gen_ai.system``),
``gen_ai.request.model``, ``gen_ai.response.model`` and ``gen_ai.response.id``
(where the adapter reports them), ``gen_ai.request.max_tokens`` /
``temperature`` / ``top_p`` (when set), ``gen_ai.output.type`` (``json``
when an output type is asked, else ``text``), ``gen_ai.response.finish_reasons``,
``gen_ai.usage.input_tokens`` / ``output_tokens`` (per request; summed on the
agent span), ``gen_ai.agent.name`` / ``gen_ai.agent.id``,
``gen_ai.tool.name`` / ``gen_ai.tool.call.id`` / ``gen_ai.tool.type``
(``function``) / ``gen_ai.tool.description``, ``server.address`` /
``server.port`` (from the model's ``base_url``), and ``agentflow.call.id`` /
``agentflow.stop_reason``. A failed span has status ERROR and ``error.type``
(the exception's class name; ``cancelled`` for a cancelled call; ``tool_error``
for a tool that returned an error result).

Structured-output retries are events on the agent span:
``agentflow.output_retry`` with ``agentflow.retry.reason`` and
``agentflow.retry.attempt``.

Content — messages, system instructions, tool arguments and results, retry
messages — is **not recorded** unless turned on: ``Telemetry(record_content=True)``
or the environment variable
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (the name other
GenAI instrumentations read). Then the opt-in attributes
``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions``, ``gen_ai.tool.call.arguments`` and
``gen_ai.tool.call.result`` are set (JSON text in the conventions' parts shape).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from agentflow._clean_text import json_bytes
from agentflow.events import Event, OutputRetry
from agentflow.messages import Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    from agentflow.execution import CallExecution
    from agentflow.middleware.base import ModelRequest
    from agentflow.reply import ReplyBuilder
    from agentflow.tools import Tool

try:  # optional: opentelemetry-api
    from opentelemetry import trace as _otel
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError:  # pragma: no cover - depends on the install
    _otel = None  # type: ignore[assignment]

__all__ = ["CONTENT_ENV", "Telemetry", "TraceHandle", "default_telemetry", "note_events"]

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_SPAN_KEY = "agentflow.telemetry.span"
_TELEMETRY_KEY = "agentflow.telemetry"


class TraceHandle:
    """What a model-request span hands back to the loop: call ``finish``
    with the reply builder once the reply is whole."""

    __slots__ = ("_span", "_telemetry")

    def __init__(self, telemetry: Telemetry | None, span: Any) -> None:
        self._telemetry = telemetry
        self._span = span

    def fail(self, error: BaseException) -> None:
        """Mark the request failed (the loop may still retry it in a new span)."""
        if self._span is not None:
            _fail(self._span, error)

    def finish(self, builder: ReplyBuilder) -> None:
        """Record finish reason, usage and response model of the reply."""
        span = self._span
        if span is None or not span.is_recording():
            return
        span.set_attribute("gen_ai.response.finish_reasons", [builder.finish_reason])
        if builder.usage.input_tokens:  # a reply without usage: unknown, not 0 (left unset)
            span.set_attribute("gen_ai.usage.input_tokens", builder.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", builder.usage.output_tokens)
        for key, name in (("response_model", "gen_ai.response.model"),
                          ("response_id", "gen_ai.response.id")):
            value = getattr(builder, key, None)
            if value:
                span.set_attribute(name, value)
        if self._telemetry is not None and self._telemetry.record_content:
            reply = builder.build()
            span.set_attribute("gen_ai.output.messages", _dumps(
                [{**_message(reply), "finish_reason": builder.finish_reason}]))


_NO_HANDLE = TraceHandle(None, None)
_NULL: Any = nullcontext()
_NULL_REQUEST: Any = nullcontext(_NO_HANDLE)
"""Shared no-op context managers (``nullcontext`` keeps no state between uses)."""


class Telemetry:
    """The tracing settings of an agent (``ReActAgent(telemetry=...)``).

    Args:
        enabled: ``False`` turns every span off.
        record_content: record prompts, replies, tool arguments and results
            (default: the ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
            environment variable, read when the object is made; off unless
            ``true``).
        tracer_provider: an OpenTelemetry ``TracerProvider`` (default: the
            global one, looked up lazily so one set later is used).
    """

    def __init__(self, *, enabled: bool = True, record_content: bool | None = None,
                 tracer_provider: Any = None) -> None:
        if record_content is None:
            record_content = os.environ.get(CONTENT_ENV, "").strip().lower() == "true"
        self.record_content = record_content
        self.enabled = enabled and _otel is not None
        self._global = tracer_provider is None
        self._tracer: Any = None
        if self.enabled:
            from agentflow._version import __version__

            self._tracer = _otel.get_tracer("agentflow", __version__,
                                            tracer_provider=tracer_provider)

    def __repr__(self) -> str:
        return f"Telemetry(enabled={self.enabled}, record_content={self.record_content})"

    # ------------------------------------------------------------------ the three spans

    def call(self, agent_name: str, agent_id: str, ex: CallExecution) -> Any:
        """A context manager around one agent call (``invoke_agent``)."""
        if not self.enabled or (self._global and _no_sdk()):
            return _NULL  # nothing would record: skip the spans entirely
        return self._call(agent_name, agent_id, ex)

    @contextmanager
    def _call(self, agent_name: str, agent_id: str, ex: CallExecution) -> Iterator[None]:
        provider = _provider(ex.model)
        span = self._tracer.start_span(
            f"invoke_agent {agent_name}", kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": provider,
                "gen_ai.system": provider,
                "gen_ai.agent.name": agent_name,
                "gen_ai.agent.id": agent_id,
                "gen_ai.request.model": ex.model.model_name,
                "gen_ai.output.type": "json" if ex.output_type is not None else "text",
                "agentflow.call.id": ex.call_id,
            },
        )
        ex.extra[_SPAN_KEY] = span
        ex.extra[_TELEMETRY_KEY] = self
        try:
            yield
        except BaseException as exc:
            _fail(span, exc)
            raise
        finally:
            if span.is_recording():
                if ex.usage.known:  # some request without usage: the sum is unknown (unset)
                    span.set_attribute("gen_ai.usage.input_tokens", ex.usage.input_tokens)
                    span.set_attribute("gen_ai.usage.output_tokens", ex.usage.output_tokens)
                else:
                    span.set_attribute("agentflow.usage.unreported", ex.usage.unreported)
                if ex.stop_reason:
                    span.set_attribute("agentflow.stop_reason", ex.stop_reason)
            span.end()

    def model_request(self, ex: CallExecution, request: ModelRequest) -> Any:
        """A context manager around one model request (``chat``); it yields a
        ``TraceHandle`` to ``finish`` with the reply."""
        parent = ex.extra.get(_SPAN_KEY)
        if parent is None:
            return _NULL_REQUEST
        return self._model_request(ex, request, parent)

    @contextmanager
    def _model_request(self, ex: CallExecution, request: ModelRequest,
                       parent: Any) -> Iterator[TraceHandle]:
        model = ex.model
        provider = _provider(model)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.system": provider,
            "gen_ai.request.model": model.model_name,
            "gen_ai.output.type": "json" if ex.output_type is not None else "text",
        }
        options = request.options
        for name, value in (("gen_ai.request.max_tokens", options.max_tokens),
                            ("gen_ai.request.temperature", options.temperature),
                            ("gen_ai.request.top_p", getattr(options, "top_p", None))):
            # top_p where the options carry it
            if value is not None:
                attributes[name] = value
        attributes.update(_server(model))
        span = self._tracer.start_span(
            f"chat {model.model_name}", kind=SpanKind.CLIENT, attributes=attributes,
            context=_otel.set_span_in_context(parent),
        )
        if self.record_content and span.is_recording():
            system = [m for m in request.messages if m.role == "system"]
            if system:
                span.set_attribute("gen_ai.system_instructions", _dumps(
                    [{"type": "text", "content": m.text} for m in system]))
            span.set_attribute("gen_ai.input.messages", _dumps(
                [_message(m) for m in request.messages if m.role != "system"]))
        try:
            yield TraceHandle(self, span)
        except BaseException as exc:
            _fail(span, exc)
            raise
        finally:
            span.end()

    def tool(self, ex: CallExecution, call: ToolUseBlock, tool: Tool | None) -> Any:
        """A context manager around one tool run (``execute_tool``), current
        while the tool runs; it yields a function to call with the result."""
        parent = ex.extra.get(_SPAN_KEY)
        if parent is None:
            return nullcontext(_ignore)
        return self._tool(call, tool, parent)

    @contextmanager
    def _tool(self, call: ToolUseBlock, tool: Tool | None, parent: Any) -> Iterator[Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        description = getattr(tool, "description", None)
        if description:
            attributes["gen_ai.tool.description"] = description
        if self.record_content:
            attributes["gen_ai.tool.call.arguments"] = _dumps(dict(call.input))
        span = self._tracer.start_span(
            f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes=attributes,
            context=_otel.set_span_in_context(parent),
        )

        def result(block: ToolResultBlock) -> None:
            if block.is_error:
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR, "the tool returned an error result"))
            if self.record_content:
                span.set_attribute("gen_ai.tool.call.result", str(block.output))

        try:
            with _otel.use_span(span, end_on_exit=False, record_exception=False,
                                set_status_on_exception=False):
                yield result
        except BaseException as exc:
            _fail(span, exc)
            raise
        finally:
            span.end()


_default: Telemetry | None = None


def default_telemetry() -> Telemetry:
    """The settings of agents made without ``telemetry=`` (one shared object)."""
    global _default
    if _default is None:
        _default = Telemetry()
    return _default


def note_events(ex: CallExecution, events: Sequence[Event]) -> None:
    """Record the call's structured-output retries as events on its span."""
    span = ex.extra.get(_SPAN_KEY)
    if span is None or not span.is_recording():
        return
    telemetry: Telemetry = ex.extra[_TELEMETRY_KEY]
    for event in events:
        if isinstance(event, OutputRetry):
            attributes: dict[str, Any] = {"agentflow.retry.reason": event.reason,
                                          "agentflow.retry.attempt": event.attempt}
            if telemetry.record_content:
                attributes["agentflow.retry.message"] = event.message
            span.add_event("agentflow.output_retry", attributes)


_PROXY: Any = None if _otel is None else _otel.ProxyTracerProvider()
_NO_SDK_TRACERS: tuple[type, ...] = (  # a tuple made once
    () if _otel is None else (_otel.ProxyTracer, _otel.NoOpTracer))
_sdk_seen = False


def _no_sdk() -> bool:
    """No tracer provider was set globally (spans would not record).

    Asked of a ``ProxyTracerProvider`` of our own, through opentelemetry's
    public API: it hands out a ``ProxyTracer`` while no global provider is set
    (``trace.set_tracer_provider``, or ``OTEL_PYTHON_TRACER_PROVIDER``, which
    opentelemetry loads when a tracer is first asked for: ``Telemetry()``
    does), and the real provider's tracer once one is, so a provider set after
    the agent was built is honoured on the next call, as every
    instrumentation's ``ProxyTracer`` honours it. Cheaper than
    ``trace.get_tracer_provider()``, which looks the environment variable up
    (a ``KeyError`` raised and caught in ``os.environ``) on every call while
    none is set. A global provider is set once per process and never
    replaced, so once one is seen the answer is kept.
    """
    global _sdk_seen
    if _sdk_seen:
        return False
    if isinstance(_PROXY.get_tracer("agentflow"), _NO_SDK_TRACERS):
        return True
    _sdk_seen = True
    return False


def _ignore(block: ToolResultBlock) -> None:
    return None


def _fail(span: Any, exc: BaseException) -> None:
    """Mark ``span`` failed: ``error.type`` and status (never the message,
    which may quote content)."""
    if not span.is_recording():
        return
    cancelled = isinstance(exc, GeneratorExit | anyio.get_cancelled_exc_class())
    kind = "cancelled" if cancelled else type(exc).__name__
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, kind))


def _provider(model: Any) -> str:
    name = getattr(model, "otel_provider", None) or getattr(model, "vendor", None)
    return str(name) if name else "unknown"


def _server(model: Any) -> dict[str, Any]:
    base_url = getattr(model, "base_url", None)
    for holder in ("client", "_client", "_http"):  # the adapter's HTTP client
        if isinstance(base_url, str):
            break
        base_url = getattr(getattr(model, holder, None), "base_url", None)
    if not isinstance(base_url, str) or not base_url:
        return {}
    parts = urlsplit(base_url)
    if not parts.hostname:
        return {}
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {"server.address": parts.hostname, "server.port": port}


def _message(msg: Msg) -> dict[str, Any]:
    """A message in the conventions' ``{"role", "parts": [...]}`` shape."""
    parts: list[dict[str, Any]] = []
    for block in msg.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "content": block.text})
        elif isinstance(block, ThinkingBlock):
            parts.append({"type": "reasoning", "content": block.thinking})
        elif isinstance(block, ToolUseBlock):
            parts.append({"type": "tool_call", "id": block.id, "name": block.name,
                          "arguments": dict(block.input)})
        elif isinstance(block, ToolResultBlock):
            parts.append({"type": "tool_call_response", "id": block.tool_use_id,
                          "result": block.output})
    return {"role": msg.role, "parts": parts}


def _dumps(value: Any) -> str:
    """``value`` as a JSON attribute: never fails a call (a lone surrogate, an
    integer beyond 64 bits: ``json_bytes``; an object JSON has no form for: its ``str``)."""
    return json_bytes(value, default=str).decode()
