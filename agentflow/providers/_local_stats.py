"""Where the embedded model's time goes: llama.cpp server's per-reply ``timings``.

llama.cpp's server (tools/server, ``server_task_result_cmpl_final::
to_json_oaicompat_chat_stream``) ends each reply with a ``timings`` object:
``cache_n`` prompt tokens reused from the slot's KV cache, ``prompt_n``
prompt tokens evaluated, ``prompt_ms``, ``predicted_n`` tokens decoded (every
one a sampling step, grammar-forced or not), ``predicted_ms``. ``ServerStats``
sums them per model, so a benchmark can report load-independent figures
(tokens per document evaluated, reused, decoded; requests per document) next
to wall-clock ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["ServerStats"]


@dataclass
class ServerStats:
    """Sums of llama.cpp's reply ``timings`` (tokens, milliseconds) over requests.

    ``prompt_n`` prompt tokens evaluated, ``cache_n`` prompt tokens reused from
    the KV cache, ``predicted_n`` tokens decoded, ``prompt_ms``/``predicted_ms``
    the server's time for each (wall time of the slot, so under load or with
    several slots decoding together it is not CPU time). ``requests`` counts
    replies that carried ``timings``.
    """

    requests: int = 0
    prompt_n: int = 0
    cache_n: int = 0
    predicted_n: int = 0
    prompt_ms: float = 0.0
    predicted_ms: float = 0.0

    def add(self, timings: Mapping[str, Any]) -> None:
        """Add one reply's ``timings`` (unknown or non-numeric fields are ignored)."""
        self.requests += 1
        for f in fields(self):
            value = timings.get(f.name)
            if f.name != "requests" and isinstance(value, (int, float)) and value >= 0:
                setattr(self, f.name, getattr(self, f.name) + type(getattr(self, f.name))(value))

    def __sub__(self, other: ServerStats) -> ServerStats:
        return ServerStats(**{f.name: getattr(self, f.name) - getattr(other, f.name)
                              for f in fields(self)})

    def copy(self) -> ServerStats:
        """A snapshot (subtract two to get one run's figures)."""
        return ServerStats(**{f.name: getattr(self, f.name) for f in fields(self)})

    def per(self, documents: int) -> str:
        """One line of per-document figures for ``documents`` documents."""
        n = max(1, documents)
        total = self.prompt_n + self.cache_n
        reused = self.cache_n / total if total else 0.0
        return (f"requests/doc {self.requests / n:.2f}; prompt tokens/doc evaluated "
                f"{self.prompt_n / n:.0f}, reused from cache {self.cache_n / n:.0f} "
                f"({reused:.0%}); decoded tokens/doc {self.predicted_n / n:.0f}; "
                f"server ms/doc prompt {self.prompt_ms / n:.0f}, decode "
                f"{self.predicted_ms / n:.0f}")
