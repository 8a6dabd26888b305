"""A chaos OpenAI-compatible server: a seeded, reproducible misbehaving model
(``chaos_model``) behind a vendor profile, for benchmarks and manual checks.

    python -m tests.fakes.chaos --profile glm --seed 7 --misbehave 0.3 --misbehave-reminded 0.1

Prints ``listening chaos <root_url>`` (flushed) once listening and serves
until SIGINT/SIGTERM. Routes (``root_url`` + path):

* ``POST /v1/chat/completions`` and ``POST /api/paas/v4/chat/completions``:
  chat completions, OpenAI wire format (whole or SSE), checked like the
  OpenAI fake. The answer is the first JSON object in the first user
  message (the "record" to extract); the model complies or misbehaves as
  ``chaos_model.decide`` says.
* ``POST /_chaos/config``: JSON object of ``ChaosSettings`` fields to change;
  answers the settings. ``POST /_chaos/stats``: the counters (requests,
  rejected, prompt/completion tokens, behaviours, max in flight); body
  ``{"reset": true}`` zeroes them after answering.

Vendor profiles (``PROFILES``): ``openai`` honours a forced ``tool_choice``;
``glm`` answers 400 "Tool choice must be auto" (GLM's envelope, as the GLM
fake) to any other choice, sends tool calls whole and usage on the finish
chunk, but ignores parameters GLM may not know (``stream_options``,
``strict``...) instead of refusing them; ``minimax`` accepts and ignores
``tool_choice``. Token counts are the server's own: prompt = request bytes / 4,
completion = output characters / 4.

Streamed replies carry the output (text, or each call's arguments) in
``chunks`` fragments, ``chunk_delay`` seconds apart (everything else at once).

Fault profiles (issue 32), OpenAI-like otherwise (a forced ``tool_choice``
honoured), each one kind of vendor fault on top of the misbehaving model:

* ``schema``: a server whose schema validator refuses ``additionalProperties``
  in a ``response_format`` schema (400 "Invalid schema for response_format
  ..."), a keyword its documented subset would take;
* ``no_usage``: a server that ignores ``stream_options.include_usage`` and
  reports no usage at all;
* ``ctx``: a llama.cpp-style server with a ``n_ctx``-token window (settings)
  and context shift: a longer prompt is cut silently, ``usage.prompt_tokens``
  is the window's, and the answer read only the end of the prompt (a wrong
  record);
* ``reasoning``: a vLLM-style server that, on ``fault_rate`` of the requests,
  puts the whole answer in ``reasoning_content`` and leaves ``content`` empty
  (no tool call);
* ``router``: a router that rewrites ``length`` as ``tool_calls``/``stop``: on
  ``fault_rate`` of the requests the output (arguments or text) is cut inside
  its ``tags`` list, with a normal finish reason;
* ``proxy``: a proxy that forces streaming: every whole-reply request is
  answered with SSE (half of them labelled ``application/json``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

import orjson
from aiohttp import web

from .base import FakeCall, FakeError, FakeReply
from .chaos_model import DEFAULT_WEIGHTS, Output, decide, find_answer, is_reminded, render
from .glm import MUST_BE_AUTO, glm_error
from .openai import OpenAIStyleFake, openai_error

__all__ = ["FAULT_PROFILES", "PROFILES", "ChaosFake", "ChaosProfile", "ChaosSettings", "main",
           "split"]

CONFIG_PATH = "/_chaos/config"
STATS_PATH = "/_chaos/stats"


@dataclass(frozen=True)
class ChaosProfile:
    """How the vendor treats ``tool_choice`` and how it streams."""

    tool_choice: Literal["enforce", "reject", "ignore"]
    markup: str = "hermes"
    """The in-band tool-call format the model writes (``chaos_model.MARKUP_STYLES``)."""
    usage_on_finish: bool = False
    whole_tool_calls: bool = False
    envelope: Literal["openai", "glm"] = "openai"
    fault: str = ""
    """One of issue 32's fault kinds (the module docstring), or ``""``."""


PROFILES: dict[str, ChaosProfile] = {
    "openai": ChaosProfile("enforce"),
    "glm": ChaosProfile("reject", "glm", usage_on_finish=True, whole_tool_calls=True,
                        envelope="glm"),
    "minimax": ChaosProfile("ignore", "minimax", whole_tool_calls=True),
    **{fault: ChaosProfile("enforce", fault=fault)
       for fault in ("schema", "no_usage", "ctx", "reasoning", "router", "proxy")},
}
FAULT_PROFILES = ("schema", "no_usage", "ctx", "reasoning", "router", "proxy")


