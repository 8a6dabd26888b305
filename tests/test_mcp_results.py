"""What the model reads of an MCP ``tools/call`` result (``agentflow.mcp._results``):
every content block kind of the spec, structured content and ``isError``."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import mcp_types as types

from agentflow import ReActAgent
from agentflow.mcp import MCPServer
from agentflow.mcp._results import read_result
from agentflow.testing import Call, Reply, ScriptedModel
from tests.mcp_server import PNG_1X1


def result(*blocks: object, structured: dict[str, object] | None = None,
           error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=list(blocks), structured_content=structured,
                                is_error=error)


def test_text_blocks_are_paragraphs() -> None:
    read = read_result(result(types.TextContent(type="text", text="one"),
                              types.TextContent(type="text", text="two")))
    assert read.text == "one\n\ntwo" and not read.is_error and read.structured is None


def test_structured_content_is_read_as_json_and_its_text_twin_not_repeated() -> None:
    read = read_result(result(types.TextContent(type="text", text='{"n": 1}'),
                              structured={"n": 1, "tags": ["a"]}))
    assert read.text == '{"n":1,"tags":["a"]}' and read.structured == {"n": 1, "tags": ["a"]}


def test_an_error_result_reads_its_text_even_with_structured_content() -> None:
    read = read_result(result(types.TextContent(type="text", text="quota exceeded"),
                              structured={"code": 7}, error=True))
    assert read.is_error and read.text == "quota exceeded"
    assert not read.is_json and read.value is None  # its text is its message, not a value's JSON
    assert read_result(result(error=True)).text == "the tool reported an error and gave no message"
    assert read_result(result()).text == "(the tool returned no content)"


def test_binary_blocks_are_described_and_images_kept() -> None:
    png = base64.b64encode(PNG_1X1).decode()
    read = read_result(result(
        types.ImageContent(type="image", data=png, mime_type="image/png"),
        types.ImageContent(type="image", data=base64.b64encode(b"not an image").decode(),
                           mime_type="image/png"),
        types.AudioContent(type="audio", data=base64.b64encode(b"x" * 300).decode(),
                           mime_type="audio/wav"),
    ))
    first, second, third = read.text.split("\n\n")
    assert first == ("[image: image/png, 68 bytes; not shown to the model: a tool result "
                     "carries text only]")
    assert second.startswith("[image: image/png, 12 bytes, unreadable: ")
    assert third == "[audio: audio/wav, 300 bytes; not shown]"
    assert [i.data for i in read.images] == [PNG_1X1]


def test_resources() -> None:
    read = read_result(result(
        types.ResourceLink(type="resource_link", name="report", uri="file:///r.pdf",
                           mime_type="application/pdf", description="the Q3 report"),
        types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///notes.txt", mime_type="text/plain", text="remember the milk")),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///a.bin", blob=base64.b64encode(b"\0" * 9).decode())),
    ))
    assert read.text.split("\n\n") == [
        "[resource link report <file:///r.pdf> (application/pdf): the Q3 report]",
        "[resource file:///notes.txt (text/plain)]\nremember the milk",
        "[resource file:///a.bin: binary, 9 bytes; not shown]",
    ]


def test_the_python_sdks_wrapped_value_is_read_as_the_value() -> None:
    # the SDK's MCPServer sends `-> str` as {"result": value}, the value in its text
    def text(blocks: list[str], structured: dict[str, object]) -> str:
        return read_result(result(*(types.TextContent(type="text", text=t) for t in blocks),
                                  structured=structured)).text
    assert text(["Rome: sunny"], {"result": "Rome: sunny"}) == "Rome: sunny"
    assert text(["12"], {"result": 12}) == "12"
    assert text(["Turin", "Rome"], {"result": ["Turin", "Rome"]}) == '["Turin","Rome"]'
    # an object of the tool's own whose one field is `result`: its text is its JSON
    assert text(['{\n  "result": "booked"\n}'], {"result": "booked"}) == '{"result":"booked"}'


def test_a_result_that_is_one_json_value_says_so() -> None:
    def read(structured: dict[str, object], *blocks: object) -> tuple[bool, object]:
        got = read_result(result(*blocks, structured=structured))
        return got.is_json, got.value
    twelve = types.TextContent(type="text", text="12")
    assert read({"result": 12}, twelve) == (True, 12)  # the tool's number, not its text
    assert read({"celsius": 18}) == (True, {"celsius": 18})
    assert read({"result": "Rome"}, types.TextContent(type="text", text="Rome")) == (False, None)
    png = types.ImageContent(type="image", data=base64.b64encode(PNG_1X1).decode(),
                             mime_type="image/png")
    assert read({"result": 12}, twelve, png) == (False, None)  # text beside it: text


async def test_a_server_written_as_the_docs_say_gives_the_model_its_values() -> None:
    model = ScriptedModel([Reply(tool_calls=[
        Call("forecast", {"city": "Rome"}, id="c1"), Call("seats", {"city": "Rome"}, id="c2"),
        Call("stops", {"city": "Rome"}, id="c3"), Call("book", {"city": "Rome"}, id="c4")]),
        "done"])
    server = MCPServer.stdio(sys.executable, [str(Path(__file__).with_name("mcp_sdk_server.py"))],
                             timeout=30)
    async with server:
        await ReActAgent("travel", model, tools=[server]).call("Plan Rome")
        assert (await server.call_tool("forecast", {"city": "Rome"})).structured == {
            "result": "Rome: sunny, 21 C"}  # call_tool keeps the whole structured content
    read = {r.tool_use_id: r.output for r in model.requests[1].messages[-1].tool_results}
    assert read == {"c1": "Rome: sunny, 21 C", "c2": "12", "c3": '["Turin","Rome"]',
                    "c4": '{"result":"booked Rome"}'}


async def test_a_structured_result_is_written_as_json_once() -> None:
    """The declared tool hands back the result's JSON text as it is
    (``JsonText``); it returned the parsed value, which the tool's run wrote
    as JSON a second time (the same text)."""
    from agentflow.mcp._declare import declare_tool
    from agentflow.messages import ToolUseBlock
    from agentflow.tools import JsonText

    structured = {"celsius": 18, "sky": "sunny"}
    read = read_result(result(types.TextContent(type="text", text="{...}"), structured=structured))

    async def call(remote: str, arguments: dict[str, object]) -> object:
        return read

    listed = types.Tool(name="forecast", input_schema={"type": "object", "properties": {}})
    tool = declare_tool("weather", listed, "forecast", call, None)
    returned = await tool.function()
    assert isinstance(returned, JsonText) and returned == read.text
    block = await tool.run(ToolUseBlock(id="c1", name="forecast", input={}))
    assert block.output == '{"celsius":18,"sky":"sunny"}' and block.is_json
