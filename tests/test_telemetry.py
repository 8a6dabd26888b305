"""OpenTelemetry spans per the GenAI conventions, read back from the SDK's
in-memory exporter."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import BaseModel

from agentflow import ProviderConnectionError, ReActAgent
from agentflow.telemetry import CONTENT_ENV, Telemetry
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply, ScriptedModel

from .fakes.base import FakeReply


class City(BaseModel):
    name: str


def tracing(record_content: bool | None = None) -> tuple[Telemetry, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Telemetry(tracer_provider=provider, record_content=record_content), exporter


def weather(city: str) -> str:
    """The weather in a city."""
    return f"rain in {city}"


def by_op(exporter: InMemorySpanExporter) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for span in exporter.get_finished_spans():
        out.setdefault(span.attributes["gen_ai.operation.name"], []).append(span)
    return out


async def test_spans_per_call_request_and_tool() -> None:
    telemetry, exporter = tracing()
    model = ScriptedModel([
        Reply(tool_calls=[Call("weather", {"city": "Paris"})]),
        Reply(tool_calls=[Call("generate_response", {"name": "Paris"})]),
    ])
    agent = ReActAgent("planner", model, tools=[weather], telemetry=telemetry)
    reply = await agent.call("Where does it rain?", City)
    assert reply.output == City(name="Paris")
    spans = by_op(exporter)
    (call,) = spans["invoke_agent"]
    chats, (tool,) = spans["chat"], spans["execute_tool"]
    assert call.name == "invoke_agent planner" and call.kind == SpanKind.INTERNAL
    assert call.attributes["gen_ai.agent.name"] == "planner"
    assert call.attributes["gen_ai.request.model"] == model.model_name
    assert call.attributes["gen_ai.output.type"] == "json"
    assert call.attributes["gen_ai.usage.input_tokens"] == 20
    assert call.attributes["agentflow.stop_reason"] == "structured_output"
    assert len(chats) == 2
    for chat in chats:
        assert chat.name == f"chat {model.model_name}" and chat.kind == SpanKind.CLIENT
        assert chat.parent.span_id == call.context.span_id
        assert chat.attributes["gen_ai.provider.name"]
        assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
        assert chat.attributes["gen_ai.usage.input_tokens"] == 10
        assert chat.attributes["gen_ai.usage.output_tokens"] == 5
    assert tool.name == "execute_tool weather"
    assert tool.parent.span_id == call.context.span_id
    assert tool.attributes["gen_ai.tool.name"] == "weather"
    assert tool.attributes["gen_ai.tool.type"] == "function"
    assert tool.attributes["gen_ai.tool.description"].startswith("The weather")
    assert tool.status.status_code == StatusCode.UNSET
    # content is off by default
    for span in exporter.get_finished_spans():
        assert not any(k in span.attributes for k in (
            "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result", "gen_ai.system_instructions"))
        assert "Paris" not in str(dict(span.attributes))


async def test_content_recorded_only_when_turned_on(monkeypatch: pytest.MonkeyPatch) -> None:
    telemetry, exporter = tracing(record_content=True)
    model = ScriptedModel([Reply(tool_calls=[Call("weather", {"city": "Oslo"})]), "It rains."])
    agent = ReActAgent("a", model, tools=[weather], sys_prompt="Be brief.", telemetry=telemetry)
    await agent.call("Weather in Oslo?")
    spans = by_op(exporter)
    first = spans["chat"][0].attributes
    assert '"content":"Weather in Oslo?"' in first["gen_ai.input.messages"]
    assert first["gen_ai.system_instructions"] == '[{"type":"text","content":"Be brief."}]'
    assert '"type":"tool_call"' in first["gen_ai.output.messages"]
    assert '"content":"It rains."' in spans["chat"][1].attributes["gen_ai.output.messages"]
    tool = spans["execute_tool"][0].attributes
    assert tool["gen_ai.tool.call.arguments"] == '{"city":"Oslo"}'
    assert tool["gen_ai.tool.call.result"] == "rain in Oslo"
    # the conventional environment variable turns it on too
    monkeypatch.setenv(CONTENT_ENV, "true")
    assert Telemetry().record_content
    monkeypatch.setenv(CONTENT_ENV, "false")
    assert not Telemetry().record_content


async def test_output_retries_are_span_events() -> None:
    telemetry, exporter = tracing()
    model = ScriptedModel([
        Reply(tool_calls=[Call("generate_response", {"wrong": 1})]),
        Reply(tool_calls=[Call("generate_response", {"name": "Rome"})]),
    ])
    agent = ReActAgent("a", model, telemetry=telemetry)
    assert (await agent.call("x", City)).output == City(name="Rome")
    (call,) = by_op(exporter)["invoke_agent"]
    retries = [e for e in call.events if e.name == "agentflow.output_retry"]
    assert len(retries) == 1
    assert retries[0].attributes["agentflow.retry.reason"] == "validation"
    assert retries[0].attributes["agentflow.retry.attempt"] == 1
    assert "agentflow.retry.message" not in retries[0].attributes


async def test_failed_request_and_call_are_marked() -> None:
    telemetry, exporter = tracing()

    async def broken(request: RecordedRequest) -> Reply:
        raise ProviderConnectionError("refused")

    agent = ReActAgent("a", FunctionModel(broken), telemetry=telemetry)
    with pytest.raises(ProviderConnectionError):
        await agent.call("x")
    spans = by_op(exporter)
    for span in (spans["invoke_agent"][0], spans["chat"][0]):
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes["error.type"] == "ProviderConnectionError"


async def test_tool_error_result_marks_the_tool_span() -> None:
    telemetry, exporter = tracing()

    def flaky(x: int) -> str:
        """Fails."""
        raise RuntimeError("boom")

    model = ScriptedModel([Reply(tool_calls=[Call("flaky", {"x": 1})]), "ok"])
    await ReActAgent("a", model, tools=[flaky], telemetry=telemetry).call("go")
    (tool,) = by_op(exporter)["execute_tool"]
    assert tool.attributes["error.type"] == "tool_error"
    assert tool.status.status_code == StatusCode.ERROR


async def test_cancelled_call_ends_its_spans() -> None:
    telemetry, exporter = tracing()
    model = ScriptedModel([Reply(text="x" * 50, chunk_size=1, delay=0.01)])
    agent = ReActAgent("a", model, telemetry=telemetry)
    async with aclosing(agent.stream("hi")) as events:
        async for event in events:
            if event.type == "reasoning_chunk":
                break
    async with asyncio.timeout(60):  # the request's own generator is finalized by the loop
        while "chat" not in by_op(exporter):  # noqa: ASYNC110 - the exporter has no event
            await asyncio.sleep(0.01)
    spans = by_op(exporter)
    for span in (spans["invoke_agent"][0], spans["chat"][0]):
        assert span.attributes["error.type"] == "cancelled"
        assert span.end_time is not None

    task = asyncio.ensure_future(ReActAgent("b", ScriptedModel([
        Reply(text="slow", delay=5)]), telemetry=telemetry).call("hi"))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [s.attributes["error.type"] for s in exporter.get_finished_spans()
            if s.name == "invoke_agent b"] == ["cancelled"]


async def test_disabled_telemetry_records_nothing() -> None:
    telemetry, exporter = tracing()
    off = Telemetry(enabled=False, tracer_provider=None)
    await ReActAgent("a", ScriptedModel(["hi"]), telemetry=off).call("x")
    assert exporter.get_finished_spans() == ()
    assert telemetry.enabled and not off.enabled


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "gemini", "ollama"])
async def test_adapter_request_span_has_response_model_and_server(vendor: str) -> None:
    telemetry, exporter = tracing()
    fake_cls, model_factory = _adapter(vendor)
    async with fake_cls() as fake:
        fake.add(FakeReply(text="hello"))
        model = model_factory(fake.url)
        async with ReActAgent("a", model, telemetry=telemetry) as agent:
            await agent.call("hi")
    (chat,) = by_op(exporter)["chat"]
    attributes = chat.attributes
    assert attributes["gen_ai.provider.name"] == {"gemini": "gcp.gemini"}.get(vendor, vendor)
    assert attributes["gen_ai.response.model"]
    assert attributes["server.address"] == "127.0.0.1"
    assert isinstance(attributes["server.port"], int)
    if vendor != "ollama":  # Ollama's replies carry no id
        assert attributes["gen_ai.response.id"]


def _adapter(vendor: str) -> tuple[Any, Any]:
    from agentflow.providers.anthropic import AnthropicChatModel
    from agentflow.providers.gemini import GeminiChatModel
    from agentflow.providers.ollama import OllamaChatModel
    from agentflow.providers.openai import OpenAIChatModel

    from .fakes.anthropic import AnthropicFake
    from .fakes.gemini import GeminiFake
    from .fakes.ollama import OllamaFake
    from .fakes.openai import OpenAIFake

    return {
        "openai": (OpenAIFake, lambda url: OpenAIChatModel("gpt-4o-mini", base_url=url,
                                                           api_key="k")),
        "anthropic": (AnthropicFake, lambda url: AnthropicChatModel(
            "claude-sonnet-4-5", base_url=url, api_key="k")),
        "gemini": (GeminiFake, lambda url: GeminiChatModel("gemini-2.5-flash", base_url=url,
                                                           api_key="k")),
        "ollama": (OllamaFake, lambda url: OllamaChatModel("qwen3", base_url=url)),
    }[vendor]


def test_default_telemetry_uses_the_global_provider_set_later() -> None:
    # in a subprocess: a global tracer provider can be set once per process
    import subprocess
    import sys

    script = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from agentflow import ReActAgent
from agentflow.testing import ScriptedModel

agent = ReActAgent("a", ScriptedModel(["one", "two"]))   # made before any provider
asyncio.run(agent.call("x"))                             # nothing records: no spans made
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
asyncio.run(agent.call("y"))
print(sorted(s.name for s in exporter.get_finished_spans()))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['chat scripted', 'invoke_agent a']"


def _run_script(script: str, env: dict[str, str] | None = None) -> str:
    import os
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if k != "OTEL_PYTHON_TRACER_PROVIDER"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env={**environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_no_span_is_started_while_no_sdk_provider_is_set() -> None:
    # no provider, then opentelemetry's own no-op provider set globally: no span
    # is asked for at all (not even a non-recording one)
    script = """
