"""One end-to-end conformance suite, run by every vendor against its fake.

Each vendor is a ``Kit``: its registry name and a model id (the model is
built through ``agentflow.providers.registry.get_model``, so registration is
tested too), its fake server, and a ``Wire`` that reads request bodies in
that vendor's format. The scenarios are the same for all; what each one
expects is drawn from the model's ``ModelProfile`` (which strategy it binds,
whether a forced ``tool_choice`` is sent or a reminder instead).

A new vendor joins by writing its adapter, profile and fake and adding a
row to ``KITS``; a kit whose modules are missing is reported as skipped.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import pytest
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.errors import ProviderConnectionError
from agentflow.events import Complete
from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.middleware.base import Middleware
from agentflow.model import ChatModel, GenerateOptions, ToolChoice, Usage
from agentflow.output.strategies import ToolStrategy, choose_strategy
from agentflow.providers.registry import get_model
from agentflow.state import AgentState
from tests.fakes.base import FakeCall, FakeError, FakeReply, FakeServer
from tests.provider_scenarios import FAST, close_models, tracked


class Wire(Protocol):
    """Reads a vendor's request bodies (the fakes implement it as static methods)."""

    def tool_names(self, body: Any) -> list[str]: ...

    def forced_tool(self, body: Any) -> str | None: ...

    def request_text(self, body: Any) -> str: ...

    def has_native_output(self, body: Any) -> bool: ...

    def rate_limited(self, retry_after: float = 0) -> FakeError: ...


class OpenAIWire:
    """``Wire`` for the OpenAI chat-completions body shape (OpenAI, DeepSeek,
    DashScope compatible mode, GLM, MiniMax)."""

    def __init__(self, error_body: Callable[[], Any] | None = None) -> None:
        self._error_body = error_body

    @staticmethod
    def tool_names(body: Any) -> list[str]:
        return [t["function"]["name"] for t in body.get("tools", [])]

    @staticmethod
    def forced_tool(body: Any) -> str | None:
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            return str(choice["function"]["name"])
        if choice == "required":
            return "*"
        # emulated (GLM, MiniMax): one tool offered, a closing system message naming it
        names = [t["function"]["name"] for t in body.get("tools") or []]
        last = (body.get("messages") or [{}])[-1]
        if choice is None and len(names) == 1 and last.get("role") == "system" and (
                f"`{names[0]}`" in str(last.get("content"))):
            return str(names[0])
        return None

    @staticmethod
    def request_text(body: Any) -> str:
        texts = []
        for message in body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                texts.extend(str(part.get("text", "")) for part in content)
            elif content:
                texts.append(str(content))
        return "\n".join(texts)

    @staticmethod
    def has_native_output(body: Any) -> bool:
        return "response_format" in body

    def rate_limited(self, retry_after: float = 0) -> FakeError:
        body = self._error_body() if self._error_body else {"error": {
            "message": "Rate limit reached for requests", "type": "requests",
            "param": None, "code": "rate_limit_exceeded"}}
        return FakeError(429, body, {"retry-after": f"{retry_after:g}"})


@dataclass(frozen=True)
class Kit:
    """One vendor under test."""

    id: str
    vendor: str
    model: str
    fake: Callable[[], FakeServer]
    wire: Wire
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def build(self, fake: FakeServer, stream: bool) -> ChatModel:
        return get_model(f"{self.vendor}:{self.model}", api_key="test-key", base_url=fake.url,
                         settings=FAST, stream=stream, **self.kwargs)


Build = Callable[[bool], ChatModel]


def _kit(kit_id: str, vendor: str, model: str, fake: str, wire: Wire | None = None,
         **kwargs: Any) -> Any:
    """A ``pytest.param`` for a kit, skipped (with the reason) when its fake
    or adapter module does not exist yet."""
    module_name, _, class_name = fake.partition(":")
    try:
        importlib.import_module(f"agentflow.providers.{vendor}")
        fake_class = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        return pytest.param(None, id=kit_id, marks=pytest.mark.skip(reason=f"no kit yet: {exc}"))
    kit = Kit(kit_id, vendor, model, fake_class, wire or fake_class, kwargs)
    return pytest.param(kit, id=kit_id)


