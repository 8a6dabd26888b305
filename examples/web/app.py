"""Live extraction into a form: a Starlette app that streams an agent call
as Server-Sent Events, and a static page that fills the form's fields as
the partial object grows.

    make web-demo                                     # embedded offline model
    .venv/bin/python examples/web/app.py --model openai:gpt-4o-mini --port 8000

then open http://127.0.0.1:8000. Each extraction is a conversation saved in
a SQLite store (``--db``) once it completes; closing the page mid-stream
cancels the call, and nothing is saved.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.extraction.defaults import EXTRACTION_DEFAULT
from agentflow.output.config import OutputConfig
from agentflow.web import Outcome, SQLiteStateStore, StateStore, sse_response

PAGE = Path(__file__).with_name("index.html")

INSTRUCTIONS = (
    "Extract the contact described in the user's text. Copy values verbatim from the text; "
    "use null for anything the text does not say."
)

OUTPUT = OutputConfig(ground=EXTRACTION_DEFAULT)
"""Every field is copied from the text (whole tokens, clean edges): a value the
text does not hold (``ada@example.com`` for a text that says ``ada@example.org``)
is sent back, and never shown as the answer (``agentflow.extraction.defaults``)."""


class Contact(BaseModel):
    """A person's contact details (null: the text does not say)."""

    name: str | None = Field(description="full name")
    email: str | None = Field(description="e-mail address")
    company: str | None = Field(description="employer or organisation")
    phone: str | None = Field(description="phone number")
    city: str | None = Field(description="city")


def create_app(agent: ReActAgent, store: StateStore) -> Starlette:
    """The demo app. ``app.state.outcomes`` lists ``(conversation_id, outcome)``
    for every stream that ended (``completed``, ``failed``, ``disconnected``)."""
    outcomes: list[tuple[str, Outcome]] = []

    async def index(request: Request) -> Response:
        return FileResponse(PAGE, media_type="text/html")

    async def schema(request: Request) -> Response:
        return JSONResponse(Contact.model_json_schema())

    async def extract(request: Request) -> Response:
        body: Any = await request.json()
        text = body.get("text") if isinstance(body, dict) else None
        key = body.get("conversation_id") or uuid.uuid4().hex if isinstance(body, dict) else ""
        if not isinstance(text, str) or not text.strip() or not isinstance(key, str):
            return JSONResponse({"error": {"type": "InvalidInputError",
                                           "message": "send {\"text\": \"...\"}"}}, 400)

        async def closed(outcome: Outcome) -> None:
            outcomes.append((key, outcome))

        return sse_response(agent, text, Contact, store=store, key=key, on_close=closed)

    app = Starlette(routes=[
        Route("/", index),
        Route("/schema", schema),
        Route("/extract", extract, methods=["POST"]),
    ])
    app.state.outcomes = outcomes
    return app


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local",
                        help="'vendor:model' (default: local, the embedded offline model)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="web-demo.sqlite3", help="the SQLite conversation store")
    args = parser.parse_args()
    agent = ReActAgent("web-demo", args.model, sys_prompt=INSTRUCTIONS, output=OUTPUT)
    store = SQLiteStateStore(args.db)
    print(f"open http://{args.host}:{args.port}  (model: {agent.model.model_name})", flush=True)
    uvicorn.run(create_app(agent, store), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