import asyncio
from opentelemetry import trace
from agentflow import ReActAgent
from agentflow.testing import ScriptedModel

started = []
for cls in (trace.ProxyTracer, trace.NoOpTracer):
    original = cls.start_span
    def counting(self, *a, _original=original, **k):
        started.append(a[0] if a else k.get("name"))
        return _original(self, *a, **k)
    cls.start_span = counting
agent = ReActAgent("a", ScriptedModel(["one", "two"]))
asyncio.run(agent.call("x"))
trace.set_tracer_provider(trace.NoOpTracerProvider())
asyncio.run(agent.call("y"))
print(len(started))
"""
    assert _run_script(script) == "0"


def test_default_telemetry_uses_the_provider_named_by_the_environment() -> None:
    # OTEL_PYTHON_TRACER_PROVIDER: opentelemetry loads the provider it names
    # when a tracer is first asked for; the agent's spans go to it
    script = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from agentflow import ReActAgent
from agentflow.testing import ScriptedModel

agent = ReActAgent("a", ScriptedModel(["one"]))
exporter = InMemorySpanExporter()
trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(exporter))
asyncio.run(agent.call("x"))
print(sorted(s.name for s in exporter.get_finished_spans()))
"""
    out = _run_script(script, {"OTEL_PYTHON_TRACER_PROVIDER": "sdk_tracer_provider"})
    assert out == "['chat scripted', 'invoke_agent a']"


async def test_recorded_content_never_fails_a_call() -> None:
    """With content recorded, a message holding a lone surrogate (a web
    body's half emoji) or a tool call with an integer beyond 64 bits raised
    ``TypeError`` from the call (the attributes' JSON)."""
    telemetry, exporter = tracing(record_content=True)

    def lookup(n: int) -> str:
        """Look an invoice up by its number."""
        return f"invoice {n}"

    big = "1234567890123456789012345"
    model = ScriptedModel([Reply(tool_calls=[Call("lookup", f'{{"n": {big}}}')]), "paid"])
    agent = ReActAgent("a", model, tools=[lookup], telemetry=telemetry)
    reply = await agent.call("invoice caf\ud83d")
    assert reply.text == "paid"
    spans = by_op(exporter)
    assert "caf\ufffd" in spans["chat"][0].attributes["gen_ai.input.messages"]
    tool = spans["execute_tool"][0].attributes
    assert tool["gen_ai.tool.call.arguments"] == f'{{"n":{big}}}'
    assert tool["gen_ai.tool.call.result"] == f"invoice {big}"
