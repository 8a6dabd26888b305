"""An MCP server written as docs/guides/mcp.md tells a user to write one: the
``mcp`` SDK's high-level ``MCPServer`` with typed functions (stdio). Its tools
return a ``str``, an ``int``, a list and a pydantic model whose one field is
``result``: the SDK wraps the first three as ``{"result": value}``."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

server = MCPServer("travel")


class Booking(BaseModel):
    """A tool's own object that happens to hold one field named ``result``."""

    result: str


@server.tool()
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    return f"{city}: sunny, 21 C"


@server.tool()
def seats(city: str) -> int:
    """Seats left on the next train to a city."""
    return 12


@server.tool()
def stops(city: str) -> list[str]:
    """The stops on the way to a city."""
    return ["Turin", city]


@server.tool()
def book(city: str) -> Booking:
    """Book a seat to a city."""
    return Booking(result=f"booked {city}")


if __name__ == "__main__":
    server.run()
