"""The contact extractor behind the frontends people already use, in FastAPI:
an AG-UI endpoint (CopilotKit and other AG-UI clients) and a Vercel AI SDK
endpoint (``useChat``), beside agentflow's own SSE (``examples/web/app.py``
is the same with Starlette and a page).

    .venv/bin/python examples/web/fastapi_app.py --model openai:gpt-4o-mini --port 8000

* ``POST /agui``: an AG-UI ``RunAgentInput``; the stream's ``STATE_SNAPSHOT``s
  carry the contact as it grows in ``state.output``.
* ``POST /api/chat``: the ``useChat`` body; the contact grows in the
  ``data-output`` part.

Every request is bounded and checked like the Starlette example's: JSON
only, at most ``MAX_BODY`` bytes, the app's own Host and Origin, an
authenticated user (the ``authenticate`` hook); a client's error is a 4xx
JSON ``{"error": {"type", "message"}}``, never a 500.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.responses import Response

from agentflow import InvalidInputError, ReActAgent
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import LOCAL_HOSTS, RequestRejected, check_request, read_json

try:
    from examples.web.app import INSTRUCTIONS, MAX_BODY, Authenticate, Contact, single_user
except ImportError:  # run as a script: examples/web is on sys.path
    from app import (  # type: ignore[no-redef]
        INSTRUCTIONS,
        MAX_BODY,
        Authenticate,
        Contact,
        single_user,
    )


def create_app(agent: ReActAgent, *, authenticate: Authenticate = single_user,
               allowed_hosts: Collection[str] = LOCAL_HOSTS,
               allowed_origins: Collection[str] = ()) -> FastAPI:
    """The FastAPI app: ``/agui`` and ``/api/chat`` (see the module docstring)."""
    app = FastAPI(title="agentflow contact extractor")

    @app.exception_handler(RequestRejected)
    async def rejected(request: Request, exc: RequestRejected) -> JSONResponse:
        return exc.response()

    @app.exception_handler(InvalidInputError)
    async def invalid(request: Request, exc: InvalidInputError) -> JSONResponse:
        return JSONResponse({"error": {"type": "invalid_request", "message": str(exc)}}, 400)

    async def checked_body(request: Request) -> Any:
        """The request's JSON body, once its origin, host and user passed."""
        check_request(request, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
        if await authenticate(request) is None:
            raise RequestRejected(401, "unauthenticated", "sign in first")
        return await read_json(request, max_bytes=MAX_BODY)

    @app.post("/agui")
    async def agui(body: Any = Depends(checked_body)) -> Response:  # noqa: B008
        return agui_response(agent, read_run_input(body), Contact)

    @app.post("/api/chat")
    async def chat(body: Any = Depends(checked_body)) -> Response:  # noqa: B008
        return ui_message_stream_response(agent, read_chat_request(body), Contact)

    return app


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local",
                        help="'vendor:model' (default: local, the embedded offline model)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    agent = ReActAgent("web-demo", args.model, sys_prompt=INSTRUCTIONS)
    uvicorn.run(create_app(agent), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
