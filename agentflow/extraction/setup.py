"""The ``extract`` command's set-up checks: everything that can be known to be
wrong before the first model request, each refused with one line.

* ``load_schema``: the output type a ``--schema`` names (``module:Class``,
  ``path.py:Class`` or a JSON Schema file); a module that fails to import
  (syntax or runtime error) or a name that is not a type is refused;
* ``check_output_type``: the type can be described as JSON Schema;
* ``check_module_settings``: the schema module's ``INSTRUCTIONS``, ``MAX_CHARS``
  and ``prepare`` are of the right kind;
* ``check_api_key``: the chosen vendor's key is at hand (names the variable);
* ``check_batch_mode``: ``--mode batch`` on a vendor with a batch API.

Each raises ``SetupError``, which the command prints as
``agentflow: error: <message>`` and exits 2 on.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

from agentflow._exc_text import exception_text
from agentflow.errors import SchemaError

__all__ = ["SetupError", "check_api_key", "check_batch_mode", "check_module_settings",
           "check_output_type", "load_schema"]

MAX_SCHEMA_FILE = 8 * 1024 * 1024
"""Largest JSON Schema file read, in bytes."""


class SetupError(Exception):
    """Bad usage or set-up: printed as one line without a traceback, exit status 2."""


def _import_failure(ref: str, exc: BaseException) -> SetupError:
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename or ref}, line {exc.lineno}" if exc.lineno else ref
        return SetupError(f"cannot import schema module {ref!r}: SyntaxError: {exc.msg} ({where})")
    return SetupError(f"cannot import schema module {ref!r}: {type(exc).__name__}: "
                      f"{exception_text(exc)}")


def load_module(ref: str) -> ModuleType:
    """The module ``ref`` names: a file (``path.py``, or any path with a ``/``),
    imported under its stem (``agentflow_schema_<stem>`` when another module
    already has that name) with its folder appended to ``sys.path`` so its
    sibling modules import; else a dotted module name, imported as usual.

    Raises:
        SetupError: the file does not exist, or the module fails to import
            (any exception or ``SystemExit`` it raises, named in the message).
    """
    if ref.endswith(".py") or "/" in ref:
        path = Path(ref)
        if not path.is_file():
            raise _not_a_file(ref, path)
        name = path.stem
        folder = str(path.resolve().parent)
        if folder not in sys.path:  # its sibling modules import, as beside a script run
            sys.path.append(folder)  # (last: never in front of an installed package)
        loaded = getattr(sys.modules.get(name), "__file__", None)
        if loaded is not None and Path(loaded).resolve() != path.resolve():
            name = f"agentflow_schema_{name}"  # never shadow an imported module (json.py...)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise SetupError(f"cannot import {ref!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:  # the user's code: any failure is set-up
            sys.modules.pop(name, None)
            raise _import_failure(ref, exc) from None
        return module
    try:
        return importlib.import_module(ref)
    except (Exception, SystemExit) as exc:
        raise _import_failure(ref, exc) from None


def _not_a_file(shown: str, path: Path) -> SetupError:
    """The error for a schema path that is no regular file, saying what it is."""
    if path.is_dir():
        return SetupError(f"schema file {shown!r} is a directory, not a file")
    if path.exists():
        return SetupError(f"schema file {shown!r} is not a regular file (a pipe, a socket "
                          "or a device)")
    return SetupError(f"schema file {shown!r} does not exist")


def _from_json_schema(path: Path) -> Any:
    from agentflow.output.json_schema import json_schema_output

    if not path.is_file():
        raise _not_a_file(str(path), path)
    if path.stat().st_size > MAX_SCHEMA_FILE:
        raise SetupError(f"{path}: larger than {MAX_SCHEMA_FILE} bytes; not a schema")
    try:
        schema = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise SetupError(f"{path}: not JSON: {exc}") from None
    try:
        return json_schema_output(schema, name=schema.get("title") if isinstance(
            schema, dict) else None)
    except SchemaError as exc:
        raise SetupError(f"{path}: {exc}") from None


def load_schema(ref: str) -> tuple[Any, ModuleType | None]:
    """The output type named by ``module:Class``, ``path.py:Class`` or
    ``schema.json``, and the module it came from (``None`` for JSON).

    A JSON Schema file is used as given (``json_schema_output``): sent to the
    vendor in its dialect and validated with ``jsonschema``.

    Raises:
        SetupError: the reference cannot be resolved, the module fails to
            import, or the name is not a type.
    """
    if ref.endswith(".json"):
        return _from_json_schema(Path(ref)), None
    module_ref, sep, name = ref.rpartition(":")
    if not sep or not module_ref or not name:
        raise SetupError(
            f"--schema must be module:Class, path.py:Class or a .json file, got {ref!r}")
    module = load_module(module_ref)
    try:
        found = getattr(module, name)
    except AttributeError:
        raise SetupError(f"{module_ref!r} has no attribute {name!r}") from None
    check_output_type(found, ref)
    return found, module


def check_output_type(output_type: Any, ref: str) -> None:
    """Refuse what is not a type, or a type no JSON Schema describes.

    Raises:
        SetupError: ``output_type`` is a value (``C = 42``), or pydantic cannot
            describe it.
    """
    from agentflow.output.schema import OutputSpec

    if not (isinstance(output_type, type) or typing.get_origin(output_type) is not None):
        raise SetupError(
            f"--schema {ref}: {ref.rpartition(':')[2]!r} is a {type(output_type).__name__} "
            "value, not a type (name a pydantic model, dataclass or TypedDict class)")
    try:
        OutputSpec.of(output_type)
    except (SchemaError, TypeError) as exc:
        raise SetupError(f"--schema {ref}: {exc}") from None


def check_module_settings(module: ModuleType | None, ref: str) -> None:
    """Refuse a schema module's settings of the wrong kind before anything is read
    (each was a traceback mid-run, or a failed record for every input):
    ``INSTRUCTIONS`` a ``str``, ``MAX_CHARS`` an ``int >= 1``, ``prepare`` a
    callable. (``EXAMPLES``, ``CHUNKING`` and ``PASSES`` are checked where they
    are used.)

    Raises:
        SetupError: naming the setting, what it is and what it must be (a
            ``prepare`` that cannot be called with the text alone too).
    """
    if module is None:
        return
    instructions = getattr(module, "INSTRUCTIONS", None)
    if instructions is not None and not isinstance(instructions, str):
        raise SetupError(f"{ref}: INSTRUCTIONS must be a str (the system prompt), got "
                         f"{type(instructions).__name__}")
    max_chars = getattr(module, "MAX_CHARS", None)
    if max_chars is not None and (not isinstance(max_chars, int) or isinstance(max_chars, bool)
                                  or max_chars < 1):
        raise SetupError(f"{ref}: MAX_CHARS must be an int >= 1 (characters kept of each "
                         f"document), got {max_chars!r}")
    prepare = getattr(module, "prepare", None)
    if prepare is not None and not callable(prepare):
        raise SetupError(f"{ref}: prepare must be a function (text -> text), got "
                         f"{type(prepare).__name__}")
    if prepare is not None:  # one that cannot take the text failed every input's record
        try:
            signature = inspect.signature(prepare)
        except (TypeError, ValueError):  # a builtin without a signature: called as it is
            return
        try:
            signature.bind("text")
        except TypeError as exc:
            raise SetupError(f"{ref}: prepare must take the document's text as its one "
                             f"argument (text -> text); prepare{signature} cannot: "
                             f"{exc}") from None


def check_api_key(model: str, *, api_key: str | None, base_url: str | None) -> None:
    """Refuse a vendor that needs a key none of its variables holds.

    Raises:
        SetupError: the key is missing (the message names the variables).
    """
    registry = importlib.import_module("agentflow.providers.registry")
    try:
        problem = registry.missing_api_key(model, api_key=api_key, base_url=base_url)
    except Exception as exc:  # unknown vendor: the model lookup reports it
        raise SetupError(str(exc)) from None
    if problem:
        raise SetupError(f"{problem}, or pass --api-key")


def check_batch_mode(model: Any, mode: str, engine: str = "local") -> None:
    """Refuse batch modes on the Ray engine (its actors run live requests),
    and ``--mode batch`` on a model (when given) whose vendor has no batch API.

    Raises:
        SetupError: the message names the vendor and the way out.
    """
    from agentflow.batch_api.protocol import BatchCapable

    if mode == "live":
        return
    if engine != "local":
        raise SetupError(f"--mode {mode} runs on --engine local only (the vendor runs the batch)")
    if model is not None and mode == "batch" and not isinstance(model, BatchCapable):
        vendor = getattr(model, "vendor", None) or type(model).__name__
        raise SetupError(f"--mode batch: {vendor} ({getattr(model, 'model_name', '?')}) has no "
                         "batch API; use --mode live or --mode auto")
