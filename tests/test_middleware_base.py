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
