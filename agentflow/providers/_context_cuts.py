"""Prompts a server cut to its context window without saying so.

Ollama keeps only the end of a prompt longer than its ``num_ctx`` and
answers as if it had read all of it (ollama/ollama#7043, #8099); a
llama.cpp server with context shift drops the start of its ``n_ctx``
window the same way (its ``/completion`` reply says ``truncated: true``).
The reply tells us how many prompt tokens the server evaluated (Ollama
``prompt_eval_count``; ``usage.prompt_tokens`` of an OpenAI-compatible
server): when we sent clearly more than the window (by our own count,
``prompt_estimate``: 4 characters a token, with a 10% margin) and the
server evaluated no more than the window, the prompt was cut, and the
reply is refused with ``ContextLengthError`` (whose message says to chunk
the input): never a silent result over part of the input.

``window_needed`` is the window a request needs (its prompt and its reply),
for protocols that let a request ask for one (Ollama ``options.num_ctx``).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.errors import ContextLengthError
from agentflow.messages import Msg

__all__ = [
    "CHARS_PER_TOKEN",
    "REPLY_ALLOWANCE",
    "cut_error",
    "prompt_estimate",
    "silent_cut",
    "window_needed",
]

CHARS_PER_TOKEN = 4
"""Our count of a prompt's tokens: its characters / 4 (English prose; the
vendors' own rule of thumb)."""
REPLY_ALLOWANCE = 1024
"""Tokens left for the reply when a request does not cap it (``max_tokens``)."""
_MARGIN = 1.1


def prompt_estimate(messages: Sequence[Msg]) -> int:
    """Our count of the prompt tokens ``messages`` hold (text, tool calls'
    arguments and tool results; images and documents are not counted)."""
    chars = 0
    for m in messages:
        for b in m.content:
            kind = b.type
            if kind == "text":
                chars += len(b.text)  # type: ignore[union-attr]
            elif kind == "tool_result":
                chars += len(str(b.output))  # type: ignore[union-attr]
            elif kind == "tool_use":
                chars += len(str(b.input))  # type: ignore[union-attr]
    return chars // CHARS_PER_TOKEN


def window_needed(prompt: int, max_tokens: int | None, step: int = 4096) -> int:
    """The window (tokens) a request of ``prompt`` tokens needs with room for
    its reply (``max_tokens`` or ``REPLY_ALLOWANCE``), rounded up to ``step``
    (few distinct sizes: a server reloads a model for a new window)."""
    need = prompt + (max_tokens or REPLY_ALLOWANCE)
    return -(-need // step) * step


def silent_cut(sent: int, window: int | None, evaluated: int | None) -> bool:
    """Whether a server with a ``window``-token context cut a prompt of ``sent``
    tokens (our count) of which it says it evaluated ``evaluated``: we sent
    clearly more than the window and it evaluated no more than the window."""
    if not window or not evaluated or evaluated < 0:
        return False
    return sent > window * _MARGIN and evaluated <= window


def cut_error(vendor: str, sent: int, window: int, evaluated: int) -> ContextLengthError:
    """The error for a prompt cut to ``window`` tokens (``evaluated`` of about ``sent``)."""
    return ContextLengthError(
        f"{vendor} evaluated {evaluated} prompt tokens of about {sent} sent: the server cut "
        f"the prompt to its {window}-token context window without saying so, so the reply "
        "read only part of the input", limit=window, requested=sent, vendor=vendor)
