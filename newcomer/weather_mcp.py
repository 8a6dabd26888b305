"""A small MCP server of my own (mcp SDK v2, stdio): a forecast tool and a booking tool."""
from mcp.server.mcpserver import MCPServer

server = MCPServer("travel")


@server.tool()
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    return f"{city}: sunny, 21 C"


@server.tool()
def book_trip(city: str, day: str) -> str:
    """Book a trip to a city on a day (costs money: needs approval)."""
    return f"booked {city} on {day}"


if __name__ == "__main__":
    server.run()