KITS = [
    _kit("anthropic", "anthropic", "claude-3-5-haiku-latest",
         "tests.fakes.anthropic:AnthropicFake"),
    _kit("anthropic-native", "anthropic", "claude-sonnet-4-5",
         "tests.fakes.anthropic:AnthropicFake"),
    _kit("anthropic-thinking", "anthropic", "claude-sonnet-4-0",
         "tests.fakes.anthropic:AnthropicFake", thinking_budget=2048),
    _kit("gemini", "gemini", "gemini-2.0-flash", "tests.fakes.gemini:GeminiFake"),
    _kit("gemini-3", "gemini", "gemini-3-pro-preview", "tests.fakes.gemini:GeminiFake"),
    _kit("ollama", "ollama", "llama3.1:8b", "tests.fakes.ollama:OllamaFake"),
    # OpenAI family: one wire shape; each vendor's own fake and adapter.
    _kit("openai", "openai", "gpt-4o-mini", "tests.fakes.openai:OpenAIFake", OpenAIWire()),
    _kit("deepseek", "deepseek", "deepseek-chat", "tests.fakes.deepseek:DeepSeekFake",
         OpenAIWire()),
    _kit("dashscope", "dashscope", "qwen-plus", "tests.fakes.dashscope:DashScopeFake",
         OpenAIWire()),
    _kit("glm", "glm", "glm-4.5", "tests.fakes.glm:GLMFake", OpenAIWire(lambda: {"error": {
        "code": "1302", "message": "High concurrency usage of this API, please reduce "
                                   "concurrency or contact customer service"}})),
    _kit("minimax", "minimax", "MiniMax-M2.7", "tests.fakes.minimax:MiniMaxFake", OpenAIWire()),
]
"""Every vendor of DESIGN.md §4. Extend here when a vendor is added."""


class Contact(BaseModel):
    name: str
    email: str


CONTACT = {"name": "Ann", "email": "ann@example.org"}


def lookup(query: str) -> str:
    """Look a person up."""
    return f"{query}: ann@example.org"


