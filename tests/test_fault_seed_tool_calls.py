"""Vendor fault: Seed-OSS's tool calls left in the reply text.

ByteDance's Seed-OSS writes Qwen3-Coder's XML call inside its own wrapper:
``<seed:tool_call>\\n<function=get_weather>\\n<parameter=city>Paris</parameter>
\\n</function>\\n</seed:tool_call>`` (vLLM's ``seed_oss`` parser is its Qwen3
parser with the ``<seed:*>`` tokens, https://github.com/vllm-project/vllm/pull/46314).
Without that parser, or when a server's streaming parser misses the call
(https://github.com/vllm-project/vllm/issues/26573: "When stream=True, the
seed-oss model, the tool_calls = None"), the block came back as the answer and
the tool never ran. For Seed-OSS models the adapter now reads it as the call it
is, streamed and whole, values typed from the tool's schema; a block that does
not parse stays text.

Served by an OpenAI-compatible fake and the Ollama fake, through the public API."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Complete, ToolResult
from tests.markup_scenarios import (
    STREAMS,
    ollama_weather_results,
    structured_reply,
    text_reply,
    weather_events,
)

SEED = "ByteDance-Seed/Seed-OSS-36B-Instruct"
CALL = ("<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</seed:tool_call>")


class Ticket(BaseModel):
    id: int
    urgent: bool


@STREAMS
async def test_a_seed_block_runs_the_tool(stream: bool) -> None:
    events = await weather_events(SEED, "Let me check.\n" + CALL, "Sunny.", stream=stream,
                                  chunk_size=5)
    assert [(e.name, e.output) for e in events if isinstance(e, ToolResult)] == [
        ("get_weather", "Paris: sunny")]
    done = events[-1]
    assert isinstance(done, Complete) and done.message.text == "Sunny."


@STREAMS
async def test_two_seed_blocks_on_ollama(stream: bool) -> None:
    text = CALL + CALL.replace("Paris", "Rome")
    assert await ollama_weather_results("seed-oss:36b", text, stream=stream) == [
        "Paris: sunny", "Rome: sunny"]


@STREAMS
async def test_structured_output_through_the_block_is_typed(stream: bool) -> None:
    text = ("<seed:tool_call><function=generate_response><parameter=id>7</parameter>"
            "<parameter=urgent>true</parameter></function></seed:tool_call>")
    reply, fake = await structured_reply(SEED, text, Ticket, stream=stream)
    assert reply.output == Ticket(id=7, urgent=True)
    assert len(fake.requests) == 1


@STREAMS
async def test_a_block_that_does_not_parse_stays_text(stream: bool) -> None:
    text = "<seed:tool_call>I would look the weather up.</seed:tool_call>"
    reply, _ = await text_reply(SEED, text, stream=stream)
    assert reply.text == text
