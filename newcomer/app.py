"""What a newcomer builds first: a FastAPI backend for a React chat (AG-UI and the
AI SDK), tools from an MCP server with an approval, and a batch extraction job.

Written from README.md and docs/ only. Run: ``.venv/bin/python -m uvicorn
newcomer.app:app --port 8765`` from the repository root (``MODEL=fake:<url>`` to use
a fake vendor server, started with ``python -m tests.fakes.serve openai``).
"""
from __future__ import annotations

import os
import sys
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from fastapi import BackgroundTasks, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from agentflow import InvalidInputError, ReActAgent, extract_many
from agentflow.approvals import RequireApproval
from agentflow.mcp import MCPServer
from agentflow.providers.registry import get_model
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web import SQLiteStateStore
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.aisdk import read_chat_request, ui_message_stream_response
from agentflow.web.requests import RequestRejected, check_request, read_json

HERE = Path(__file__).parent


class Forecast(BaseModel):
    """The agent's structured answer."""
    city: str
    celsius: float
    fahrenheit: float
    summary: str


def get_weather(city: str) -> str:
    """Today's weather in a city, in Celsius."""
    return f"{city}: 18 C, light rain"


def to_fahrenheit(celsius: float) -> float:
    """Convert Celsius to Fahrenheit."""
    return celsius * 9 / 5 + 32


def pretend_weather_model(request: RecordedRequest) -> Reply | str:
    """A pretend model (docs: Testing your agents): weather, then conversion, then the output."""
    results = request.messages[-1].tool_results
    if not results:
        return Reply(tool_calls=[Call("get_weather", {"city": "Paris"})])
    if results[0].output.startswith("Paris"):
        return Reply(tool_calls=[Call("to_fahrenheit", {"celsius": 18})])
    return Reply(tool_calls=[Call("generate_response", {
        "city": "Paris", "celsius": 18, "fahrenheit": float(results[0].output),
        "summary": "Light rain"})])


def pretend_travel_model(request: RecordedRequest) -> Reply | str:
    """Forecast, then book (needs approval), then report what happened."""
    results = request.messages[-1].tool_results
    if not results:
        return Reply(tool_calls=[Call("travel_forecast", {"city": "Rome"})])
    if "sunny" in results[0].output:   # the SDK wraps a str result: {"result": "..."}
        return Reply(tool_calls=[Call("travel_book_trip", {"city": "Rome", "day": "Friday"})])
    return f"Outcome: {results[0].output}"


def model_for(kind: str, pretend: Any) -> Any:
    """MODEL=fake:<base_url> uses a fake vendor server; else the pretend model."""
    spec = os.environ.get("MODEL", "")
    if spec.startswith("fake:"):
        return get_model("openai:gpt-4o-mini", base_url=spec[5:], api_key="k")
    return FunctionModel(pretend)


travel = MCPServer.stdio(sys.executable, [str(HERE / "weather_mcp.py")], prefix="travel",
                         timeout=20)
store = SQLiteStateStore(str(HERE / "conversations.sqlite3"))
weather_agent = ReActAgent("weather", model_for("weather", pretend_weather_model),
                           tools=[get_weather, to_fahrenheit])
travel_agent: ReActAgent | None = None
jobs: dict[str, dict[str, Any]] = {}
extract_model = get_model(os.environ.get("EXTRACT_MODEL", "local"))


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    global travel_agent
    async with travel:
        travel_agent = ReActAgent("travel", model_for("travel", pretend_travel_model),
                                  tools=[travel],
                                  middleware=[RequireApproval({"travel_book_trip"})])
        yield
        await travel_agent.aclose()
    await weather_agent.aclose()
    await extract_model.aclose()
    await store.aclose()


app = FastAPI(lifespan=lifespan)
FRONTEND = os.environ.get("FRONTEND", "http://localhost:5173")   # the React (Vite) dev server
app.add_middleware(CORSMiddleware, allow_origins=[FRONTEND], allow_methods=["POST"],
                   allow_headers=["content-type"])


@app.exception_handler(InvalidInputError)
async def invalid(request: Request, exc: InvalidInputError) -> JSONResponse:
    return JSONResponse({"error": {"type": type(exc).__name__, "message": str(exc)}}, 400)


@app.exception_handler(RequestRejected)
async def rejected(request: Request, exc: RequestRejected) -> Response:
    return exc.response()


async def body_of(request: Request) -> Any:
    check_request(request, allowed_origins=[FRONTEND])
    return await read_json(request)


@app.post("/agui")
async def agui(request: Request) -> Response:
    run = read_run_input(await body_of(request))
    return agui_response(weather_agent, run, Forecast)


@app.post("/chat")
async def chat(request: Request) -> Response:
    run = read_chat_request(await body_of(request))
    return ui_message_stream_response(weather_agent, run, Forecast)


@app.post("/travel/agui")
async def travel_agui(request: Request) -> Response:
    assert travel_agent is not None
    run = read_run_input(await body_of(request))
    return agui_response(travel_agent, run, store=store, key=run.thread_id)


@app.post("/travel/chat")
async def travel_chat(request: Request) -> Response:
    assert travel_agent is not None
    run = read_chat_request(await body_of(request))
    return ui_message_stream_response(travel_agent, run, store=store, key=run.thread_id)


class Contact(BaseModel):
    """What the batch job extracts from each note."""
    name: str
    email: str


async def run_job(job_id: str, folder: Path) -> None:
    job = jobs[job_id]
    docs = [(p.name, p.read_text()) for p in sorted(folder.glob("*.txt"))]
    job["total"] = len(docs)
    try:   # one model for every job (docs: a model string starts a llama.cpp per job)
        async for result in extract_many(extract_model, docs, Contact, order="completed"):
            job["done"] += 1
            job["results"].append({"id": result.id, "ok": result.ok,
                                   "output": result.output.model_dump() if result.ok else None,
                                   "error": None if result.ok else str(result.error)})
        job["status"] = "finished"
    except Exception as exc:  # a fault of the whole run (a wrong key...)
        job["status"] = f"failed: {type(exc).__name__}: {exc}"


@app.post("/extract")
async def extract(background: BackgroundTasks) -> dict[str, str]:
    job_id = uuid.uuid4().hex[:8]
    jobs[job_id] = {"status": "running", "done": 0, "total": None, "results": []}
    background.add_task(run_job, job_id, HERE / "notes")
    return {"job": job_id}


@app.get("/extract/{job_id}")
async def progress(job_id: str) -> dict[str, Any]:
    return jobs[job_id]


@app.post("/travel/chat-nostore")
async def travel_chat_nostore(request: Request) -> Response:
    """The AI SDK chat sends its whole history back: does an approval work without a store?"""
    assert travel_agent is not None
    return ui_message_stream_response(travel_agent, read_chat_request(await body_of(request)))


@app.post("/travel/agui-nostore")
async def travel_agui_nostore(request: Request) -> Response:
    assert travel_agent is not None
    return agui_response(travel_agent, read_run_input(await body_of(request)))
