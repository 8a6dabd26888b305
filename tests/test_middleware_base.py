"""``hooks_for``: which middleware run at each stage of the loop."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.middleware.base import Middleware, hooks_for
from agentflow.model import ModelProfile, ToolSpec
from agentflow.testing import Call, Reply, ScriptedModel


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


class TextOnly(Start):
    text_calls_only = True


def test_text_only_middleware_are_left_out_of_the_output_call_table() -> None:
    start, text = Start(), TextOnly()
    hooks = hooks_for([text, start])
    assert hooks.on_call_start == (text, start)
    assert hooks.output is not None and hooks.output.on_call_start == (start,)
    assert hooks_for([start]).output is None  # nothing to leave out: the one table


async def test_an_output_call_skips_text_only_middleware() -> None:
    from pydantic import BaseModel

    from agentflow import ReActAgent
    from agentflow.testing import ScriptedModel

    class Out(BaseModel):
        n: int

    seen: list[object] = []

    class Spy(Middleware):
        text_calls_only = True

        async def pre_reasoning(self, ex, request):
            seen.append(ex.output_type)

    agent = ReActAgent("a", ScriptedModel(["text", '{"n": 1}']), middleware=[Spy()])
    await agent.call("hi")
    assert seen == [None]  # a text call: its stages run
    assert (await agent.call("hi", Out, strategy="native")).output == Out(n=1)
    assert seen == [None]  # an output call: they were not run


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


class Declares(Middleware):
    """Declares a tool only while ``on`` is set (asked at each call)."""

    on = False

    def declared_tools(self):
        return [ToolSpec("ask", "ask the user", {"type": "object"})] if self.on else []


def test_only_middleware_that_declare_tools_are_asked_for_them() -> None:
    declares = Declares()
    hooks = hooks_for([Start(), declares, Middleware()])
    assert hooks.declaring == (declares,)
    assert hooks_for([Start()]).declaring == ()


class Output(BaseModel):
    name: str


async def test_a_declared_tool_is_seen_at_the_call_it_is_declared_for() -> None:
    declares = Declares()
    model = ScriptedModel(['{"name": "Ann"}', Reply(tool_calls=[
        Call("generate_response", {"name": "Ann"})])],
        profile=ModelProfile(native_output="json_schema", schema_dialect="openai_strict",
                             native_output_with_tools=False))
    agent = ReActAgent("a", model, middleware=[declares])
    await agent.call("Ann", Output)
    first = agent.structured_output._setup
    assert first is not None and not first.has_tools and first.kind == "native"
    declares.on = True  # the same middleware list, another answer: the next call asks again
    assert (await agent.call("Ann", Output)).output == Output(name="Ann")
    second = agent.structured_output._setup
    assert second is not None and second.has_tools and second.kind == "tool"
    assert "generate_response" in model.requests[-1].tool_names
