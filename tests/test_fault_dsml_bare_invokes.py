"""Vendor fault: DeepSeek V4's DSML tool calls without their section's opening tag.

At long context DeepSeek V4 leaves out the ``<｜DSML｜tool_calls>`` token
that opens its tool-call section and writes the ``<｜DSML｜invoke ...>``
blocks bare, the section's closing tag after them or nothing
(https://github.com/vllm-project/vllm/issues/48931: "orphan
``<｜DSML｜invoke …>`` with the trailing ``</｜DSML｜tool_calls>`` but no START
wrapper"; https://github.com/sgl-project/sglang/issues/40236: "Bare invoke
with no section wrapper"). vLLM and SGLang then return the markup as the
reply's text with finish reason ``stop``; agentflow completed with that
markup as the answer and no tool ever ran: a transcript of work never done.
Invokes that run, bare, to the reply's end are read as the section they
belong to, as is a section never closed (sglang#40236, "Section opened but
never closed"); prose that only mentions the tag stays text. An invoke whose
parameter tag the model broke (``<parameter name="enabled">true</｜DSML｜parameter>``,
https://github.com/sgl-project/sglang/pull/39435) ran as a call without that
argument, its default used: it is no call now.

Served by the DeepSeek fake and by a generic OpenAI-compatible server (the
OpenAI fake) hosting a DeepSeek model, streamed and whole."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentflow import Complete, ReActAgent
from agentflow.model import ChatModel
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])

ran: list[str] = []


def exec_command(cmd: str, timeout: int = 30) -> str:
    """Run a shell command."""
    ran.append(f"{cmd} ({timeout}s)")
    return f"ran {cmd}"


def invoke(cmd: str, bar: str = "｜", timeout: int | None = None) -> str:
    """One DSML invoke of ``exec_command``, as DeepSeek's encoding writes it."""
    params = f'<{bar}DSML{bar}parameter name="cmd" string="true">{cmd}</{bar}DSML{bar}parameter>\n'
    if timeout is not None:
        params += (f'<{bar}DSML{bar}parameter name="timeout" string="false">{timeout}'
                   f"</{bar}DSML{bar}parameter>\n")
    return f'<{bar}DSML{bar}invoke name="exec_command">\n{params}</{bar}DSML{bar}invoke>\n'


REPLIES = {
    "closing-tag": invoke("ls -la") + invoke("df -h", timeout=5) + "</｜DSML｜tool_calls>",
    "nothing-after": invoke("ls -la") + invoke("df -h", timeout=5),
    "text-first": "Let me look.\n" + invoke("ls -la") + invoke("df -h", timeout=5)
                  + "</｜DSML｜tool_calls>\n",
    "ascii-bars": invoke("ls -la", "|") + invoke("df -h", "|", 5) + "</|DSML|tool_calls>",
    "unclosed-section": "<｜DSML｜tool_calls>\n" + invoke("ls -la") + invoke("df -h", timeout=5),
}

SERVERS: dict[str, tuple[type[FakeServer], Callable[[str, bool], ChatModel]]] = {
    "deepseek": (DeepSeekFake, lambda url, stream: DeepSeekChatModel(
        "deepseek-v4-flash", base_url=url, api_key="k", stream=stream, settings=FAST)),
    "vllm": (OpenAIFake, lambda url, stream: OpenAIChatModel(
        "deepseek-ai/DeepSeek-V4-Flash", base_url=url, api_key="k", stream=stream,
        settings=FAST)),
}


@STREAMS
@pytest.mark.parametrize("server", sorted(SERVERS))
@pytest.mark.parametrize("shape", sorted(REPLIES))
async def test_bare_invokes_are_the_calls_they_write(shape: str, server: str,
                                                     stream: bool) -> None:
    ran.clear()
    fake_class, make = SERVERS[server]
    async with fake_class() as fake:
        fake.add(FakeReply(text=REPLIES[shape], chunk_size=7), FakeReply(text="Both done."))
        async with make(fake.url, stream) as model:
            events = [e async for e in ReActAgent("ops", model, tools=[exec_command])
                      .stream("List the files and the disk use.")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Both done."
    assert sorted(ran) == ["df -h (5s)", "ls -la (30s)"] and len(fake.requests) == 2
    sent = fake.bodies[1]["messages"][-3]
    assert "DSML" not in (sent.get("content") or "")


@STREAMS
async def test_prose_that_mentions_an_invoke_stays_text(stream: bool) -> None:
    ran.clear()
    prose = ('To call a tool, DeepSeek writes <｜DSML｜invoke name="exec_command"> and its '
             "parameters; nothing was run here.")
    async with DeepSeekFake() as fake:
        fake.add(FakeReply(text=prose, chunk_size=7))
        async with DeepSeekChatModel("deepseek-v4-flash", base_url=fake.url, api_key="k",
                                     stream=stream, settings=FAST) as model:
            reply = await ReActAgent("ops", model, tools=[exec_command]).call("How?")
    assert reply.text == prose and ran == [] and len(fake.requests) == 1


flags: list[bool] = []


def set_flag(enabled: bool = False) -> str:
    """Set the flag."""
    flags.append(enabled)
    return f"flag {enabled}"


@STREAMS
async def test_a_broken_parameter_tag_is_no_call_without_it(stream: bool) -> None:
    flags.clear()
    broken = ("I'll enable the flag.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"set_flag\">\n"
              '<parameter name="enabled">true</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
              "</｜DSML｜tool_calls>")
    async with DeepSeekFake() as fake:
        fake.add(FakeReply(text=broken, chunk_size=7), FakeReply(text="unused"))
        async with DeepSeekChatModel("deepseek-v4-flash", base_url=fake.url, api_key="k",
                                     stream=stream, settings=FAST) as model:
            await ReActAgent("ops", model, tools=[set_flag]).call("Enable the flag.")
    assert flags == []  # never set_flag(enabled=False), the opposite of what was asked
