"""``StructuredOutputCompression``: the structured-output engine's tidy-up of
memory at call end (DESIGN.md §3)."""

from __future__ import annotations

from typing import Any

from agentflow.execution import CallExecution
from agentflow.messages import (
    ANSWER_FROM_REASONING,
    FIELD_PROBS,
    STRUCTURED_OUTPUT,
    STRUCTURED_OUTPUT_ATTEMPT,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    TOKEN_LOGPROBS,
    Msg,
    ReminderType,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentflow.middleware._output_run import KEY, OutputRun
from agentflow.middleware.base import Middleware, sync_stage
from agentflow.output.reminders import TOOL_NAME
from agentflow.output.token_confidence import field_probabilities

__all__ = ["StructuredOutputCompression"]

_PROMPT = ReminderType.PROMPT.value


class StructuredOutputCompression(Middleware):
    """Stock middleware: tidy memory at call end (success and give-up alike).

    * transient PROMPT reminders and failed attempts are removed (the last
      attempt of a call that gave up stays, as its answer);
    * ``generate_response`` calls and their results are removed, and on
      success one assistant message with the output JSON
      (``STRUCTURED_OUTPUT=True``) is appended and becomes the reply.

    ENTER/EXIT reminders stay. Memory thus never holds a call to a tool
    that later requests will not declare.
    """

    output_calls_only = True  # tidies the memory of calls that asked for an output only

    @sync_stage  # no await in it: the loop calls it with no coroutine
    def on_call_end(self, ex: CallExecution) -> None:
        run: OutputRun | None = ex.extra.get(KEY)  # run_of, inline
        if run is None:
            return
        last_attempt = None
        if not ex.completed:
            last_attempt = next((m for m in reversed(ex.memory) if m.role == "assistant"), None)
        # block types compared by their ``type`` tag: no call per block
        output_ids = {b.id for m in ex.memory for b in m.content
                      if b.type == "tool_use" and b.name == TOOL_NAME}
        accepted = run.accepted
        kept: list[Msg] = []
        for m in ex.memory:
            if m is accepted:
                continue
            meta = m.metadata
            if meta and (meta.get(STRUCTURED_OUTPUT_REMINDER_TYPE) == _PROMPT
                         or (meta.get(STRUCTURED_OUTPUT_ATTEMPT) and m is not last_attempt)):
                continue
            if output_ids and m.role in ("assistant", "tool"):
                trimmed = _without_output_blocks(m, output_ids)
                if trimmed is None:
                    continue
                m = trimmed
            kept.append(m)
        if ex.completed:
            flags: dict[str, Any] = {STRUCTURED_OUTPUT: True}
            if accepted is not None and accepted.metadata.get(ANSWER_FROM_REASONING):
                flags[ANSWER_FROM_REASONING] = True  # read from the reasoning channel: said so
            tokens = accepted.metadata.get(TOKEN_LOGPROBS) if accepted is not None else None
            if tokens:  # the model's own certainty of each field, kept small
                flags[FIELD_PROBS] = field_probabilities(tokens, run.spec.key_sizes)
            final = Msg("assistant", run.spec.dump_json(ex.output), None, flags)
            kept.append(final)
            ex.reply = final
        elif last_attempt is not None:
            ex.reply = last_attempt
        ex.memory = kept


def _without_output_blocks(m: Msg, output_ids: set[str]) -> Msg | None:
    """``m`` without its output-tool calls and their results; ``None`` when
    nothing a request carries (text, a tool call or result) is left."""
    blocks = [
        b
        for b in m.content
        if not (b.type == "tool_use" and b.name == TOOL_NAME)
        and not (b.type == "tool_result" and b.name == TOOL_NAME and b.tool_use_id in output_ids)
    ]
    if not blocks:
        return None
    if len(blocks) == len(m.content):
        return m
    if not any(isinstance(b, TextBlock | ToolUseBlock | ToolResultBlock) for b in blocks):
        return None
    return m.replace(content=blocks)
