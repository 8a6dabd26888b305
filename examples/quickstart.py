"""A first agentflow run, offline: a ReAct agent with one tool and a typed
output, on the scripted test model (no network, no API key).

    python examples/quickstart.py
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from agentflow import Complete, OutputPartial, OutputRetry, ReActAgent, ToolUse
from agentflow.testing import Call, Reply, ScriptedModel


class Contact(BaseModel):
    """A person's contact card."""

    name: str
    email: str = Field(description="lower-case e-mail address")
    company: str | None = None


def lookup_directory(name: str) -> str:
    """Find a person in the company directory.

    Args:
        name: the person's full name.
    """
    return f"{name}: ada@example.org, Analytical Engines Ltd"


async def main() -> None:
    # The model's replies are scripted: first a prose answer (a common slip),
    # which the engine answers by forcing the output tool, then the output
    # streamed in small chunks.
    model = ScriptedModel(
        [
            Reply(tool_calls=[Call("lookup_directory", {"name": "Ada Lovelace"})]),
            Reply(text="Ada's e-mail is ada@example.org."),
            Reply(
                tool_calls=[
                    Call(
                        "generate_response",
                        {"name": "Ada Lovelace", "email": "ada@example.org",
                         "company": "Analytical Engines Ltd"},
                    )
                ],
                chunk_size=12,
            ),
        ]
    )
    agent = ReActAgent("quickstart", model, tools=[lookup_directory])
    async for event in agent.stream("Who is Ada Lovelace? Give me her contact.", Contact):
        match event:
            case ToolUse(name=name, input=args):
                print(f"tool call     {name}({args})")
            case OutputRetry(reason=reason, message=message):
                print(f"output retry  {reason}: {message}")
            case OutputPartial(data=data):
                print(f"partial       {data}")
            case Complete(output=contact, usage=usage):
                print(f"output        {contact!r}")
                print(f"requests      {usage.requests}, tokens {usage.total_tokens}")
    print(f"tool_choice of the forced request: {model.requests[-1].options.tool_choice}")


if __name__ == "__main__":
    asyncio.run(main())