@dataclass
class ChaosSettings:
    """What the server does; changed at run time through ``/_chaos/config``."""

    profile: str = "openai"
    seed: int = 0
    misbehave: float = 0.0
    """Chance that the model misbehaves on a request without a reminder."""
    misbehave_reminded: float = 0.0
    """The same chance when the request carries a reminder."""
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    latency: float = 0.0
    """Seconds before each reply starts."""
    chunks: int = 20
    """Fragments of the output in a streamed reply."""
    chunk_delay: float = 0.0
    """Seconds between two output fragments."""
    fault_rate: float = 0.3
    """Share of requests the ``reasoning`` and ``router`` faults hit."""
    n_ctx: int = 16
    """The ``ctx`` profile's window (tokens, 4 characters each)."""


def split(text: str, n: int) -> list[str]:
    """``text`` in exactly ``n`` consecutive non-empty parts (fewer if it is shorter)."""
    n = max(1, min(n, len(text)))
    return [text[len(text) * i // n : len(text) * (i + 1) // n] for i in range(n)]


def _frame(payload: Any) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


class ChaosFake(OpenAIStyleFake):
    """The chaos server (see the module docstring)."""

    routes: Sequence[str] = (
        "/v1/chat/completions", "/api/paas/v4/chat/completions", CONFIG_PATH, STATS_PATH,
    )
    vendor = "chaos"

    def __init__(self, settings: ChaosSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or ChaosSettings()
        self.record = False
        self.stats: Counter[str] = Counter()
        self._in_flight = 0
        self._answers: dict[str, tuple[str, dict[str, Any]]] = {}
        self._apply_profile()

    def _apply_profile(self) -> None:
        if self.settings.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.settings.profile!r}; "
                             f"choose from {', '.join(PROFILES)}")
        self.profile = PROFILES[self.settings.profile]
        self.usage_on_finish = self.profile.usage_on_finish
        self.whole_tool_calls = self.profile.whole_tool_calls
        self.n_ctx = self.settings.n_ctx if self.profile.fault == "ctx" else None

    def base_url(self, root: str) -> str:
        return root

    async def __aenter__(self) -> ChaosFake:
        """Listen like the base, with a backlog deep enough for 1,000+ clients at once."""
        app = web.Application()
        for route in self.routes:
            app.router.add_post(route, self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=4096)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = self.base_url(f"http://127.0.0.1:{port}")
        return self

    def bad(self, message: str, param: str | None = None, code: str | None = None) -> FakeError:
        if self.profile.envelope == "glm":
            return glm_error(400, code or "1214", message)
        return openai_error(400, message, param=param, code=code)

    def configure(self, changes: dict[str, Any]) -> ChaosSettings:
        """Apply ``changes`` (``ChaosSettings`` field names).

        Raises:
            ValueError: an unknown field or profile.
        """
        known = {f.name for f in fields(ChaosSettings)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(f"unknown settings: {sorted(unknown)}")
        old = asdict(self.settings)
        self.settings = ChaosSettings(**{**old, **changes})
        try:
            self._apply_profile()
        except ValueError:
            self.settings = ChaosSettings(**old)
            raise
        return self.settings

    # -- the handler -------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        if request.path in (CONFIG_PATH, STATS_PATH):
            return self._admin(request.path, raw)
        self._in_flight += 1
        self.stats["max_in_flight"] = max(self.stats["max_in_flight"], self._in_flight)
        try:
            return await self._chat(request, raw)
        finally:
            self._in_flight -= 1

    def _admin(self, path: str, raw: bytes) -> web.Response:
        try:
            data = orjson.loads(raw) if raw else {}
            if path == CONFIG_PATH:
                return web.json_response(asdict(self.configure(data)))
        except (orjson.JSONDecodeError, ValueError, TypeError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        out = dict(self.stats)
        if data.get("reset"):
            self.stats.clear()
        return web.json_response(out)

    def _refuse_schema(self, body: dict[str, Any]) -> FakeError | None:
        """The ``schema`` fault: ``additionalProperties`` refused in a response format."""
        spec = (body.get("response_format") or {}).get("json_schema") or {}
        if self.profile.fault == "schema" and "additionalProperties" in str(spec.get("schema")):
            return self.bad(f"Invalid schema for response_format '{spec.get('name')}': In "
                            "context=(), 'additionalProperties' is not permitted.",
                            "response_format", "invalid_json_schema")
        return None

    def _refuse_choice(self, body: dict[str, Any]) -> FakeError | None:
        choice = body.get("tool_choice")
        if self.profile.tool_choice == "reject" and body.get("tools") and choice not in (
                None, "auto"):
            return self.bad(MUST_BE_AUTO)
        return None

    def _count_mode(self, body: dict[str, Any]) -> None:
        """Count how the request asks for output (``mode.*``) and forcing (``forced``)."""
        rf = (body.get("response_format") or {}).get("type")
        self.stats[f"mode.{'tool' if body.get('tools') else rf or 'text'}"] += 1
        if body.get("tools") and body.get("tool_choice") not in (None, "auto", "none"):
            self.stats["forced"] += 1

    def _answer(self, text: str) -> tuple[str, dict[str, Any]] | None:
        cached = self._answers.get(text)
        if cached is None:
            try:
                record = orjson.loads(text[text.index("{") : text.rindex("}") + 1])
            except (ValueError, orjson.JSONDecodeError):
                return None
            if not isinstance(record, dict):
                return None
            if len(self._answers) > 50_000:
                self._answers.clear()
            cached = self._answers[text] = (orjson.dumps(record).decode(), record)
        return cached

    async def _chat(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        s = self.settings
        self.stats["requests"] += 1
        prompt_tokens = max(1, len(raw) // 4)
        self.stats["prompt_tokens"] += prompt_tokens
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        refused = (self.check(request, body) or self._refuse_choice(body)
                   or self._refuse_schema(body))
        if isinstance(body, dict):
            self._count_mode(body)
        if refused is not None:
            self.stats["rejected"] += 1
            return self.render_error(refused)
        messages = body["messages"]
        tools = [t["function"]["name"] for t in body.get("tools") or ()]
        choice = body.get("tool_choice")
        found = find_answer(messages)
        answer = self._answer(found[1]) if found else None
        if found is None or answer is None:
            reply = FakeReply(text="Which record should I extract?", usage=(prompt_tokens, 8))
            self.stats["behaviour.no_task"] += 1
            return await self._respond(request, reply, body)
        key, record = answer
        attempt = sum(1 for m in messages if m.get("role") == "assistant")
        forced = bool(tools) and choice not in (None, "auto", "none") and (
            self.profile.tool_choice == "enforce")
        decision = decide(
            seed=s.seed, key=key, attempt=attempt, misbehave=s.misbehave,
            misbehave_reminded=s.misbehave_reminded, weights=s.weights, forced=forced,
            reminded=is_reminded(messages, found[0], tools),
        )
        name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
        name = name or (tools[0] if tools else "")
        tool_mode = bool(tools) and choice != "none"
        fault = self._fault(key, attempt, messages, body)
        if fault:
            self.stats[f"fault.{fault}"] += 1
            decision = decide(seed=s.seed, key=key, attempt=attempt, misbehave=0.0,
                              misbehave_reminded=0.0, forced=False, reminded=False)
        self.stats[f"behaviour.{decision.behaviour}"] += 1
        output = render(_cut_record(record) if fault == "ctx" else record, decision,
                        tool_mode=tool_mode, tool_name=name, markup=self.profile.markup)
        thinking, finish = "", None
        if fault == "reasoning":  # the whole answer in the reasoning channel, content empty
            thinking, output = orjson.dumps(record).decode(), Output()
        elif fault == "router":  # cut inside the tags list, finish reason rewritten
            if tool_mode:
                output = Output(calls=[_cut_in_list(c) for c in output.calls])
                finish = "tool_calls"
            else:
                output = Output(text=_cut_in_list(output.text))
                finish = "stop"
        tag = f"{zlib.crc32(key.encode()):08x}_{attempt}"
        calls = [FakeCall(name, args, id=f"call_{tag}_{i}") for i, args in enumerate(output.calls)]
        completion = max(1, (len(output.text) + len(thinking) + sum(map(len, output.calls))) // 4)
        self.stats["completion_tokens"] += completion
        extra: dict[str, Any] = {"same_index": output.same_index, "cut": output.cut}
        if self.profile.fault == "no_usage":
            extra["no_usage"] = True
        reply = FakeReply(text=output.text, thinking=thinking, tool_calls=calls,
                          usage=(prompt_tokens, completion), finish_reason=finish, extra=extra)
        return await self._respond(request, reply, body)

    def _fault(self, key: str, attempt: int, messages: Any, body: dict[str, Any]) -> str:
        """The fault this request meets (``""``: none): ``ctx`` when the prompt
        is longer than the window; ``reasoning``/``router`` on ``fault_rate``
        of the requests (a hash of seed, task and attempt)."""
        fault = self.profile.fault
        if fault == "ctx":
            chars = sum(len(str(m.get("content") or "")) for m in messages)
            return "ctx" if chars // 4 > self.settings.n_ctx else ""
        if fault in ("reasoning", "router"):
            digest = zlib.crc32(f"{self.settings.seed}|{key}|{attempt}|fault".encode())
            return fault if digest / 2**32 < self.settings.fault_rate else ""
        return ""

    async def _respond(self, request: web.Request, reply: FakeReply,
                       body: dict[str, Any]) -> web.StreamResponse:
        s = self.settings
        if s.latency:
            await asyncio.sleep(s.latency)
        cut = float(reply.extra.get("cut") or 0.0)
        proxied = self.profile.fault == "proxy" and not self.is_stream(request, body)
        if not self.is_stream(request, body) and not proxied:
            data = orjson.dumps(self.render_json(reply, body))
            if cut:  # a whole reply cut mid-body
                data = data[: max(1, int(len(data) * cut))]
            return web.Response(body=data, content_type="application/json")
        head, outs, tail = self.stream_frames(reply, body)
        if cut:  # half the output, then [DONE] without a finish reason
            outs = outs[: max(1, int(len(outs) * cut))]
            tail = [b"data: [DONE]\n\n"]
        response = web.StreamResponse(status=200)
        response.content_type = self.stream_content_type()
        if proxied and zlib.crc32(orjson.dumps(body.get("messages"))) % 2:
            response.content_type = "application/json"  # the proxy kept the old label
        await response.prepare(request)
        if not s.chunk_delay or not outs:
            await response.write(b"".join(head + outs + tail))
        else:
            await response.write(b"".join(head) + outs[0])
            for frame in outs[1:]:
                await asyncio.sleep(s.chunk_delay)
                await response.write(frame)
            await response.write(b"".join(tail))
        await response.write_eof()
        return response

    def stream_frames(self, reply: FakeReply,
                      body: dict[str, Any]) -> tuple[list[bytes], list[bytes], list[bytes]]:
        """SSE frames: (before the output, the output fragments, finish/usage/[DONE])."""
        n = self.settings.chunks
        head = [_frame(self.chunk(body, {"role": "assistant", "content": ""}))]
        outs: list[bytes] = []
        if reply.thinking:
            outs += [_frame(self.chunk(body, {self.reasoning_field: p}))
                     for p in split(reply.thinking, n)]
        if reply.text:
            outs += [_frame(self.chunk(body, {"content": p})) for p in split(reply.text, n)]
        for i, call in enumerate(reply.tool_calls):
            whole = self.tool_json(i, call, reply)
            at = 0 if reply.extra.get("same_index") else i
            if self.whole_calls(body):
                outs.append(_frame(self.chunk(body, {"tool_calls": [{**whole, "index": at}]})))
                continue
            first = {**whole, "index": at, "function": {"name": call.name, "arguments": ""}}
            (outs if outs else head).append(_frame(self.chunk(body, {"tool_calls": [first]})))
            outs += [_frame(self.chunk(body, {"tool_calls": [
                {"index": at, "function": {"arguments": p}}]}))
                for p in split(whole["function"]["arguments"], n)]
        tail = [_frame(f) for f in self.tail_frames(reply, body)] + [b"data: [DONE]\n\n"]
        return head, outs, tail


def _cut_record(record: dict[str, Any]) -> dict[str, Any]:
    """What a model that read only the end of its prompt answers: the record
    with its first field guessed wrong."""
    first = next(iter(record), None)
    return {**record, first: "unknown"} if first is not None else record


def _cut_in_list(text: str) -> str:
    """``text`` (compact JSON) cut right after the first item of its first
    list (``..."tags":["a"``): closing it would invent a shorter list."""
    at = text.find('":["')
    if at < 0:
        return text[: max(1, len(text) // 2)]
    end = text.find('"', at + 4)
    return text[: end + 1] if end > 0 else text


# ----------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.fakes.chaos", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="openai")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--misbehave", type=float, default=0.0)
    p.add_argument("--misbehave-reminded", type=float, default=0.0)
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--chunks", type=int, default=20)
    p.add_argument("--chunk-delay", type=float, default=0.0)
    return p


async def serve(ns: argparse.Namespace) -> None:
    """Serve until SIGINT/SIGTERM."""
    fake = ChaosFake(ChaosSettings(
        profile=ns.profile, seed=ns.seed, misbehave=ns.misbehave,
        misbehave_reminded=ns.misbehave_reminded, latency=ns.latency, chunks=ns.chunks,
        chunk_delay=ns.chunk_delay))
    fake.host, fake.port = ns.host, ns.port
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with fake:
        print(f"listening chaos {fake.url}", flush=True)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry."""
    ns = _parser().parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(ns))


if __name__ == "__main__":
    main(sys.argv[1:])
