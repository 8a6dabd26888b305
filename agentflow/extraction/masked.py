"""A record's extracted values are the document's data: written as validated.

The secret mask (``agentflow._secrets``) has two parts. URL redaction (a
URL's query, fragment and ``user:password@`` cut: a presigned URL a vendor
echoes in its error) is for text a vendor or agentflow wrote: a failed
record's error, logs, reprs. It never touches what the document says: a
``url`` field holding ``https://github.com/a/b#readme`` or
``git+ssh://git@github.com/a/b.git`` is written so, byte for byte.

The credentials agentflow was given (API keys, tokens, credential headers, a
``base_url``'s password or key: ``mask_keys``) are masked in a record's
values too: a document that quotes the run's own key (a leaked ``.env``, a
log pasted in a ticket) must not copy it into the records. Such a value is
then not the document's: its top-level field is rated ``MASKED`` (so it is
named under ``needs_review``) and named under the record's ``masked`` with
why (the review page says it). A credential that is a key of the output (a
``dict`` field's key) is masked wherever the record names a field by it:
``confidence``, ``needs_review``, ``masked``, ``spans`` and the other parts
keyed by a field's path (``mask_paths``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow._secrets import mask_keys, mask_value, registered

__all__ = ["MASKED", "MASKED_REASON", "flag_masked", "mask_paths", "masked_values"]

MASKED = 0.1
"""A field whose value held a credential agentflow was given, written masked."""

MASKED_REASON = ("the value holds a credential agentflow was given (an API key or token), "
                 "written masked (***): check the document")
"""Why a field is named under a record's ``masked``."""


def masked_values(value: Any) -> tuple[Any, list[str]]:
    """``value`` (a JSON-ready output, or the values of a record's part)
    with the registered credentials masked and every other character as it
    is, and the top-level fields whose value changed (``[""]`` for a changed
    output that is no mapping)."""
    if not registered():  # no credential to mask: every value as it is (no walk)
        return value, []
    masked = mask_value(value, urls=False)
    if masked == value:
        return value, []
    if isinstance(value, Mapping) and isinstance(masked, Mapping):
        return masked, [mask_keys(str(k)) for k in value
                        if mask_keys(str(k)) != str(k) or masked.get(k) != value[k]]
    return masked, [""]


def flag_masked(record: dict[str, Any], fields: list[str]) -> None:
    """Rate each of ``fields`` of ``record`` ``MASKED`` (in its
    ``confidence``, where it has one), name it under ``needs_review`` and
    under ``masked`` with why."""
    if not fields:
        return
    confidence = record.get("confidence")
    if isinstance(confidence, dict):
        for name in fields:
            confidence[name] = min(confidence.get(name, MASKED), MASKED)
    review = record.setdefault("needs_review", [])
    review.extend(name for name in fields if name not in review)
    record.setdefault("masked", {}).update(dict.fromkeys(fields, MASKED_REASON))


_KEYED_BY_PATH = ("confidence", "cut_lists", "cut_dicts", "spans", "span_pages")
"""A record's parts that map a field's path to something."""

_LISTS_OF_PATHS = ("needs_review", "ungrounded")
"""A record's parts that list fields' paths."""


def mask_paths(record: dict[str, Any]) -> None:
    """Mask the registered credentials in the field names and paths
    ``record`` holds (its ``_KEYED_BY_PATH`` parts' keys, its
    ``_LISTS_OF_PATHS`` parts' items), in place: an output's ``dict`` key
    that holds one names its field in them."""
    for part in _KEYED_BY_PATH:
        found = record.get(part)
        if isinstance(found, dict):
            record[part] = {mask_keys(str(k)): v for k, v in found.items()}
    for part in _LISTS_OF_PATHS:
        found = record.get(part)
        if isinstance(found, list):
            record[part] = list(dict.fromkeys(mask_keys(str(p)) for p in found))
