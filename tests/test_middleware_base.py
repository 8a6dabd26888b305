"""``hooks_for``: which middleware run at each stage of the loop."""

from __future__ import annotations

from agentflow.middleware.base import Middleware, hooks_for


class Start(Middleware):
    async def on_call_start(self, ex):
        return None


class Chunk(Middleware):
    def on_chunk(self, ex, chunk, reply):
        return None


class Both(Start, Chunk):
    async def on_call_end(self, ex):
        return None


def test_each_stage_lists_only_the_middleware_that_override_it_in_order() -> None:
    start, chunk, both, plain = Start(), Chunk(), Both(), Middleware()
    hooks = hooks_for([start, chunk, both, plain])
    assert hooks.on_call_start == (start, both)
    assert hooks.on_chunk == (chunk, both)  # inherited overrides count
    assert hooks.on_call_end == (both,)
    assert hooks.pre_reasoning == hooks.post_reasoning == hooks.post_acting == ()


def test_the_table_is_reused_while_the_list_holds_the_same_middleware() -> None:
    middleware: list[Middleware] = [Start(), Chunk()]
    hooks = hooks_for(middleware)
    assert hooks_for(middleware, hooks) is hooks
    assert hooks_for(list(middleware), hooks) is hooks  # a copy with the same members
    added = Both()
    middleware.append(added)  # edited after the table was built: seen on the next lookup
    again = hooks_for(middleware, hooks)
    assert again is not hooks
    assert again.on_call_end == (added,)
    middleware[0] = Chunk()  # replaced in place, same length
    assert hooks_for(middleware, again).on_call_start == (added,)


class Partials(Middleware):
    chunks_for_deltas_only = True

    def on_chunk(self, ex, chunk, reply):
        return None


def test_chunk_hooks_for_deltas_only_are_left_out_when_nobody_reads_deltas() -> None:
    chunk, partials = Chunk(), Partials()
    hooks = hooks_for([partials, chunk])
    assert hooks.on_chunk == (partials, chunk)
    assert hooks.on_chunk_unread == (chunk,)


class OutputOnly(Start):
    output_calls_only = True


def test_output_only_middleware_are_left_out_of_the_text_call_table() -> None:
    start, output = Start(), OutputOnly()
    hooks = hooks_for([output, start])
    assert hooks.on_call_start == (output, start)
    assert hooks.text is not None and hooks.text.on_call_start == (start,)
    assert hooks_for([start]).text is None  # nothing to leave out: the one table


async def test_a_text_call_skips_output_only_middleware_unless_the_output_tool_is_active(
) -> None:
    from pydantic import BaseModel

    from agentflow import AgentState, ReActAgent
    from agentflow.testing import Call, Reply, ScriptedModel

    class Out(BaseModel):
        n: int

    seen: list[object] = []

    class Spy(Middleware):
        output_calls_only = True

        async def on_call_start(self, ex):
            seen.append(ex.output_type)

    model = ScriptedModel(["text", Reply(tool_calls=[Call("generate_response", {"n": 1})]),
                          "text again"])
    agent = ReActAgent("a", model, middleware=[Spy()])
    state = AgentState()
    await agent.call("hi", state=state)
    assert seen == []  # a text call: the output-only stages were not run
    assert (await agent.call("hi", Out, state=state, strategy="tool")).output == Out(n=1)
    assert seen == [Out] and state.so_tool_active
    reply = await agent.call("hi", state=state)  # the output tool is active: it runs
    assert seen == [Out, None] and reply.text == "text again" and not state.so_tool_active
