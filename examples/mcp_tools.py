"""An agent whose tools come from MCP servers, answering with a validated schema.

Two servers beside a Python tool: the repository's test server over stdio
(``tests/mcp_server.py``, built on the official SDK) and, with ``--url``, any
server over streamable HTTP. Each server's tools get a prefix, so their names
cannot collide with each other or with the output tool.

    python examples/mcp_tools.py                          # offline: a scripted model
    python examples/mcp_tools.py --model openai:gpt-4o-mini
    python examples/mcp_tools.py --model openai:gpt-4o-mini --url http://127.0.0.1:8000/mcp

Needs the ``mcp`` extra (``pip install 'agentflow[mcp]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from contextlib import AsyncExitStack
from pathlib import Path

from pydantic import BaseModel, Field

from agentflow import ChatModel, ReActAgent
from agentflow.mcp import MCPServer
from agentflow.testing import Call, Reply, ScriptedModel

SERVER = Path(__file__).resolve().parent.parent / "tests" / "mcp_server.py"


class Quote(BaseModel):
    """A price quote for an order."""

    sku: str
    unit_price: float = Field(description="price of one unit, from the shop's lookup tool")
    quantity: int
    total: float = Field(description="unit_price times quantity, plus the fee")


def handling_fee(total: float) -> float:
    """The handling fee for an order of this total (a plain Python tool).

    Args:
        total: the order's total before the fee.
    """
    return 2.0 if total < 100 else 0.0


def scripted() -> ScriptedModel:
    """What a model would do, offline: look the price up, ask for the fee, answer."""
    return ScriptedModel([
        Reply(tool_calls=[Call("shop_lookup", {"sku": "A-1"})]),
        Reply(tool_calls=[Call("handling_fee", {"total": 37.5})]),
        Reply(tool_calls=[Call("generate_response", {
            "sku": "A-1", "unit_price": 12.5, "quantity": 3, "total": 39.5})]),
    ])


async def main(model: ChatModel | str, url: str | None) -> Quote:
    shop = MCPServer.stdio(sys.executable, [str(SERVER)], prefix="shop",
                           include=["lookup", "add"], timeout=20)
    servers = [shop] + ([MCPServer.http(url, prefix="web")] if url else [])
    async with AsyncExitStack() as stack:
        for server in servers:
            await stack.enter_async_context(server)
        agent = ReActAgent("quoter", model, tools=[*servers, handling_fee],
                           sys_prompt="Use the tools; never guess a price.")
        print("tools:", ", ".join(agent.toolkit.names))
        reply = await agent.call("Quote 3 units of A-1, handling fee included.", Quote)
        quote: Quote = reply.output
        return quote


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a 'vendor:model' string (default: a scripted model)")
    parser.add_argument("--url", help="an MCP server's streamable HTTP endpoint")
    options = parser.parse_args()
    print(asyncio.run(main(options.model or scripted(), options.url)))
