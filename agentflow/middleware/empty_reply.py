"""``EmptyReplyContinuation``: the loop's rule for a reply that says nothing
(stock middleware; vendor-free).

A model may end its turn normally (finish reason ``stop``) with no text and
no tool call, thinking aside: Claude's documented "empty response with
end_turn" (2-3 output tokens, no content; platform.claude.com, *Handling
stop reasons*), most often just after tool results, and any model (or a
gateway that lost the content) can do it, to the first message too. A text
call then completed with an empty answer, silently: a success without data.
What users of such frameworks expect is what Pydantic AI does (it asks again,
then raises ``UnexpectedModelBehavior``): ask once more, then a typed error.
Sending the same request again does not help after tool results (the model
already decided it is done); the documented remedy is a prompt in a new user
message, so every empty reply is asked again so.

==============================================  ==================================
the step's reply (a call without output type)   what happens
==============================================  ==================================
text, a tool call, or a finish reason other     nothing (the usual rules)
than ``stop``
empty, first time in this step                  the reply is dropped, the same
                                                step is asked again with a prompt:
                                                after tool results ``CONTINUE_PROMPT``,
                                                else (the first reply) ``ANSWER_PROMPT``
                                                (``AttemptDiscarded`` ``empty_reply``
                                                for stream readers)
empty again, after that prompt                  ``EmptyReplyError``: the caller can
                                                tell there is no answer
==============================================  ==================================

What stays in memory: neither the empty reply nor the prompt. The empty
reply holds nothing to keep, and an assistant turn without content is
refused by some vendors (Anthropic: non-empty content on every turn but the
last); the prompt is added to the *request* only (``pre_reasoning``, tagged
``CACHE_CONTROL=False``), so the stored conversation reads the question (or
the tool results), then the model's answer, valid on every vendor (a user
turn after tool results, or after a user turn, is what every protocol takes,
rewritten by ``_alternating`` for chat templates that need strict turns),
and the caller's ``AgentState`` holds no turn the caller did not write. A
call with an output type is left to the structured-output engine, which
treats an empty reply the same way: a transient user turn asks again
(forcing, or the invalid-reply prompt), the failed attempt is dropped at
call end, and past its budget the call fails with ``StructuredOutputError``.
"""

from __future__ import annotations

from agentflow.errors import EmptyReplyError
from agentflow.events import AttemptDiscarded
from agentflow.execution import CallExecution
from agentflow.messages import CACHE_CONTROL, Msg, TextBlock, ThinkingBlock
from agentflow.middleware.base import Decision, Middleware, ModelRequest, ReasonAgain

__all__ = ["ANSWER_PROMPT", "CONTINUE_PROMPT", "EmptyReplyContinuation", "is_empty"]

CONTINUE_PROMPT = ("Your last reply was empty. Please continue: use the tool results above "
                   "to answer the request (or call another tool if you need one).")
"""The continuation prompt sent after an empty reply that followed tool results."""

ANSWER_PROMPT = "Your last reply was empty. Please answer the message above."
"""The prompt sent after an empty reply to a message (no tool results before it)."""

_KEY = "empty_reply.asked"
"""``ex.extra``: the prompt the step's empty reply was answered with."""


def is_empty(reply: Msg) -> bool:
    """Whether ``reply`` says nothing: no text (blank counts as none), no tool
    call, no other content; thinking alone is empty."""
    return all(isinstance(block, ThinkingBlock)
               or (isinstance(block, TextBlock) and not block.text.strip())
               for block in reply.content)


class EmptyReplyContinuation(Middleware):
    """Stock middleware: an empty reply is asked to go on (after tool results)
    or to answer (the first reply) once per step; empty again, the call
    raises ``EmptyReplyError`` (the module docstring has the table and what
    memory keeps)."""

    text_calls_only = True  # a call with an output type is the engine's (post_reasoning)

    async def pre_reasoning(self, ex: CallExecution, request: ModelRequest) -> None:
        prompt = ex.extra.get(_KEY)
        if prompt:  # this step's request again, with the prompt (never in memory)
            request.messages.append(Msg("user", prompt, None, {CACHE_CONTROL: False}))

    async def post_reasoning(self, ex: CallExecution, reply: Msg) -> Decision | None:
        if ex.output_type is not None:  # the structured-output engine's (see the docstring)
            return None
        asked = ex.extra.pop(_KEY, None)
        if ex.last_finish_reason != "stop" or not is_empty(reply):
            return None
        vendor = str(getattr(ex.model, "vendor", "") or "")
        if asked == CONTINUE_PROMPT:
            raise EmptyReplyError(
                "the model replied with nothing (no text, no tool call) after tool results, "
                "and again after it was asked to continue: there is no answer; send the call "
                "again, or check what the tools returned", vendor=vendor)
        if asked:
            raise EmptyReplyError(
                "the model replied with nothing (no text, no tool call), and again after it "
                "was asked to answer: there is no answer; send the call again", vendor=vendor)
        memory = ex.memory
        if not memory or memory[-1] is not reply:
            return None  # not the loop's reply in memory (a middleware's own): left alone
        after_tools = len(memory) > 1 and memory[-2].role == "tool"
        memory.pop()  # nothing to keep (and an empty assistant turn some vendors refuse)
        ex.extra[_KEY] = CONTINUE_PROMPT if after_tools else ANSWER_PROMPT
        ex.log.info("call.empty_reply", iteration=ex.iteration, after_tools=after_tools)
        ex.emit(AttemptDiscarded(
            ex.iteration, "empty_reply",
            "the reply was empty after tool results; asking the model to continue"
            if after_tools else "the reply was empty; asking the model to answer"))
        return ReasonAgain()
