"""A strict check of a JSON request body against a vendor SDK's request types.

The official SDKs describe their request bodies as ``TypedDict``s (openai,
anthropic), pydantic models (google-genai, ollama) or keyword signatures
(zai-sdk). Those types accept any extra key at run time; this check does not:

    problems = check(body, CompletionCreateParamsStreaming, extensions=DEEPSEEK_EXT)
    assert not problems, problems

``check`` walks ``value`` along ``tp`` and returns one line per problem,
``"<path>: <what>"`` (path like ``messages[2].tool_calls[0].function``): an
unknown key, a missing required key, a value of the wrong JSON type, a
literal outside its ``Literal``/enum. A key is allowed anyway when its path,
with list indices written ``[*]``, is a key of ``extensions`` (a documented
vendor extension; the value names the document). Union members are tried in
turn; the problems of the closest one are reported.

What the types leave open (``object``, ``Any``, ``Dict[str, object]`` — JSON
Schemas, tool arguments) is not looked into; a pydantic model with its own
model serializer (ollama's ``Image``, sent as its base64 text) takes a string.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

import pydantic
from typing_extensions import is_typeddict

__all__ = ["check", "signature_type"]

_INDEX = re.compile(r"\[\d+\]")
_WRAPPERS = {"Required", "NotRequired", "ReadOnly", "Annotated"}


def check(value: Any, tp: Any, *, extensions: Mapping[str, str] | None = None,
          path: str = "") -> list[str]:
    """Problems of ``value`` (decoded JSON) against type ``tp`` (see module doc)."""
    return _Checker(extensions or {}).walk(value, tp, path)


def signature_type(func: Callable[..., Any], *, skip: Iterable[str] = ()) -> type:
    """A total=False ``TypedDict`` of ``func``'s keyword parameters (for SDKs
    whose request body is a method signature), minus ``skip``."""
    hints = typing.get_type_hints(func)
    fields = {name: hints.get(name, Any) for name, p in inspect.signature(func).parameters.items()
              if name != "self" and name not in set(skip)
              and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return typing.TypedDict(f"{func.__qualname__}Params", fields, total=False)  # type: ignore[operator,no-any-return]


class _Checker:
    def __init__(self, extensions: Mapping[str, str]) -> None:
        self.extensions = extensions

    def allowed(self, path: str) -> bool:
        return _INDEX.sub("[*]", path) in self.extensions

    def walk(self, value: Any, tp: Any, path: str) -> list[str]:
        tp = _unwrap(tp)
        if tp is Any or tp is object or isinstance(tp, typing.TypeVar):
            return []
        origin = get_origin(tp)
        if origin in (Union, types.UnionType):
            return self.union(value, get_args(tp), path)
        if origin is Literal:
            return [] if value in get_args(tp) else [f"{path}: {value!r} not in {get_args(tp)}"]
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            allowed = [m.value for m in tp]
            return [] if value in allowed else [f"{path}: {value!r} not one of {tp.__name__}"]
        if is_typeddict(tp):
            return self.typeddict(value, tp, path)
        if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
            return self.model(value, tp, path)
        if origin in (list, tuple, Sequence, Iterable, typing.Sequence, typing.Iterable,
                      set, frozenset) or tp in (list, tuple):
            if not isinstance(value, list):
                return [f"{path}: expected a list, got {type(value).__name__}"]
            args = get_args(tp) or (Any,)
            return [p for i, item in enumerate(value) for p in self.walk(item, args[0],
                                                                          f"{path}[{i}]")]
        if origin in (dict, Mapping, typing.Mapping) or tp is dict:
            if not isinstance(value, dict):
                return [f"{path}: expected an object, got {type(value).__name__}"]
            args = get_args(tp)
            if len(args) == 2:
                return [p for k, v in value.items() for p in self.walk(v, args[1],
                                                                        _join(path, k))]
            return []
        return self.scalar(value, tp, path)

    def scalar(self, value: Any, tp: Any, path: str) -> list[str]:
        if tp is type(None) or tp is None:
            ok = value is None
        elif tp is bool:
            ok = isinstance(value, bool)
        elif tp is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif tp is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif tp is str:
            ok = isinstance(value, str)
        elif tp is bytes:
            ok = isinstance(value, str)  # base64 on the wire
        elif isinstance(tp, type):
            ok = isinstance(value, tp)
        else:
            return []  # a construct the SDK left open (a Protocol, a NewType...)
        return [] if ok else [f"{path}: expected {getattr(tp, '__name__', tp)}, got {value!r}"]

    def union(self, value: Any, members: Sequence[Any], path: str) -> list[str]:
        best: list[str] | None = None
        best_rank: tuple[bool, bool, int] | None = None
        for member in members:
            problems = self.walk(value, member, path)
            if not problems:
                return []
            # the closest member: right JSON type, right discriminator, fewest problems
            rank = (any(p.startswith(f"{path}: expected") for p in problems),
                    any(p.startswith((f"{_join(path, 'type')}: ", f"{_join(path, 'role')}: "))
                        and " not in " in p for p in problems),
                    len(problems))
            if best_rank is None or rank < best_rank:
                best, best_rank = problems, rank
        return best or [f"{path}: matches no member of the union"]

    def typeddict(self, value: Any, tp: Any, path: str) -> list[str]:
        if not isinstance(value, dict):
            return [f"{path}: expected an object ({tp.__name__}), got {type(value).__name__}"]
        hints = typing.get_type_hints(tp, include_extras=True)
        wire = {_alias(hint) or name: (name, hint) for name, hint in hints.items()}
        problems = [f"{_join(path, _alias(hint) or key)}: required by {tp.__name__}"
                    for key, hint in hints.items()
                    if _required(tp, key, hint) and (_alias(hint) or key) not in value]
        for key, item in value.items():
            if key in wire:
                problems += self.walk(item, wire[key][1], _join(path, key))
            elif not self.allowed(_join(path, key)):
                problems.append(f"{_join(path, key)}: unknown key (not in {tp.__name__})")
        return problems

    def model(self, value: Any, tp: type[pydantic.BaseModel], path: str) -> list[str]:
        if tp.__pydantic_decorators__.model_serializers and isinstance(value, str):
            return []  # the model writes itself as text (ollama's Image: its base64)
        if not isinstance(value, dict):
            return [f"{path}: expected an object ({tp.__name__}), got {type(value).__name__}"]
        fields: dict[str, Any] = {}
        for name, info in tp.model_fields.items():
            fields[name] = info
            if info.alias:
                fields[info.alias] = info
        problems = [f"{_join(path, info.alias or name)}: required by {tp.__name__}"
                    for name, info in tp.model_fields.items()
                    if info.is_required() and name not in value and info.alias not in value]
        for key, item in value.items():
            info = fields.get(key)
            if info is not None:
                problems += self.walk(item, info.annotation, _join(path, key))
            elif not self.allowed(_join(path, key)):
                problems.append(f"{_join(path, key)}: unknown key (not in {tp.__name__})")
        return problems


def _unwrap(tp: Any) -> Any:
    """``tp`` without ``Annotated``/``Required``/``NotRequired``/``ReadOnly``
    and with type aliases resolved."""
    while True:
        origin = get_origin(tp)
        if origin is not None and getattr(origin, "_name", None) in _WRAPPERS:
            tp = get_args(tp)[0]
        elif getattr(tp, "__metadata__", None) is not None:
            tp = tp.__origin__
        elif hasattr(tp, "__value__"):  # PEP 695 alias
            tp = tp.__value__
        elif isinstance(tp, typing.ForwardRef):
            return Any
        else:
            return tp


def _required(tp: Any, key: str, hint: Any) -> bool:
    """Whether a TypedDict key is required: marked ``Required``, or in a total
    TypedDict and not marked ``NotRequired`` (``__required_keys__`` misses the
    markers when the SDK's annotations are strings)."""
    marks = set()
    while True:
        origin = get_origin(hint)
        name = getattr(origin, "_name", None) or getattr(hint, "_name", None)
        if origin is None or name not in _WRAPPERS:
            break
        marks.add(name)
        hint = get_args(hint)[0]
    if "Required" in marks:
        return True
    if "NotRequired" in marks:
        return False
    return key in getattr(tp, "__required_keys__", ())


def _alias(hint: Any) -> str | None:
    """The wire name an ``Annotated[..., PropertyInfo(alias=...)]`` declares."""
    for meta in getattr(hint, "__metadata__", ()):
        alias = getattr(meta, "alias", None)
        if isinstance(alias, str):
            return alias
    origin = get_origin(hint)
    if origin is not None and getattr(origin, "_name", None) in _WRAPPERS:
        return _alias(get_args(hint)[0])
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
