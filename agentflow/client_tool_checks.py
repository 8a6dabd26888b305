"""Checking the client tools a request declares (``agentflow.client_tools``),
within bounds the app sets (``ClientToolLimits``).

A request's tool declarations come from the client: anyone who can post to
the app chooses how many there are and how large their JSON Schemas grow.
Checking a schema against its draft's metaschema (``jsonschema``) costs
CPU in proportion to its size (about 10 µs per byte of a schema of many
small properties; a 0.8 MB body of 2,600 tools cost 7 s), so the check
refuses a declaration over a limit first, from counts and sizes that cost
next to nothing, and runs the metaschema check only on declarations within
every limit. A schema that passed (or failed) is remembered by its bytes
(a bounded cache), so a frontend that sends the same tools with every
request pays for them once.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import orjson
from jsonschema import SchemaError as JSONSchemaError
from jsonschema.validators import validator_for

from agentflow._arguments import check_int
from agentflow._lru import LRU
from agentflow._nesting import nesting_depth
from agentflow.errors import InvalidInputError
from agentflow.output.reminders import TOOL_NAME as OUTPUT_TOOL
from agentflow.tools import TOOL_NAME_PATTERN

__all__ = ["DEFAULT_CLIENT_TOOL_LIMITS", "ClientToolLimits", "check_client_tools"]


@dataclass(frozen=True, slots=True)
class ClientToolLimits:
    """What one request may declare as client tools. A declaration over a
    limit is refused (``InvalidInputError`` naming the limit) before any
    schema is checked against its metaschema.

    Attributes:
        max_tools: client tools per request (default 64).
        max_schema_bytes: one tool's ``parameters`` JSON Schema, as compact
            JSON, in bytes (default 16 KiB).
        max_total_schema_bytes: all the tools' schemas together, in bytes
            (default 32 KiB: the metaschema check of that much costs at most
            about 0.25 s of CPU, once per distinct schema).
        max_schema_depth: how deeply one schema nests JSON objects and
            arrays (default 24: ``{"type": "object", "properties": {"a":
            {...}}}`` is 2 levels per nested object).
        max_description: one tool's description, in characters (default
            4096; it is sent to the model with every request).

    Raises:
        ArgumentTypeError / ArgumentValueError: a limit not an int, or below 1.
    """

    max_tools: int = 64
    max_schema_bytes: int = 16 * 1024
    max_total_schema_bytes: int = 32 * 1024
    max_schema_depth: int = 24
    max_description: int = 4096

    def __post_init__(self) -> None:
        for name in self.__slots__:
            value = getattr(self, name)
            check_int(f"ClientToolLimits.{name}", value, 1)


DEFAULT_CLIENT_TOOL_LIMITS = ClientToolLimits()
"""The limits ``check_client_tools`` applies when the app sets none."""


class _Declared(Protocol):
    """A client tool's declaration (``agentflow.client_tools.ClientTool``)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> Mapping[str, Any] | None: ...


T = TypeVar("T", bound=_Declared)

_CHECKED: LRU[bytes, str] = LRU(512)
"""Schema bytes -> the metaschema check's verdict ("" valid, else the problem)."""


