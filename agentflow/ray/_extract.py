"""The Ray engine's extraction: ``extract_dataset`` maps batches over an actor
pool, each actor (``_Extractor``) one event loop, one model and its share of
every rate limit, running ``extract_many`` on each batch."""

from __future__ import annotations

import asyncio
import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from agentflow._arguments import check_int, wrong_value
from agentflow.batch import ExtractInput, extract_many
from agentflow.batch_types import not_text
from agentflow.documents.inputs import Document
from agentflow.documents.names import dumps_record
from agentflow.ratelimit import set_process_share
from agentflow.ray.refs import absolute_ref, ray_module, resolve, resolve_value

if TYPE_CHECKING:
    import ray.data

__all__ = ["ExtractionSpec", "ModelFactory", "extract_dataset"]

ModelFactory = Callable[[], Any]
"""A zero-argument callable returning a ``ChatModel`` (called once per actor)."""

@dataclass(frozen=True)
class ExtractionSpec:
    """What each actor needs (pickled to the actors once).

    Attributes:
        output: the output type, or a ``module:Class`` / ``path.py:Class`` /
            ``schema.json`` reference resolved in the actor.
        model: ``"vendor:model"`` or a ``ModelFactory``.
        model_kwargs: given to the registry with a ``"vendor:model"`` (``base_url``,
            ``api_key``: never in a repr).
        instructions: the system prompt.
        concurrency: calls in flight per actor.
        actors: actors in the pool (each governor's share is ``1 / actors``).
        options: further ``extract_many`` keywords (``ground``, ``chunking``,
            ``passes``, ``allow_partial``, ``max_chars``, ``examples``: a
            list, or a ``module:name`` / ``path.py:name`` reference resolved
            in the actor).
    """

    output: Any
    model: str | ModelFactory
    model_kwargs: Mapping[str, Any] = field(default_factory=dict, repr=False)
    instructions: str | None = None
    concurrency: int = 8
    actors: int = 2
    options: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, str] | None = None


