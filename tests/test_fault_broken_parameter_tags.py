"""Vendor fault: a tool-call markup block whose parameter tag the model broke.

Models that write their tool calls as XML-like markup in the reply text
sometimes break a parameter's tag: DeepSeek-V4.1 wrote
``<parameter name="enabled">true</｜DSML｜parameter>`` in an invoke, and a
parser that keeps only well-formed parameter tags "parses as ``{}`` with no
warning": "an executable zero-argument call on the agent side"
(https://github.com/sgl-project/sglang/pull/39435). The tool then runs with
its defaults, here the opposite of what the model asked. Qwen3-Coder's
``<function=..><parameter=..>`` blocks (DashScope, and Seed-OSS which writes
the same), and MiniMax M2's ``<invoke><parameter name=..>`` blocks were read
so. A block holding anything but its calls and their parameters is no call
now (it stays text, as any unreadable block does); a well-formed one runs.

Served by each vendor's fake (a generic server's for Seed-OSS), streamed and
whole, through the public API."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentflow import ReActAgent
from agentflow.model import ChatModel
from agentflow.providers.dashscope import DashScopeChatModel
from agentflow.providers.minimax import MiniMaxChatModel
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.dashscope import DashScopeFake
from tests.fakes.minimax import MiniMaxFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])

flags: list[bool] = []


def set_flag(enabled: bool = False) -> str:
    """Set the flag."""
    flags.append(enabled)
    return f"flag {enabled}"


def qwen(param: str) -> str:
    return f"<tool_call>\n<function=set_flag>\n{param}\n</function>\n</tool_call>"


def seed(param: str) -> str:
    return f"<seed:tool_call>\n<function=set_flag>\n{param}\n</function>\n</seed:tool_call>"


def minimax(param: str) -> str:
    return (f'<minimax:tool_call>\n<invoke name="set_flag">\n{param}\n</invoke>\n'
            "</minimax:tool_call>")


FORMATS: dict[str, tuple[Callable[[str], str], str, str, type[FakeServer],
                         Callable[[str, bool], ChatModel]]] = {
    # format: writer, broken parameter, well-formed parameter, fake, model
    "qwen-xml": (qwen, "<parameter enabled>\ntrue\n</parameter>",
                 "<parameter=enabled>\ntrue\n</parameter>", DashScopeFake,
                 lambda url, stream: DashScopeChatModel(
                     "qwen3-coder-plus", base_url=url, api_key="k", stream=stream,
                     settings=FAST)),
    "seed-oss": (seed, "<parameter enabled>true</parameter>",
                 "<parameter=enabled>true</parameter>", OpenAIFake,
                 lambda url, stream: OpenAIChatModel(
                     "ByteDance-Seed/Seed-OSS-36B-Instruct", base_url=url, api_key="k",
                     stream=stream, settings=FAST)),
    "minimax": (minimax, '<param name="enabled">true</parameter>',
                '<parameter name="enabled">true</parameter>', MiniMaxFake,
                lambda url, stream: MiniMaxChatModel(
                    "MiniMax-M2", base_url=url, api_key="k", stream=stream, settings=FAST)),
}


@STREAMS
@pytest.mark.parametrize("fmt", sorted(FORMATS))
async def test_a_broken_parameter_tag_is_no_call_without_it(fmt: str, stream: bool) -> None:
    write, broken, _, fake_class, make = FORMATS[fmt]
    flags.clear()
    async with fake_class() as fake:
        fake.add(FakeReply(text="I'll enable it.\n" + write(broken), chunk_size=6),
                 FakeReply(text="unused"))
        async with make(fake.url, stream) as model:
            await ReActAgent("ops", model, tools=[set_flag]).call("Enable the flag.")
    assert flags == []  # never set_flag(enabled=False)


@STREAMS
@pytest.mark.parametrize("fmt", sorted(FORMATS))
async def test_a_well_formed_block_still_runs(fmt: str, stream: bool) -> None:
    write, _, good, fake_class, make = FORMATS[fmt]
    flags.clear()
    async with fake_class() as fake:
        fake.add(FakeReply(text="I'll enable it.\n" + write(good), chunk_size=6),
                 FakeReply(text="Enabled."))
        async with make(fake.url, stream) as model:
            reply = await ReActAgent("ops", model, tools=[set_flag]).call("Enable the flag.")
    assert flags == [True] and reply.text == "Enabled."