def check_client_tools(tools: Iterable[T], taken: Collection[str] = (), *,
                       limits: ClientToolLimits = DEFAULT_CLIENT_TOOL_LIMITS,
                       ) -> tuple[T, ...]:
    """``tools`` (``ClientTool``s) when each can be offered to a model and all are within
    ``limits``: a valid tool name (``agentflow.tools.TOOL_NAME_PATTERN``) used
    once and not the name of one of ``taken`` (the agent's own tools) nor of
    the structured-output tool, compared case-insensitively (``Send_Email``
    beside a server's ``send_email`` would pass for it); a ``str``
    description; ``parameters`` ``None``/``{}`` (no arguments) or a JSON
    Schema of an object (``"type": "object"``), valid against its own
    ``$schema`` draft's metaschema (Draft 2020-12 by default, ``jsonschema``).

    Order of the checks: the number of tools, then each tool's name,
    description, schema size and depth (cheap), and only then each schema
    against its metaschema (cached by the schema's bytes).

    Raises:
        InvalidInputError: naming the tool and what is wrong with it, or the
            limit passed.
    """
    listed = list(itertools.islice(tools, limits.max_tools + 1))
    if len(listed) > limits.max_tools:
        raise InvalidInputError(f"too many client tools: at most {limits.max_tools} per request "
                                "(ClientToolLimits.max_tools)")
    server = {n.lower() for n in taken} | {OUTPUT_TOOL.lower()}
    seen: set[str] = set()
    schemas: list[tuple[str, Mapping[str, Any], bytes]] = []
    total = 0
    for tool in listed:
        name = tool.name
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
            raise InvalidInputError(
                f"client tool {name!r}: a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$")
        folded = name.lower()
        if folded in seen:
            raise InvalidInputError(f"client tool {name!r} is declared twice (names are "
                                    "compared case-insensitively)")
        if folded in server:
            raise InvalidInputError(
                f"client tool {name!r} has the name of one of the server's tools (compared "
                "case-insensitively); rename one of them (a name must say which side runs "
                "the call)")
        _check_description(name, tool.description, limits)
        blob = _measure(name, tool.parameters, limits)
        if blob is not None:
            total += len(blob)
            if total > limits.max_total_schema_bytes:
                raise InvalidInputError(
                    f"client tools' parameters schemas are larger than "
                    f"{limits.max_total_schema_bytes} bytes together "
                    "(ClientToolLimits.max_total_schema_bytes)")
            assert isinstance(tool.parameters, Mapping)
            schemas.append((name, tool.parameters, blob))
        seen.add(folded)
    for name, parameters, blob in schemas:
        _check_schema(name, parameters, blob)
    return tuple(listed)


def _check_description(name: str, description: Any, limits: ClientToolLimits) -> None:
    if not isinstance(description, str):
        raise InvalidInputError(f"client tool {name!r}: its description must be a string")
    if len(description) > limits.max_description:
        raise InvalidInputError(
            f"client tool {name!r}: its description is longer than {limits.max_description} "
            "characters (ClientToolLimits.max_description)")


def _measure(name: str, parameters: Any, limits: ClientToolLimits) -> bytes | None:
    """The schema's compact JSON (``None``: no arguments) once its size, depth
    and ``type`` are within bounds (cheap checks, before the metaschema)."""
    if parameters is None:
        return None
    if not isinstance(parameters, Mapping):
        raise InvalidInputError(f"client tool {name!r}: parameters must be a JSON Schema object, "
                                f"got {type(parameters).__name__}")
    if not parameters:
        return None  # {}: no arguments (offered as an empty object)
    try:
        blob = orjson.dumps(parameters, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:  # a value JSON has no form for, or nested past orjson's limit
        raise InvalidInputError(f"client tool {name!r}: parameters is not JSON ({exc})") from None
    if len(blob) > limits.max_schema_bytes:
        raise InvalidInputError(
            f"client tool {name!r}: its parameters schema is larger than "
            f"{limits.max_schema_bytes} bytes (ClientToolLimits.max_schema_bytes)")
    if nesting_depth(parameters, limits.max_schema_depth) > limits.max_schema_depth:
        raise InvalidInputError(
            f"client tool {name!r}: its parameters schema nests deeper than "
            f"{limits.max_schema_depth} levels (ClientToolLimits.max_schema_depth)")
    kind = parameters.get("type")
    if kind != "object":
        raise InvalidInputError(f"client tool {name!r}: parameters must describe an object "
                                f"(\"type\": \"object\"), got type {kind!r}")
    return blob


def _check_schema(name: str, parameters: Mapping[str, Any], blob: bytes) -> None:
    """``parameters`` against its draft's metaschema; the verdict is cached
    by ``blob`` (the schema's sorted compact JSON)."""
    verdict = _CHECKED.get(blob)
    if verdict is None:
        schema = orjson.loads(blob)
        try:
            validator_for(schema).check_schema(schema)
            verdict = ""
        except JSONSchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
            verdict = f"at {where}: {exc.message}"
        except RecursionError:  # a $ref chain the metaschema walk cannot follow
            verdict = "at (root): too deeply self-referencing to check"
        _CHECKED.put(blob, verdict)
    if verdict:
        raise InvalidInputError(f"client tool {name!r}: parameters is not a valid JSON Schema "
                                f"{verdict}")
