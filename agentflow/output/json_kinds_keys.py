"""Where a model's, dataclass's or TypedDict's field may be written in the
JSON a model sent: the key paths pydantic reads it from (its validation
alias or alias, its name), and the value at such a path
(``agentflow.output.json_kinds`` compares what was written with what
validation read, field by field)."""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, AliasPath
from pydantic.fields import FieldInfo

__all__ = ["ABSENT", "Loc", "field_paths", "lookup", "object_keys"]

Loc = tuple[int | str, ...]
"""A key path: object keys and array indexes, outermost first."""


def _alias_paths(alias: Any) -> list[Loc]:
    """The key paths a validation alias reads: a string, each choice of an
    ``AliasChoices``, the steps of an ``AliasPath``."""
    if isinstance(alias, str):
        return [(alias,)]
    if isinstance(alias, AliasPath):
        return [tuple(alias.path)]
    if isinstance(alias, AliasChoices):
        return [tuple(path) for path in alias.convert_to_aliases()]
    return []


def field_paths(info: FieldInfo, name: str, config: Mapping[str, Any]) -> tuple[Loc, ...]:
    """The key paths a field may be written under, in pydantic's order: its
    validation alias (else its alias) unless ``validate_by_alias`` is off,
    then its name when ``validate_by_name`` (or ``populate_by_name``) is on
    or it has no alias."""
    aliases = _alias_paths(info.validation_alias if info.validation_alias is not None
                           else info.alias)
    by_name = (not aliases or config.get("validate_by_name")
               or config.get("populate_by_name"))
    paths = aliases if config.get("validate_by_alias", True) else []
    return tuple(dict.fromkeys([*paths, *([(name,)] if by_name else [])]))


def _dataclass_infos(cls: type[Any]) -> dict[str, FieldInfo]:
    """The pydantic field information of a standard dataclass's fields (an
    ``Annotated[..., Field(alias=...)]`` annotation or a ``Field(...)``
    default); a field whose annotation does not resolve has none."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # an annotation naming a local type: aliases from defaults only
        hints = {}
    infos = {}
    for f in dataclasses.fields(cls):
        if f.name in hints:
            infos[f.name] = FieldInfo.from_annotated_attribute(hints[f.name], f.default)
        elif isinstance(f.default, FieldInfo):
            infos[f.name] = f.default
    return infos


@functools.lru_cache(maxsize=1024)
def object_keys(cls: type[Any]) -> tuple[tuple[str, tuple[Loc, ...]], ...]:
    """Each field of the model or dataclass ``cls`` with the key paths it may
    be written under (``field_paths``)."""
    infos: Mapping[str, FieldInfo] | None = getattr(cls, "__pydantic_fields__", None)
    config: Mapping[str, Any] = (getattr(cls, "model_config", None)
                                 or getattr(cls, "__pydantic_config__", None) or {})
    if infos is None:  # a standard dataclass
        infos = _dataclass_infos(cls)
        names = [f.name for f in dataclasses.fields(cls)]
    else:
        names = list(infos)
    return tuple((name, field_paths(infos[name], name, config) if name in infos
                  else ((name,),)) for name in names)


ABSENT = object()


def lookup(written: Any, path: Loc) -> Any:
    """The value at ``path`` in ``written`` (keys of objects, indexes of
    arrays), or ``ABSENT``."""
    for step in path:
        key = isinstance(step, str) and isinstance(written, Mapping) and step in written
        index = isinstance(step, int) and isinstance(written, list | tuple) \
            and -len(written) <= step < len(written)
        if not (key or index):
            return ABSENT
        written = written[step]
    return written
