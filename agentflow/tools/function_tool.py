"""``Tool``: a python callable the model can call, and the ``@tool`` decorator.

``Tool.from_function`` turns a sync or async function into a tool: its name,
its docstring (summary and ``Args:`` section) and a JSON Schema of its
parameters built by pydantic from the signature. Arguments are validated
(lax mode: ``"30"`` becomes ``30``) before the function runs; a validation
error or an exception becomes an error result the model can read, never a
crash of the agent. Sync functions run in a worker thread.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from agentflow._arguments import check_function, check_int
from agentflow._clean_text import json_bytes
from agentflow._commit import stray_cancel
from agentflow._exc_text import exception_text
from agentflow._secrets import mask_secrets
from agentflow.errors import ToolDefinitionError, ToolError, ToolTypeError
from agentflow.messages import ToolResultBlock, ToolUseBlock, clean_text
from agentflow.model import ToolSpec
from agentflow.output.decoding import RAW_ARGUMENTS, explain_raw, lax_arguments
from agentflow.output.json_kinds import check_kinds
from agentflow.tools.names import sanitize_tool_name, validate_tool_name

__all__ = ["JsonText", "Tool", "describe_validation_error", "tool"]


class JsonText(str):
    """A tool's return value that is already the JSON text of its value (an
    MCP tool's structured result, ``agentflow.mcp``): the tool result's text
    as it is, marked ``is_json``, never parsed and written again."""

    __slots__ = ()


def describe_validation_error(exc: ValidationError) -> str:
    """One line per failing field: ``path: message``, e.g. ``scores.0.score:
    Input should be a valid integer``. The model reads this to fix its call."""
    lines = []
    for err in exc.errors(include_url=False):
        path = ".".join(str(p) for p in err["loc"]) or "(root)"
        lines.append(f"- {path}: {err['msg']}")
    return "\n".join(lines)


_ARGS_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$", re.MULTILINE)
_PARAM_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Summary text and per-parameter descriptions (Google style ``Args:``)."""
    doc = inspect.cleandoc(doc)
    match = _ARGS_SECTION.search(doc)
    if not match:
        return doc.strip(), {}
    summary = doc[: match.start()].strip()
    params: dict[str, str] = {}
    current: str | None = None
    for line in doc[match.end() :].splitlines():
        if line.strip() and not line.startswith(" "):
            break  # next section
        m = _PARAM_LINE.match(line)
        if m and len(line) - len(line.lstrip()) <= 4:
            current = m.group(1).lstrip("*")
            params[current] = m.group(2).strip()
        elif current and line.strip():
            params[current] += " " + line.strip()
    return summary, params


def _has_schema(annotation: Any) -> bool:
    try:
        TypeAdapter(annotation).json_schema()
    except Exception:
        return False
    return True


def _field_name(param: str) -> str:
    """A pydantic-safe field name for a parameter (``_x``, ``model_config``,
    ``schema`` would clash with pydantic); the parameter's name is kept as alias."""
    if param.startswith("_") or param.startswith("model_") or hasattr(BaseModel, param):
        return f"param_{param.lstrip('_')}_{len(param)}"
    return param


def _stringify(value: Any) -> tuple[str, bool]:
    """A tool's return value as the text the model reads, and whether that
    text is the value's JSON (``ToolResultBlock.is_json``): a ``str`` is the
    text itself, anything else its JSON (an object no writer takes, its
    ``str()``: text); a ``JsonText`` is that JSON already."""
    if isinstance(value, JsonText):
        return str(value), True
    if isinstance(value, str):
        return clean_text(value), False
    if isinstance(value, BaseModel):
        return value.model_dump_json(), True
    try:
        return json_bytes(value, default=str).decode(), True
    except TypeError:
        return str(value), False