class _Extractor:
    """One actor: one event loop, one model, ``extract_many`` per batch."""

    def __init__(self, spec: ExtractionSpec) -> None:
        set_process_share(1.0 / spec.actors)
        self.spec = spec
        self.loop = asyncio.new_event_loop()
        self.output = resolve(spec.output)
        from agentflow.extraction.fingerprint import schema_fingerprint

        self.schema = schema_fingerprint(self.output)  # on every record: one output, one shape
        self.options = dict(spec.options)
        if isinstance(self.options.get("examples"), str):  # a reference, resolved here
            self.options["examples"] = resolve_value(self.options["examples"])
        if isinstance(spec.model, str):
            from agentflow.model import resolve_model

            registry = importlib.import_module("agentflow.providers.registry")
            self.model = (registry.get_model(spec.model, **spec.model_kwargs)
                          if spec.model_kwargs else resolve_model(spec.model))
        else:
            self.model = spec.model()

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        return self.loop.run_until_complete(self._run(batch))

    async def _run(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        from agentflow.extraction.records import problem_record, to_record

        ids = [str(x) for x in batch["id"]]
        texts = list(batch["text"])  # a str each; anything else is refused, never str()-ed
        problems = list(batch["problem"]) if "problem" in batch else [None] * len(ids)
        offsets = [int(x) for x in batch["source_offset"]] if "source_offset" in batch else (
            [0] * len(ids))
        def column(name: str) -> list[str]:
            return [str(x or "") for x in batch[name]] if name in batch else [""] * len(ids)

        problem_types, reasons, page_maps = column("problem_type"), column("reason"), [
            [tuple(p) for p in orjson.loads(x)] if x else None for x in column("pages")]
        ordered: list[dict[str, Any]] = [{} for _ in ids]
        usable: list[ExtractInput] = []
        rows: list[int] = []  # the batch row of each usable input
        for row, (rid, text, problem) in enumerate(zip(ids, texts, problems, strict=True)):
            if isinstance(problem, str) and problem:
                ordered[row] = problem_record(Document(
                    rid, "", problem=problem, problem_type=problem_types[row] or None,
                    reason=reasons[row] or None))
            elif not isinstance(text, str):  # a null (None) or binary text column value
                ordered[row] = problem_record(Document(
                    rid, "", problem=not_text(rid, text), problem_type="InvalidInputError"))
            else:
                usable.append(ExtractInput(rid, text))
                rows.append(row)
        async for result in extract_many(
            self.model, usable, self.output, concurrency=self.spec.concurrency,
            order="completed", instructions=self.spec.instructions, **self.options,
        ):
            row = rows[result.index]
            ordered[row] = to_record(result, offsets[row], page_maps[row])
        for record in ordered:
            record["schema"] = self.schema
            if self.spec.settings is not None:
                record["settings"] = dict(self.spec.settings)
        return {"id": ids, "ok": [bool(r["ok"]) for r in ordered],
                "record": [dumps_record(r).decode() for r in ordered]}


def extract_dataset(
    ds: ray.data.Dataset,
    output: Any,
    *,
    model: str | ModelFactory = "local",
    api_key: str | None = None,
    base_url: str | None = None,
    instructions: str | None = None,
    actors: int = 2,
    concurrency: int = 16,
    batch_size: int | None = None,
    num_cpus: float = 0.5,
    settings: Mapping[str, str] | None = None,
    **options: Any,
) -> ray.data.Dataset:
    """Extract ``output`` from every row of ``ds`` on an actor pool (lazy: runs
    when the result is consumed or written).

    Args:
        ds: columns ``id`` and ``text`` (optional ``problem``, ``problem_type``,
            ``reason``, ``source_offset``, ``pages``).
        output: the output type, or a reference string (see ``ExtractionSpec``).
        model: ``"vendor:model"`` or a zero-argument factory called in each actor.
        api_key / base_url: for a ``"vendor:model"`` (default: the vendor's).
        actors: actors in the pool (>= 1).
        concurrency: calls in flight in all actors together (>= actors); each
            actor runs ``ceil(concurrency / actors)``.
        batch_size: rows per batch (default: 4 x the per-actor concurrency).
        num_cpus: CPUs each actor reserves (default 0.5: an actor mostly waits
            on the network, and the read tasks upstream need CPUs too).
        settings: stamped on every record as ``"settings"``
            (``agentflow.extraction.settings_fingerprint``; ``None``: not stamped).
        options: ``extract_many`` keywords (``ground``, ``chunking``, ...).

    Returns:
        A Dataset with columns ``id``, ``ok`` and ``record`` (the CLI record's JSON).

    Raises:
        ArgumentValueError: ``actors`` < 1 or ``concurrency`` < ``actors`` (a
            ``ValueError``; ``ArgumentTypeError``, a ``TypeError``, for a count
            that is no int).
    """
    check_int("actors", actors, 1)
    check_int("concurrency", concurrency, 1)
    if concurrency < actors:
        raise wrong_value("concurrency", f"an int >= actors ({actors})", concurrency)
    per_actor = math.ceil(concurrency / actors)
    kwargs = {k: v for k, v in (("api_key", api_key), ("base_url", base_url)) if v}
    spec = ExtractionSpec(
        output=absolute_ref(output) if isinstance(output, str) else output, model=model,
        model_kwargs=kwargs, instructions=instructions, concurrency=per_actor, actors=actors,
        options=options, settings=settings)
    pool = ray_module().data.ActorPoolStrategy(size=actors)
    return ds.map_batches(
        _Extractor, fn_constructor_kwargs={"spec": spec}, compute=pool,
        batch_size=batch_size or 4 * per_actor, batch_format="numpy", num_cpus=num_cpus,
    )  # Ray Data's actor pools restart actors and retry their batches (max_restarts=-1,
    # max_task_retries=-1 by default): that is the fault tolerance
