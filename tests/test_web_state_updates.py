"""The AG-UI state a structured output streams into (``agentflow.web._agui_state``),
read by the real ``@ag-ui/client`` (``tests/js/agui_run.mjs``): a snapshot
first, then JSON Patch deltas (a snapshot per chunk sent the whole output
each time: bytes growing with the square of its size); an update over the
cap is not sent and a ``CUSTOM`` event says so (``agentflow.web._agui_caps``:
every cap of the stream)."""

from __future__ import annotations

import json

from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from agentflow import ReActAgent
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from agentflow.web._agui_state import StateUpdates
from agentflow.web._json_patch import json_patch
from agentflow.web.agui import AGUIEncoder, agui_response, read_run_input
from agentflow.web.requests import read_json
from agentflow.web.sse import EventStreamResponse

from .test_web_adapters import node, node_ready, served


class Report(BaseModel):
    title: str
    lines: list[str]


REPORT = {"title": "Inventory", "lines": [f"line {i}: " + "x" * 40 for i in range(120)]}


def model(output: dict[str, object], chunk_size: int) -> FunctionModel:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(tool_calls=[Call("generate_response", output)], chunk_size=chunk_size)

    return FunctionModel(answer)


def state_events(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e["type"] in ("STATE_SNAPSHOT", "STATE_DELTA")]


async def test_a_streamed_output_is_one_snapshot_then_deltas_the_client_applies() -> None:
    node_ready()

    async def agui(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        return agui_response(ReActAgent("ui", model(REPORT, 64)), run, Report, ping_interval=60)

    async with served(Starlette(routes=[Route("/agui", agui, methods=["POST"])])) as url:
        got = await node("agui_run.mjs", f"{url}/agui")
    assert got["thrown"] is None and got["runError"] is None, got
    updates = state_events(got["events"])
    kinds = [e["type"] for e in updates]
    assert kinds[0] == "STATE_SNAPSHOT" and kinds.count("STATE_DELTA") > 50, kinds
    assert got["state"] == {"output": REPORT}  # the client applied every delta
    sent = sum(len(json.dumps(e)) for e in updates)
    whole = len(json.dumps(REPORT))
    assert sent < 4 * whole, (sent, whole)  # snapshots per chunk were ~ whole * chunks / 2


async def test_a_state_over_the_cap_is_not_sent_and_the_client_is_told() -> None:
    node_ready()
    long = {"title": "Log", "lines": ["y" * 3000]}

    async def agui(request: Request) -> Response:
        run = read_run_input(await read_json(request))
        agent = ReActAgent("ui", model(long, 500))
        return EventStreamResponse(agent.stream(run.message, Report),
                                   encoder=AGUIEncoder(run.thread_id, run.run_id,
                                                       max_state_bytes=1000))

    async with served(Starlette(routes=[Route("/agui", agui, methods=["POST"])])) as url:
        got = await node("agui_run.mjs", f"{url}/agui")
    assert got["thrown"] is None and got["runError"] is None, got
    updates = state_events(got["events"])
    assert updates and all(len(json.dumps(e["snapshot" if "snapshot" in e else "delta"],
                                          separators=(",", ":"))) <= 1000 for e in updates)
    notices = [e for e in got["events"] if e["type"] == "CUSTOM"
               and e["name"] == "agentflow.state_not_shown"]
    assert notices and {n["value"]["key"] for n in notices} == {"output"}
    assert all(n["value"]["limit"] == 1000 and n["value"]["bytes"] > 1000 for n in notices)
    shown = got["state"]["output"]["lines"]  # the last state that fitted, a prefix
    assert shown and long["lines"][0].startswith(shown[0]) and len(shown[0]) < 1000
    # RUN_FINISHED under the same cap: the output left out and named (_agui_caps)
    assert got["result"]["output"] is None
    assert got["result"]["not_shown"]["fields"][0] == "output"


def test_json_patch_ops() -> None:
    assert json_patch({"a": 1, "b": [1, 2, 3], "c": "x"},
                      {"a": True, "b": [1, 5], "d/e~": None, "c": "x"}) == [
        {"op": "replace", "path": "/a", "value": True},
        {"op": "replace", "path": "/b/1", "value": 5},
        {"op": "remove", "path": "/b/2"},
        {"op": "add", "path": "/d~1e~0", "value": None}]
    assert json_patch({"a": {"b": [1]}}, {"a": {"b": [1, {"c": 2}]}}) == [
        {"op": "add", "path": "/a/b/1", "value": {"c": 2}}]
    assert json_patch({"a": [1]}, {"a": {"0": 1}}) == [
        {"op": "replace", "path": "/a", "value": {"0": 1}}]
    assert json_patch({"a": 1.0}, {"a": 1}) == [{"op": "replace", "path": "/a", "value": 1}]


# Changes a differ may write as a "move" into a sibling whose index the move's
# own removal shifts (the ``jsonpatch`` package does, for the first two): valid
# RFC 6902, but fast-json-patch as ``@ag-ui/client`` calls it (validating each
# operation against the document before it is applied) refuses it, and the
# client only logs a warning, keeping a stale state. Keys that need escaping.
CHANGES: list[tuple[object, object]] = [
    ({"a": [0, 1, [2]]}, {"a": [1, [0, 2]]}),
    ([{"k": 1}, "x", {}], ["x", {"v": {"k": 1}}]),
    ([1, 2, 3, 4], [4, 1, 2, 3]),
    ({"~": 1, "/": [1], "~1": {"a/b": 2}}, {"~": 2, "/": [], "~1": {"a/b": 3, "~0": 4}}),
    ({"b": [1, 2, 3]}, {"b": [1, 5]}),
    ({"a": 1}, {"a": True}),
    ({"a": [1]}, {"a": {"0": 1}}),
]


async def test_every_delta_applies_in_the_client_as_it_is_sent() -> None:
    node_ready()
    filler = {"notes": "z" * 4000}  # a large state: every update goes as a delta
    outputs = [output for change in CHANGES for output in change]

    async def agui(request: Request) -> Response:
        updates = StateUpdates(filler, "output")
        frames = [b'data: {"type":"RUN_STARTED","threadId":"thread-run","runId":"run-1"}\n\n',
                  *(updates.frame(output) for output in outputs),
                  b'data: {"type":"RUN_FINISHED","threadId":"thread-run","runId":"run-1"}\n\n']
        return StreamingResponse(iter(frames), media_type="text/event-stream")

    async with served(Starlette(routes=[Route("/agui", agui, methods=["POST"])])) as url:
        got = await node("agui_run.mjs", f"{url}/agui")
    assert got["thrown"] is None and got["warnings"] == [], got["warnings"]
    kinds = [e["type"] for e in state_events(got["events"])]
    assert kinds == ["STATE_SNAPSHOT"] + ["STATE_DELTA"] * (len(outputs) - 1), kinds
    assert got["states"] == [{**filler, "output": output} for output in outputs]