@dataclass(frozen=True, slots=True)
class Tool:
    """A callable the model may call.

    Attributes:
        name: the name the model uses (``^[A-Za-z0-9_-]{1,64}$``).
        description: what the tool does, for the model.
        parameters: JSON Schema (object) of the arguments.
        function: the sync or async callable.
        args_model: pydantic model validating the arguments.
        max_retries: failed calls of this tool allowed in one agent call
            (bad arguments, exceptions, ``ToolError``) before the call stops
            with ``ToolRetriesExceededError``; ``None``: the agent's
            ``tool_retries``.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]
    args_model: type[BaseModel]
    is_async: bool = field(default=False, repr=False)
    max_retries: int | None = None

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        max_retries: int | None = None,
    ) -> Tool:
        """Build a tool from ``function``'s signature and docstring.

        An explicit ``name`` must be valid; a derived one (``function.__name__``)
        is sanitized by ``sanitize_tool_name``.

        Raises:
            ToolTypeError: (a ``ToolDefinitionError`` and a ``TypeError``)
                ``function`` is not callable.
            ToolDefinitionError: a parameter is positional-only or
                ``*args``/``**kwargs``.
            ToolNameError: ``name`` is invalid.
            ArgumentTypeError / ArgumentValueError: ``max_retries`` is not an
                int or < 0.
        """
        check_int("max_retries", max_retries, 0, optional=True)
        check_function("a tool", function, "a callable", error=ToolTypeError)
        if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
            raise ToolDefinitionError(
                f"tool {getattr(function, '__name__', function)!r} is a generator: a tool "
                "returns its result (collect the items into a list and return it)"
            )
        if name is not None:
            tool_name = validate_tool_name(name)
        else:
            tool_name = sanitize_tool_name(getattr(function, "__name__", type(function).__name__))
        summary, param_docs = _parse_docstring(inspect.getdoc(function) or "")
        target = function if inspect.isroutine(function) else type(function).__call__
        try:
            hints = get_type_hints(target)
        except Exception:  # unresolved forward refs: fall back to raw annotations
            hints = {}
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(function).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise ToolDefinitionError(
                    f"tool {tool_name!r}: parameter {pname!r} must be a named parameter "
                    "(no *args, **kwargs or positional-only parameters)"
                )
            annotation = hints.get(pname, param.annotation)
            if annotation is inspect.Parameter.empty:
                annotation = Any
            default = ... if param.default is param.empty else param.default
            if isinstance(default, FieldInfo):
                info = default
                if info.alias is None:  # the model sees the parameter's own name
                    info = FieldInfo.merge_field_infos(info, alias=pname)
            else:
                info = Field(default, alias=pname, description=param_docs.get(pname))
            fields[_field_name(pname)] = (annotation, info)
        try:
            args_model = create_model(
                f"{tool_name}_args",
                __config__=ConfigDict(extra="forbid", populate_by_name=True,
                                      protected_namespaces=()),
                **fields,
            )
            schema = args_model.model_json_schema(by_alias=True)
        except Exception as exc:  # pydantic's schema errors name the type, not the parameter
            culprit = next((info.alias for tp, info in fields.values() if not _has_schema(tp)),
                           None)
            where = f"parameter {culprit!r}" if culprit else "the argument schema"
            raise ToolDefinitionError(
                f"tool {tool_name!r}: cannot build a JSON Schema for {where}: {exc}"
            ) from exc
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        is_async = inspect.iscoroutinefunction(function) or (
            not inspect.isroutine(function) and inspect.iscoroutinefunction(type(function).__call__)
        )
        return cls(
            name=tool_name,
            description=description or summary or tool_name,
            parameters=schema,
            function=function,
            args_model=args_model,
            is_async=is_async,
            max_retries=max_retries,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(self.name, self.description, self.parameters)

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        """Why ``arguments`` do not fit the tool (the error result ``run``
        would give for them, read as ``run`` reads them), or ``None``; runs
        nothing. ``agentflow.approvals`` checks a person's edited call so."""
        checked = self._validated(arguments)
        return checked if isinstance(checked, str) else None

    def _validated(self, arguments: Mapping[str, Any]) -> BaseModel | str:
        """``arguments`` validated (``run``'s reading), or why they do not fit."""
        data = dict(arguments)
        if set(data) == {RAW_ARGUMENTS}:
            return (f"Invalid arguments for tool {self.name!r}:\n- {RAW_ARGUMENTS}: "
                    f"{explain_raw(str(data[RAW_ARGUMENTS]))} "
                    f"(got {str(data[RAW_ARGUMENTS])[:200]!r})")
        try:
            written = lax_arguments(data, self.parameters)
            args = self.args_model.model_validate(written)
            # lax, but a boolean is no number and digits are no date (json_kinds)
            check_kinds(self.name, written, args, self.args_model)
        except ValidationError as exc:
            return f"Invalid arguments for tool {self.name!r}:\n{describe_validation_error(exc)}"
        return args

    async def run(self, call: ToolUseBlock) -> ToolResultBlock:
        """Validate ``call.input`` and run the function.

        The arguments go through the tolerant decoder first
        (``agentflow.output.decoding``): JSON or Python-literal strings where
        the schema expects an array or object are decoded, stringified enum
        members converted back, numbers and booleans given as strings read
        (``lax_arguments``); a field typed ``str`` is never decoded. The
        crossings of JSON kinds an output refuses are refused here too
        (``output.json_kinds``: ``true`` for an ``int``, ``"2024"`` for a
        ``datetime``, read as 1 and as 1970 before).

        Never raises for a bad call: validation errors and exceptions (and a
        ``SystemExit``: a command-line parser's ``sys.exit`` inside the tool;
        a result no writer can turn into text, nested too deeply) become a
        ``ToolResultBlock`` with ``is_error=True`` (a cancellation of the
        call propagates; a ``CancelledError`` the tool raised on its own,
        ``stray_cancel``, is its failure like any exception);
        an exception's text goes through ``mask_secrets`` (registered keys,
        URLs' user info and queries cut), a ``ToolError``'s is the tool's own.
        """
        args = self._validated(call.input)
        if isinstance(args, str):
            return ToolResultBlock(call.id, args, is_error=True, name=self.name)
        kwargs = {
            info.alias or name: getattr(args, name)
            for name, info in type(args).model_fields.items()
        }
        extra = args.__pydantic_extra__  # a model keeping undeclared keys: a JSON Schema's tool
        if extra:
            kwargs.update(extra)
        try:
            if self.is_async:
                result = await self.function(**kwargs)
            else:
                result = await anyio.to_thread.run_sync(lambda: self.function(**kwargs))
                if inspect.isawaitable(result):
                    result = await result
        except ToolError as exc:
            return ToolResultBlock(call.id, exception_text(exc), is_error=True, name=self.name)
        except asyncio.CancelledError as exc:
            if not stray_cancel(exc):  # the call is being cancelled: let it
                raise
            return ToolResultBlock(call.id, mask_secrets(f"CancelledError: {exception_text(exc)}"),
                                   is_error=True, name=self.name)
        except Exception as exc:  # its text may quote internals: no secret, no URL credential
            return ToolResultBlock(
                call.id, mask_secrets(f"{type(exc).__name__}: {exception_text(exc)}"),
                is_error=True, name=self.name)
        except SystemExit as exc:  # argparse, click, a library's sys.exit: the tool failed
            return ToolResultBlock(
                call.id, mask_secrets(f"SystemExit: the tool exited (status {exc.code!r})"),
                is_error=True, name=self.name)
        try:
            output, is_json = _stringify(result)
        except Exception as exc:  # nested past any writer, a __str__ that raises: its failure
            return ToolResultBlock(call.id, mask_secrets(
                f"the tool's result could not be written as text ({type(exc).__name__}: "
                f"{exception_text(exc)[:200]})"), is_error=True, name=self.name)
        return ToolResultBlock(call.id, output, name=self.name, is_json=is_json)


def tool(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    max_retries: int | None = None,
) -> Any:
    """Decorator form of ``Tool.from_function``: ``@tool`` or
    ``@tool(name=..., max_retries=...)``."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        return Tool.from_function(fn, name=name, description=description,
                                  max_retries=max_retries)

    return wrap(function) if function is not None else wrap

