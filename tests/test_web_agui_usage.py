"""AG-UI 1.0's own token usage on a run's last event (``RUN_FINISHED``,
``RUN_ERROR``: ``usage``, a list of ``TokenUsage``), beside agentflow's in
``result``: read by the real ``@ag-ui/client``, whose schema validates it.
Left out when a request did not report its usage (the protocol's counts are
totals: a known part only would read as the whole)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.testing import FunctionModel, Reply
from agentflow.usage import Usage
from agentflow.web._agui_usage import token_usage
from agentflow.web.agui import agui_response, read_run_input
from agentflow.web.requests import read_json

from .test_web_adapters import node, node_ready, served


class Contact(BaseModel):
    name: str


async def run(reply: Reply, output: Any = None) -> dict[str, Any]:
    agent = ReActAgent("ui", FunctionModel(lambda r: reply))

    async def agui(request: Request) -> Response:
        return agui_response(agent, read_run_input(await read_json(request)), output)

    node_ready()
    async with served(Starlette(routes=[Route("/agui", agui, methods=["POST"])])) as url:
        return await node("agui_run.mjs", f"{url}/agui")


async def test_run_finished_carries_the_protocols_usage() -> None:
    got = await run(Reply(text="Hi.", usage=Usage(120, 30, cached_tokens=100,
                                                  reasoning_tokens=12)))
    finished = got["events"][-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["usage"] == [{"inputTokens": 120, "outputTokens": 30, "totalTokens": 150,
                                  "reasoningTokens": 12, "cachedInputTokens": 100}]
    assert finished["result"]["usage"]["input_tokens"] == 120  # agentflow's, as before


async def test_a_failed_output_reports_the_usage_it_spent_on_run_error() -> None:
    got = await run(Reply(text="no JSON here", usage=Usage(10, 5)), Contact)
    failed = got["events"][-1]
    assert failed["type"] == "RUN_ERROR" and failed["code"].startswith("StructuredOutput")
    [usage] = failed["usage"]
    attempts = usage["outputTokens"] // 5
    assert attempts > 1 and usage["inputTokens"] == 10 * attempts  # every attempt summed


async def test_usage_a_request_did_not_report_is_left_out() -> None:
    got = await run(Reply(text="Hi.", usage=Usage(0, 0)))
    finished = got["events"][-1]
    assert finished["type"] == "RUN_FINISHED" and "usage" not in finished
    assert token_usage(Usage(10, 5, requests=2, unreported=1)) is None
    assert token_usage(Usage()) is None  # no model request: nothing to report
