"""OpenRouter's ``reasoning_details``: a reply's structured reasoning, to be
sent back with the assistant turn it came in (used by ``_openai_chunks`` and
``_openai_wire``).

OpenRouter returns the reasoning of Gemini, Claude and OpenAI reasoning
models as ``message.reasoning_details``: a list of ``{"type":
"reasoning.text" | "reasoning.summary" | "reasoning.encrypted", "text" |
"summary" | "data", "signature", "id", "format", "index"}`` items, streamed as
fragments of those items under ``delta.reasoning_details`` (an item's text
split over many chunks, keyed by its ``index``). The list must go back
unchanged on the assistant message in later requests ("Preserving reasoning
blocks", openrouter.ai/docs/use-cases/reasoning-tokens): Gemini 3's thought
signature rides in a ``reasoning.encrypted`` item, and without it the tool
loop's next request is refused (400 "Gemini models require OpenRouter
reasoning details to be preserved in each request", microsoft/agent-framework#2947).
Fragments are put together as the clients that keep them do
(RooCodeInc/Roo-Code#9506): by type and index, the text fields concatenated,
any other field the latest non-null value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["REASONING_DETAILS", "DetailsMerger"]

REASONING_DETAILS = "openai_reasoning_details"
"""``ThinkingBlock.provider_data`` key: the reply's ``reasoning_details`` list."""

_TEXT_FIELDS = frozenset({"text", "summary", "data"})


class DetailsMerger:
    """The ``reasoning_details`` items of one reply, fed fragment by fragment."""

    __slots__ = ("_items", "_keys", "changed")

    def __init__(self) -> None:
        self._items: list[dict[str, Any]] = []
        self._keys: dict[tuple[Any, Any], dict[str, Any]] = {}
        self.changed = False
        """Whether items came since ``items()`` was last called."""

    def add(self, fragments: Any) -> None:
        """Fold a ``reasoning_details`` list (fragments, or whole items) in;
        anything that is not a list of objects is ignored."""
        if not isinstance(fragments, list):
            return
        for fragment in fragments:
            if not isinstance(fragment, Mapping):
                continue
            index = fragment.get("index")
            key = (fragment.get("type"), index if isinstance(index, int) else object())
            item = self._keys.get(key)
            self.changed = True
            if item is None:
                item = {k: [v] if k in _TEXT_FIELDS and isinstance(v, str) else v
                        for k, v in fragment.items()}
                self._keys[key] = item
                self._items.append(item)
                continue
            for name, value in fragment.items():
                if name in _TEXT_FIELDS and isinstance(value, str):
                    parts = item.get(name)
                    if isinstance(parts, list):
                        parts.append(value)
                    else:
                        item[name] = [value]
                elif value is not None and name != "index":
                    item[name] = value

    def items(self) -> list[dict[str, Any]]:
        """The items so far, each text field joined."""
        self.changed = False
        return [{k: "".join(v) if k in _TEXT_FIELDS and isinstance(v, list) else v
                 for k, v in item.items()} for item in self._items]
