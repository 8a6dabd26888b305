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
import hashlib
import re
import secrets
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.extraction.call_review import with_review
from agentflow.extraction.defaults import EXTRACTION_DEFAULT
from agentflow.grounding import Grounded
from agentflow.model import GenerateOptions
from agentflow.output.config import OutputConfig
from agentflow.web import (
    EventStreamResponse,
    Outcome,
    SQLiteStateStore,
    StateStore,
    stream_with_store,
)
from agentflow.web.requests import LOCAL_HOSTS, RequestRejected, check_request, read_json

PAGE = Path(__file__).with_name("index.html")

INSTRUCTIONS = (
    "Extract the contact described in the user's text. Copy values verbatim from the text; "
    "use null for anything the text does not say."
)
MAX_BODY = 64 * 1024
"""The largest request body the app reads (bytes): a 50 MB text is refused
with 413, never read whole nor sent to the model as paid tokens."""
CONVERSATION_ID = re.compile(r"^[A-Za-z0-9_-]{32,64}$")

Authenticate = Callable[[Request], Awaitable[str | None]]
"""The authentication hook: the request's user (any stable id), or ``None``
to refuse it with 401."""

OUTPUT = OutputConfig(ground=EXTRACTION_DEFAULT)
"""Every field is copied from the text (whole tokens, clean edges): a value the
text does not hold (``ada@example.com`` for a text that says ``ada@example.org``)
is sent back, and never shown as the answer (``agentflow.extraction.defaults``)."""
OPTIONS = GenerateOptions(logprobs=True)
"""Each reply token's log-probability, where the model gives them (the
embedded model, OpenAI): a value the model was unsure of needs review."""


PINNED = Grounded(whole_tokens=True, clean=True, longest=True)
"""A value its ``pattern`` pins down: the whole span the pattern allows, never
part of one. Where the text writes one such span, the field is *confident*
(``agentflow.extraction.hand_rules``); free-text fields are grounded and
marked *needs review* unless the model's tokens say more."""


class Contact(BaseModel):
    """A person's contact details (null: the text does not say)."""

    name: str | None = Field(description="full name")
    email: str | None = Field(description="e-mail address")
    company: str | None = Field(description="employer or organisation")
    phone: str | None = Field(description="phone number")
    city: str | None = Field(description="city")


class PinnedContact(Contact):
    """``Contact`` as the form reads it from a pasted text: e-mail and phone
    pinned by their patterns (``PINNED``). ``Contact`` itself stays plain for
    apps whose values may come from a tool (``fastapi_app.py``)."""

    email: Annotated[str | None, PINNED] = Field(
        description="e-mail address", pattern=r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
    phone: Annotated[str | None, PINNED] = Field(
        description="phone number", pattern=r"^\+?[0-9][0-9 ()./-]{5,}[0-9]$")


async def single_user(request: Request) -> str | None:
    """The default hook, for a demo on 127.0.0.1: everyone is one local user.
    Put your session or token check here (``create_app(authenticate=...)``)."""
    return "local"


def store_key(user: str, conversation_id: str) -> str:
    """The store key of a user's conversation: a conversation is reachable
    only by the user it was made for."""
    owner = hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{owner}:{conversation_id}"


def create_app(agent: ReActAgent, store: StateStore, *,
               authenticate: Authenticate = single_user,
               allowed_hosts: Collection[str] = LOCAL_HOSTS,
               allowed_origins: Collection[str] = ()) -> Starlette:
    """The demo app. ``app.state.outcomes`` lists ``(store_key, outcome)``
    for every stream that ended (``completed``, ``failed``, ``disconnected``).

    ``POST /extract`` takes ``{"text": str, "conversation_id"?: str}`` as
    ``application/json`` (at most ``MAX_BODY`` bytes) from the app's own
    origin and host (``check_request``) and an authenticated user
    (``authenticate``). Without ``conversation_id`` it starts a conversation
    with an unguessable id (sent back in the ``x-conversation-id`` header);
    with one, it continues that conversation if it is the user's own (else
    404). A client's error is a 4xx JSON ``{"error": {"type", "message"}}``.
    Before the ``complete`` frame comes a ``field_review`` frame: each
    field's confidence and the fields that need review (the page marks them).
    """
    outcomes: list[tuple[str, Outcome]] = []

    async def index(request: Request) -> Response:
        return FileResponse(PAGE, media_type="text/html")

    async def schema(request: Request) -> Response:
        return JSONResponse(PinnedContact.model_json_schema())

    async def extract(request: Request) -> Response:
        try:
            check_request(request, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
            user = await authenticate(request)
            if user is None:
                raise RequestRejected(401, "unauthenticated", "sign in first")
            body = await read_json(request, max_bytes=MAX_BODY)
            text = body.get("text") if isinstance(body, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise RequestRejected(400, "invalid_request",
                                      'send {"text": "..."} with a non-empty text')
            conversation_id = body.get("conversation_id")
            if conversation_id is None:
                conversation_id = secrets.token_urlsafe(32)
            elif not isinstance(conversation_id, str) or not CONVERSATION_ID.match(
                    conversation_id):
                raise RequestRejected(400, "invalid_request",
                                      "conversation_id must be an id this server gave")
            elif (await store.load(store_key(user, conversation_id))).version == 0:
                raise RequestRejected(404, "not_found", "no such conversation")
        except RequestRejected as rejected:
            return rejected.response()
        key = store_key(user, conversation_id)

        async def closed(outcome: Outcome) -> None:
            outcomes.append((key, outcome))

        # a field_review frame (each field's confidence, the fields that need
        # review: agentflow.extraction.call_review) goes just before "complete"
        events = with_review(stream_with_store(agent, store, key, text, PinnedContact),
                             PinnedContact, text)
        return EventStreamResponse(events, on_close=closed,
                                   headers={"x-conversation-id": conversation_id})

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
    agent = ReActAgent("web-demo", args.model, sys_prompt=INSTRUCTIONS, output=OUTPUT,
                       options=OPTIONS)
    store = SQLiteStateStore(args.db)
    print(f"open http://{args.host}:{args.port}  (model: {agent.model.model_name})", flush=True)
    uvicorn.run(create_app(agent, store), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
