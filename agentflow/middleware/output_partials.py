"""Partial outputs while a call streams (``stream()``; ``call()`` works none
out): the ``OutputPartial`` event a chunk brings, if any, on every path of
the structured-output engine."""

from __future__ import annotations

from agentflow.events import AttemptDiscarded, Event, OutputPartial
from agentflow.execution import CallExecution
from agentflow.middleware._output_run import OutputRun
from agentflow.model import ModelChunk, TextDelta, ToolCallDelta
from agentflow.output.partial import ValueStarts
from agentflow.output.reminders import TOOL_NAME
from agentflow.output.thinking import visible_text
from agentflow.reply import ReplyBuilder

__all__ = ["partial_event"]


def partial_event(
    ex: CallExecution, run: OutputRun, chunk: ModelChunk, reply: ReplyBuilder
) -> Event | None:
    """The event ``chunk`` brings: ``OutputPartial`` when the output parsed
    so far grew (the ``generate_response`` call's arguments on the tool path;
    the latest JSON value of the visible reply text otherwise), or
    ``AttemptDiscarded`` when a later JSON value in the text replaces the one
    followed so far; ``None`` otherwise."""
    if run.discards != ex.discarded:  # the attempt was announced void: start again
        run.discards = ex.discarded
        run.partial.reset()
    data = None
    if isinstance(chunk, ToolCallDelta):
        if run.kind == "tool" and reply.tools.name(chunk.index) == TOOL_NAME:
            if chunk.arguments_obj is not None:
                data = run.partial.update(dict(chunk.arguments_obj))
            else:
                data = run.partial.from_text(reply.tools.arguments_text(chunk.index))
    elif isinstance(chunk, TextDelta) and run.kind != "tool":
        text = visible_text(reply.text)  # drafts inside reasoning never count
        if text is None:
            return None
        starts = run.value_starts
        if starts is None:
            starts = run.value_starts = ValueStarts("[{" if run.spec.wrapped else "{")
        start = starts(text)
        if start is None:
            return None
        if run.partial.start != start:
            superseded = run.partial.last is not None
            run.partial.reset()
            run.partial.start = start
            if superseded:
                ex.discarded += 1
                run.discards = ex.discarded
                return AttemptDiscarded(ex.iteration, "superseded",
                                        "a later JSON value in the reply replaces the "
                                        "partial output so far")
        data = run.partial.from_text(text[start:])
    return OutputPartial(data) if data is not None else None
