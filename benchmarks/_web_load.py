"""Production checks for ``bench_web.py``: randomised cancellation points and
``kill -9`` against the stores, and the example app under many SSE clients
plus a stream of oversized and malformed requests.

``python benchmarks/_web_load.py serve PORT_FILE`` runs the example app
(examples/web/app.py) on 127.0.0.1 with a scripted model that streams a
contact in 16 pieces, 10 ms apart; the load test starts it in a child
process so that its RSS is the server's alone.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp

from agentflow import AgentState, Msg
from agentflow.web import StateStore

ROOT = Path(__file__).resolve().parents[1]
CONTACT = {"name": "Ada Lovelace", "email": "ada@example.org", "company": "Analytical Engines",
           "phone": "+44 20 7946 0000", "city": "London"}


# ---------------------------------------------------------------- cancellation


async def cancel_points(store: StateStore, points: int, seed: int) -> dict[str, int]:
    """Cancel ``points`` saves at random moments (a random number of event-loop
    turns, or a random delay up to 1.5x a save's time); after each, check
    that a save that returned is stored whole and one that raised left the
    stored conversation as it was."""
    rng = random.Random(seed)
    key = f"cancel-{seed}"
    version = await store.save(key, AgentState([Msg.user("start")]), version=0)
    start = time.perf_counter()
    for _ in range(20):
        loaded = await store.load(key)
        version = await store.save(key, loaded.state, version=loaded.version)
    typical = (time.perf_counter() - start) / 20
    counts = {"points": points, "raised": 0, "completed": 0, "persisted_though_raised": 0,
              "lost_though_returned": 0}
    for i in range(points):
        marker = f"attempt {i} " + "x" * rng.randint(10, 50_000)
        returned: list[int] = []

        async def saving(marker: str = marker, version: int = version,
                         returned: list[int] = returned) -> None:
            returned.append(await store.save(key, AgentState([Msg.user(marker)]),
                                             version=version))
            await asyncio.sleep(0)

        task = asyncio.ensure_future(saving())
        if rng.random() < 0.5:
            for _ in range(rng.randint(0, 8)):
                await asyncio.sleep(0)
        else:
            await asyncio.sleep(rng.uniform(0, typical * 1.5))
        task.cancel()
        await asyncio.wait([task])
        loaded = await store.load(key)
        stored = loaded.state.memory[0].text
        if returned:
            counts["completed"] += 1
            if (loaded.version, stored) != (version + 1, marker):
                counts["lost_though_returned"] += 1
            version = loaded.version
        else:
            counts["raised"] += 1
            if loaded.version != version or stored == marker:
                counts["persisted_though_raised"] += 1
                version = loaded.version
    return counts


async def kills(store: StateStore, kind: str, where: str, count: int, seed: int) -> dict[str, int]:
    """``kill -9`` a process in a loop of saves ``count`` times; count stored
    documents that do not match their version (torn or foreign)."""
    from tests.test_web_store_atomic import CHILD

    rng = random.Random(seed)
    torn = 0
    for _ in range(count):
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, kind, where, stdout=subprocess.PIPE, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert child.stdout is not None
        for _ in range(rng.randint(2, 6)):
            await child.stdout.readline()
        await asyncio.sleep(rng.uniform(0, 0.02))
        child.send_signal(signal.SIGKILL)
        await child.wait()
        loaded = await store.load("k")
        text = loaded.state.memory[0].text if loaded.state.memory else ""
        torn += text != f"v{loaded.version}:" + "x" * 200_000
    return {"kills": count, "torn": torn}


# ---------------------------------------------------------------- load


def serve(port_file: str) -> None:
    """The example app on a free port of 127.0.0.1; writes the port to ``port_file``."""
    import uvicorn

    from agentflow import ReActAgent
    from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
    from agentflow.web import SQLiteStateStore
    from examples.web.app import create_app

    async def answer(request: RecordedRequest) -> Reply:
        return Reply(tool_calls=[Call("generate_response", CONTACT)], chunk_size=8, delay=0.01)

    async def main() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            async with SQLiteStateStore(Path(tmp) / "load.sqlite3") as store:
                app = create_app(ReActAgent("load", FunctionModel(answer)), store)
                config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                        lifespan="off", backlog=4096)
                server = uvicorn.Server(config)
                serving = asyncio.ensure_future(server.serve())
                while not server.started:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
                _write(port_file, str(server.servers[0].sockets[0].getsockname()[1]))
                await serving

    asyncio.run(main())


def _write(path: str, text: str) -> None:
    Path(path).write_text(text)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


BAD = [
    ("oversized (2 MB)", b'{"text": "' + b"x" * 2_000_000 + b'"}', "application/json"),
    ("malformed JSON", b'{"text": "hi"', "application/json"),
    ("invalid UTF-8", b'{"text": "caf\xe9"}', "application/json"),
    ("empty", b"", "application/json"),
    ("nested 5000 deep", b"[" * 5000 + b"]" * 5000, "application/json"),
    ("text/plain (CSRF)", b'{"text": "hi"}', "text/plain"),
]


async def load(clients: int, waves: int, bad_rate: float) -> dict[str, Any]:
    """The load test (see ``bench_web.py``); returns its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        server = await asyncio.create_subprocess_exec(sys.executable, __file__, "serve",
                                                      str(port_file), cwd=ROOT)
        try:
            while not (port := _read(port_file)):
                if server.returncode is not None:
                    raise RuntimeError("the example app did not start")
                await asyncio.sleep(0.05)
            return await _load(server.pid, int(port), clients, waves, bad_rate)
        finally:
            server.terminate()
            await server.wait()


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def _load(pid: int, port: int, clients: int, waves: int, bad_rate: float) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}/extract"
    statuses: dict[int, int] = {}
    streams = {"ok": 0, "incomplete": 0}
    bad_sent = {"sent": 0, "refused_4xx": 0, "connection_closed": 0}
    peak = 0
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:

        async def good() -> None:
            async with http.post(url, json={"text": "Ada Lovelace, ada@example.org"}) as got:
                statuses[got.status] = statuses.get(got.status, 0) + 1
                body = await got.read()
            complete = b'event: complete\n' in body and body.rstrip().endswith(b"}")
            streams["ok" if got.status == 200 and complete else "incomplete"] += 1

        for _ in range(20):  # warm up, then the idle figure
            await good()
        await asyncio.sleep(0.5)
        idle = rss_kib(pid)
        streams.update(ok=0, incomplete=0)
        statuses.clear()
        stop = asyncio.Event()

        async def one_bad(body: bytes, kind: str) -> None:
            try:
                async with http.post(url, data=body, headers={"content-type": kind}) as got:
                    statuses[got.status] = statuses.get(got.status, 0) + 1
                    await got.read()
                    bad_sent["refused_4xx"] += 400 <= got.status < 500
            except (aiohttp.ClientError, ConnectionError):
                bad_sent["connection_closed"] += 1  # the server stopped reading at 413

        async def bad() -> None:  # one request every 1/bad_rate s, not waiting for answers
            rng = random.Random(7)
            sending: list[asyncio.Future[None]] = []
            while not stop.is_set():
                _, body, kind = rng.choice(BAD)
                bad_sent["sent"] += 1
                sending.append(asyncio.ensure_future(one_bad(body, kind)))
                await asyncio.sleep(1 / bad_rate)
            await asyncio.gather(*sending)

        async def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, rss_kib(pid))
                await asyncio.sleep(0.05)

        side = [asyncio.ensure_future(bad()), asyncio.ensure_future(sample())]
        start = time.perf_counter()
        for _ in range(waves):
            await asyncio.gather(*(good() for _ in range(clients)))
        elapsed = time.perf_counter() - start
        stop.set()
        await asyncio.gather(*side)
    return {"clients": clients, "waves": waves, "streams": streams, "statuses": statuses,
            "bad": bad_sent, "idle_kib": idle, "peak_kib": peak, "seconds": elapsed}


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
