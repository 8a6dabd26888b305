"""Issue 32, kind 3: a prompt a server cuts silently to its context window.

Ollama: a request asks for the window it needs (``options.num_ctx``) when
that is larger than the server's assumed one; a prompt the server cut anyway
(a ``num_ctx`` pinned too small: ``prompt_eval_count`` no more than the
window while we sent clearly more) is a ``ContextLengthError``, never a
silent answer. A llama.cpp-style OpenAI-compatible server with a known
window (``usage.prompt_tokens``, or its ``truncated: true`` flag) the same.
Served by the Ollama and OpenAI fakes (``num_ctx`` / ``n_ctx`` windows)."""

from __future__ import annotations

import pytest

from agentflow import ReActAgent
from agentflow.errors import ContextLengthError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions
from agentflow.providers._context_cuts import silent_cut, window_needed
from agentflow.providers.ollama import OllamaChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate
from tests.fakes.base import FakeReply
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

DOCUMENT = "word " * 8000  # ~10,000 tokens (4 characters a token)


@pytest.mark.parametrize("stream", [True, False])
async def test_ollama_asks_for_the_window_the_request_needs(stream: bool) -> None:
    async with OllamaFake(num_ctx=4096) as fake:
        fake.add(FakeReply(text="read it all"))
        model = OllamaChatModel("llama3.2", base_url=fake.url, stream=stream, settings=FAST)
        try:
            reply = await generate(model, [Msg.user(DOCUMENT)], (),
                                   GenerateOptions(max_tokens=500))
        finally:
            await model.aclose()
    sent = fake.requests[0].body["options"]["num_ctx"]
    assert sent == window_needed(10_000, 500) == 12288 and fake.cut_prompts == 0
    assert reply.message.text == "read it all"


@pytest.mark.parametrize("stream", [True, False])
async def test_ollama_cut_prompt_is_a_context_length_error(stream: bool) -> None:
    async with OllamaFake(num_ctx=4096) as fake:
        fake.default = FakeReply(text="an answer over the end of the document only")
        model = OllamaChatModel("llama3.2", base_url=fake.url, stream=stream, settings=FAST,
                                num_ctx=4096)  # pinned too small: the server cuts
        try:
            with pytest.raises(ContextLengthError) as info:
                await ReActAgent("cut", model).call(DOCUMENT)
        finally:
            await model.aclose()
    assert fake.cut_prompts >= 1
    assert info.value.limit == 4096 and info.value.requested == 10_000
    assert "chunk" in str(info.value)


async def test_ollama_short_prompts_send_no_window_and_are_not_cut() -> None:
    async with OllamaFake(num_ctx=4096) as fake:
        fake.add(FakeReply(text="ok", usage=(3, 1)))  # a cached prefix: few evaluated
        model = OllamaChatModel("llama3.2", base_url=fake.url, settings=FAST)
        try:
            reply = await generate(model, [Msg.user("hi " * 100)])
        finally:
            await model.aclose()
    assert "num_ctx" not in (fake.requests[0].body.get("options") or {})
    assert reply.message.text == "ok"


@pytest.mark.parametrize("flag", [False, True], ids=["count", "truncated-flag"])
@pytest.mark.parametrize("stream", [True, False])
async def test_llama_cpp_style_cut_is_a_context_length_error(stream: bool, flag: bool) -> None:
    async with OpenAIFake() as fake:
        fake.n_ctx, fake.truncated_flag = 4096, flag
        fake.default = FakeReply(text="an answer over part of the input")
        window = OpenAIChatModel("local-gguf", api_key="k").profile.with_(
            context_window=4096)  # llama-server's n_ctx
        model = OpenAIChatModel("local-gguf", base_url=fake.url, api_key="k", stream=stream,
                                settings=FAST, profile=window)
        try:
            with pytest.raises(ContextLengthError):
                await generate(model, [Msg.user(DOCUMENT)])
        finally:
            await model.aclose()
    assert fake.cut_prompts >= 1


@pytest.mark.parametrize("stream", [True, False])
async def test_a_cut_is_refused_on_the_chunk_path_too(stream: bool) -> None:
    """``stream()``'s chunks (the path ``generate``'s whole reply does not
    take) check the usage for a cut as the whole reply does, one helper for
    both (``OpenAISending._reply_source``)."""
    async with OpenAIFake() as fake:
        fake.n_ctx = 4096
        fake.default = FakeReply(text="an answer over part of the input")
        window = OpenAIChatModel("local-gguf", api_key="k").profile.with_(context_window=4096)
        model = OpenAIChatModel("local-gguf", base_url=fake.url, api_key="k", stream=stream,
                                settings=FAST, profile=window)
        try:
            with pytest.raises(ContextLengthError):
                async for _ in model.stream([Msg.user(DOCUMENT)], [], GenerateOptions()):
                    pass
        finally:
            await model.aclose()
    assert fake.cut_prompts == 1


def test_the_rule() -> None:
    assert silent_cut(10_000, 4096, 4096)          # sent more, evaluated the window
    assert not silent_cut(10_000, 4096, None)      # nothing said: no claim
    assert not silent_cut(4200, 4096, 4096)        # within our count's margin
    assert not silent_cut(3000, 4096, 12)          # a cached prefix: fits, not a cut
    assert not silent_cut(10_000, 16_384, 9000)    # the window held it