@pytest.fixture(params=KITS)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=[True, False], ids=["stream", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
async def fake(kit: Kit) -> AsyncIterator[FakeServer]:
    async with kit.fake() as server:
        yield server


@pytest.fixture
async def build(kit: Kit, fake: FakeServer) -> AsyncIterator[Build]:
    """Builds the kit's model against the fake (``stream`` or not); closes them after."""
    def make(stream: bool) -> ChatModel:
        built: ChatModel = tracked(kit.build(fake, stream))
        return built

    yield make
    await close_models()


async def run(agent: ReActAgent, *args: Any, **kw: Any) -> Complete:
    done = [e async for e in agent.stream(*args, **kw)][-1]
    assert isinstance(done, Complete)
    return done


def answer(kind: str, data: Mapping[str, Any]) -> FakeReply:
    """The reply that carries ``data`` on a strategy: the output tool's call,
    or JSON text (native and prompt)."""
    if kind == "tool":
        return FakeReply(tool_calls=[FakeCall("generate_response", data)])
    import orjson
    return FakeReply(text=orjson.dumps(dict(data)).decode())


# ----------------------------------------------------------------------------- scenarios


async def test_text_reply(kit: Kit, fake: FakeServer, build: Build,
                  stream: bool) -> None:
    fake.add(FakeReply(text="Hello from the fake.", usage=(12, 7)))
    done = await run(ReActAgent("c", build(stream), sys_prompt="Be brief."), "hi")
    assert done.message.text == "Hello from the fake."
    assert done.usage.total_tokens >= 19 and done.usage.requests == 1
    assert "Be brief." in kit.wire.request_text(fake.bodies[0])


async def test_tool_round(kit: Kit, fake: FakeServer, build: Build,
                  stream: bool) -> None:
    fake.add(FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"})]),
             FakeReply(text="Ann's email is ann@example.org."))
    state = AgentState()
    agent = ReActAgent("c", build(stream), tools=[lookup])
    done = await run(agent, "Find Ann", state=state)
    assert done.message.text == "Ann's email is ann@example.org."
    assert [m.role for m in state.memory] == ["user", "assistant", "tool", "assistant"]
    assert "lookup" in kit.wire.tool_names(fake.bodies[0])
    assert "Ann: ann@example.org" in kit.wire.request_text(fake.bodies[1])


async def test_structured_output(kit: Kit, fake: FakeServer, build: Build,
                  stream: bool) -> None:
    model = build(stream)
    kind = choose_strategy(model.profile, has_tools=False)
    fake.add(answer(kind, CONTACT))
    done = await run(ReActAgent("c", model), "Extract: Ann, ann@example.org", Contact)
    assert done.output == Contact(**CONTACT) and done.stop_reason == "structured_output"
    body = fake.bodies[0]
    assert kit.wire.has_native_output(body) == (kind == "native")
    assert ("generate_response" in kit.wire.tool_names(body)) == (kind == "tool")


async def test_forced_retry_after_prose(kit: Kit, fake: FakeServer, build: Build,
                  stream: bool) -> None:
    model = build(stream)
    if not model.profile.supports_tools:
        pytest.skip("the profile has no tools: no tool strategy to force")
    fake.add(FakeReply(text="Ann's email is ann@example.org."), answer("tool", CONTACT))
    agent = ReActAgent("c", model)
    done = await run(agent, "Extract", Contact, strategy=ToolStrategy())
    assert done.output == Contact(**CONTACT) and done.forced_retries == 1
    forced = kit.wire.forced_tool(fake.bodies[1])
    if model.profile.allows_tool_choice(ToolChoice.specific("generate_response"),
                                        agent.options):
        assert forced == "generate_response"
    else:
        assert forced is None
        assert "`generate_response`" in kit.wire.request_text(fake.bodies[1])


async def test_validation_retry(kit: Kit, fake: FakeServer, build: Build,
                  stream: bool) -> None:
    model = build(stream)
    kind = choose_strategy(model.profile, has_tools=False)
    fake.add(answer(kind, {"name": "Ann"}), answer(kind, CONTACT))
    done = await run(ReActAgent("c", model), "Extract", Contact)
    assert done.output == Contact(**CONTACT) and done.validation_retries == 1
    assert "email" in kit.wire.request_text(fake.bodies[1])


async def test_rate_limit_is_retried(kit: Kit, fake: FakeServer, build: Build,
                  stream: bool) -> None:
    fake.add(kit.wire.rate_limited(0), FakeReply(text="ok"))
    done = await run(ReActAgent("c", build(stream)), "hi")
    assert done.message.text == "ok" and len(fake.requests) == 2


async def test_stream_cut_leaves_state_unchanged(kit: Kit, fake: FakeServer,
                                                 build: Build) -> None:
    state = AgentState([Msg.user("before"), Msg.assistant("kept")])
    snapshot = state.to_json()
    # cut after the reply's first events (DeepSeek's fake opens with two keep-alives:
    # a stream cut before its first event is no reply yet, and is retried)
    fake.add(FakeReply(text="A long reply that will never arrive whole.", chunk_size=4,
                       cut_after=4))
    # call() asks for whole replies unless the options choose streaming
    agent = ReActAgent("c", build(True), options=GenerateOptions(stream=True))
    with pytest.raises(ProviderConnectionError) as info:
        await agent.call("hi", Contact, state=state)
    assert info.value.partial
    assert state.to_json() == snapshot


# ----------------------------------------------------------------------------- transports


class _Usage(Middleware):
    """Keeps the usage of every call it sees (``call()`` returns only the message)."""

    def __init__(self) -> None:
        self.usage: list[Usage] = []

    async def on_call_end(self, ex: CallExecution) -> None:
        self.usage.append(ex.usage)


def _conversations(kind: str) -> dict[str, list[FakeReply]]:
    """Scripted conversations, streamed in small fragments when streamed."""
    def out(data: Mapping[str, Any]) -> FakeReply:
        reply = answer(kind, data)
        return FakeReply(text=reply.text, tool_calls=reply.tool_calls, chunk_size=3,
                         usage=(40, 9))
    return {
        "text": [FakeReply(text="Hello from the fake, in many small pieces.", chunk_size=3,
                           usage=(12, 7))],
        "tool_round": [FakeReply(tool_calls=[FakeCall("lookup", {"query": "Ann"}, id="c1")],
                                 chunk_size=4, usage=(20, 5)),
                       FakeReply(text="Ann's email is ann@example.org.", chunk_size=3,
                                 usage=(30, 8))],
        "structured": [out(CONTACT)],
        "validation_retry": [out({"name": "Ann"}), out(CONTACT)],
    }


def _shape(messages: Any) -> list[Any]:
    """Messages without the ids a vendor or the adapter invents per reply."""
    return [(m.role, [(type(b).__name__, getattr(b, "text", None), getattr(b, "name", None),
                       dict(getattr(b, "input", {}) or {}), getattr(b, "output", None),
                       getattr(b, "is_error", None)) for b in m.content])
            for m in messages]


@pytest.mark.parametrize("conversation", ["text", "tool_round", "structured",
                                          "validation_retry"])
async def test_call_fetches_whole_replies_and_stream_streams(
        kit: Kit, fake: FakeServer, build: Build, conversation: str) -> None:
    """call() tells the model nobody reads deltas: one whole reply per request,
    and the same final message, memory and usage as stream() over SSE."""
    model = build(True)
    kind = choose_strategy(model.profile, has_tools=True)
    output = Contact if conversation in ("structured", "validation_retry") else None
    script = _conversations(kind)[conversation]
    results = {}
    for transport in ("stream", "whole"):
        fake.add(*script)
        sent = len(fake.transports)
        usage = _Usage()
        agent = ReActAgent("c", model, tools=[lookup], middleware=[usage])
        state = AgentState()
        if transport == "stream":
            done = await run(agent, "Find Ann", output, state=state)
            reply, total = done.message, done.usage
            assert total == usage.usage[0]
        else:
            reply = await agent.call("Find Ann", output, state=state)
            total = usage.usage[0]
        assert fake.transports[sent:] == [transport] * len(script)
        results[transport] = (_shape([reply]), _shape(state.memory), total,
                              reply.output if output else None)
    assert results["whole"] == results["stream"]
    streamed_output = results["stream"][3]
    assert output is None or streamed_output == Contact(**CONTACT)
    assert results["whole"][2].requests == len(script)


async def test_call_streams_when_the_options_say_so(kit: Kit, fake: FakeServer,
                                                    build: Build) -> None:
    """An agent whose options choose a transport keeps it under call()."""
    fake.add(FakeReply(text="streamed anyway"))
    agent = ReActAgent("c", build(False), options=GenerateOptions(stream=True))
    assert (await agent.call("hi")).text == "streamed anyway"
    assert fake.transports == ["stream"]
