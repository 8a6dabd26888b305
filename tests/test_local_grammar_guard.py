"""A grammar llama.cpp drops mid-reply stops the reply with a typed error
(``_local_log`` keeps llguidance's failures, ``_local_grammar_guard`` stops
the reply). The tests on the embedded model use the real llama.cpp server;
they assert what its log says, not timings.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentflow import GrammarEngineError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ResponseFormat, TextDelta
from agentflow.output.grammar_marks import chunks
from agentflow.providers._local_grammar_guard import guarded
from agentflow.providers._local_log import ChildLog, GrammarFailure
from agentflow.providers.local import LocalModel
from tests.test_grammar_cost import DOCUMENT, complete
from tests.test_grammar_cost import model as model  # the embedded model, started once here

TOO_COMPLEX = [  # llama.cpp's log when llguidance gave up (xllamacpp 2026.10), abridged
    b"Warning: lexer error: too many expressions constructed; stopping\n",
    b"0.04.025.822 E llg error: lexer error: too many expressions constructed\n",
    b"<state>\n",
    "Tokens: \u27e6{\"\u2027name\u2027\":\u2027 \"\u27e7\n".encode(),
    b"4 tokens, 10 bytes; grm_prefix: \"\"\n",
    b"Stop: LexerTooComplex\n",
    b"</state><grammar>\n",
    b"</grammar>\n",
]
NOT_COMPILED = [
    b'0.04.018.870 E llg error: at 2(8): unknown name: "FOO"\n',
    b"   1 | %llguidance {}\n",
    b"   2 | start: FOO\n",
    b"\n",
]


def read_log(lines: list[bytes]) -> ChildLog:
    """A ``ChildLog`` that has read ``lines`` (a pipe written and closed)."""
    read_end, write_end = os.pipe()
    log = ChildLog(os.fdopen(read_end, "rb"))
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(b"".join(lines))
    log.first_error(30.0)  # the pipe has ended: its thread ends
    return log


# ------------------------------------------------------------------ the log

def test_the_log_keeps_each_grammar_failure_with_the_text_it_had() -> None:
    log = read_log([b"0.00.001.000 I listening\n", *TOO_COMPLEX, *NOT_COMPILED])
    assert log.grammar_count == 2
    complex_, compiled = log.grammar_failures(0)
    assert complex_ == GrammarFailure("lexer error: too many expressions constructed",
                                      '{"name": "')
    assert compiled == GrammarFailure('at 2(8): unknown name: "FOO"', None)
    assert log.grammar_failures(1) == [compiled]
    assert complex_.may_be('{"name": "Quill"}') and not complex_.may_be('{"title": "Q')
    assert compiled.may_be("anything")


async def replay(texts: list[str], lines: list[bytes], pipe: Any,
                 log: ChildLog) -> AsyncIterator[ModelChunk]:
    """``texts`` as a reply's chunks; after the first, the server logs ``lines``."""
    for i, text in enumerate(texts):
        yield TextDelta(text)
        if i == 0:
            pipe.write(b"".join(lines))
            pipe.flush()
            for _ in range(600):  # the log is read in a thread: until it has read them
                if log.grammar_count:
                    break
                await asyncio.sleep(0.05)


async def test_the_guard_stops_the_reply_that_failed_and_passes_others_on() -> None:
    for texts, stopped in ((['{"name": "', "Quill", '"}'], True),
                           (['{"title": "', "Quill", '"}'], False)):
        read_end, write_end = os.pipe()
        log = ChildLog(os.fdopen(read_end, "rb"))
        with os.fdopen(write_end, "wb") as pipe:
            passed: list[ModelChunk] = []
            reply = guarded(replay(texts, TOO_COMPLEX, pipe, log), log)
            if stopped:
                with pytest.raises(GrammarEngineError) as caught:
                    async for chunk in reply:
                        passed.append(chunk)
                assert caught.value.reason == "lexer error: too many expressions constructed"
                assert "smaller chunks" in str(caught.value)
                assert passed == [TextDelta('{"name": "')]  # nothing after the failure
                assert not caught.value.shared and not caught.value.retryable  # alone: its own
            else:  # another reply's failure: this one goes on
                passed = [c async for c in reply]
                assert len(passed) == 3 and log.grammar_count == 1


async def test_a_failure_met_beside_another_grammar_reply_is_retried_as_a_cut_stream(
) -> None:
    """Two replies with a grammar decode at once and both wrote the text the
    failure shows: the log cannot say whose it was, so each is stopped with a
    ``shared`` error the loop retries (``retryable`` and ``partial``)."""
    read_end, write_end = os.pipe()
    log = ChildLog(os.fdopen(read_end, "rb"))

    async def held() -> AsyncIterator[ModelChunk]:  # the other reply: waits for the log
        yield TextDelta('{"name": "')
        for _ in range(600):
            if log.grammar_count:
                break
            await asyncio.sleep(0.05)
        yield TextDelta("Vim")

    with os.fdopen(write_end, "wb") as pipe:
        other = guarded(held(), log)
        assert await other.__anext__() == TextDelta('{"name": "')  # it is decoding now
        errors = []
        for reply in (guarded(replay(['{"name": "', "Quill"], TOO_COMPLEX, pipe, log), log),
                      other):
            with pytest.raises(GrammarEngineError) as caught:
                async for _ in reply:
                    pass
            errors.append(caught.value)
    assert all(e.shared and e.retryable and e.partial for e in errors)
    assert log.grammar_replies == 0
    # the failure may be the other request's: neither its message nor its text is quoted
    assert all("too many expressions" not in str(e) and "Quill" not in str(e)
               and "too many expressions" not in e.reason for e in errors)


# ------------------------------------------------------------------ the real llama.cpp

async def test_the_old_triple_intersection_is_what_llguidance_gave_up_on(
        model: LocalModel) -> None:
    """The construction before this fix (``SOURCE & TRIMMED & CLEAN_EDGES``)
    over the whole document: llguidance gives up at the opening quote, llama.cpp
    logs it and answers 200; the log keeps the failure with that text."""
    model._ensure_server()
    log = model._server.log
    before = log.grammar_count
    old = "\n".join([
        "%llguidance {}", 'start: "{" "\\"name\\"" ": " (GROUNDED_CLEAN | "null") "}"',
        'GROUNDED_CLEAN: "\\"" (SOURCE & TRIMMED & CLEAN_EDGES) "\\""',
        "TRIMMED: /[^ ]|[^ ].*[^ ]/",  # and CLEAN_EDGES as it was spelled then:
        "CLEAN_EDGES: /[^ :;,=)\\]}]|[^ :;,=)\\]}].*[^ :;,=(\\[{]/",
        "SOURCE: %regex " + json.dumps({"substring_chunks": chunks(DOCUMENT)},
                                       ensure_ascii=False)]) + "\n"
    await asyncio.to_thread(complete, model, old, 8)
    for _ in range(600):  # the log is read in a thread: wait until it has this line
        if log.grammar_count > before:
            break
        await asyncio.sleep(0.05)
    failure = log.grammar_failures(before)[0]
    assert "too many expressions" in failure.reason and failure.text == '{"name": "'


async def test_a_grammar_llama_cpp_drops_stops_the_reply_with_a_typed_error(
        model: LocalModel) -> None:
    """A response format whose grammar llguidance cannot compile (a lookahead
    in a pattern): llama.cpp answers 200 and decodes unconstrained; the
    reply is stopped with GrammarEngineError naming the engine's message,
    not left to run to max_tokens."""
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(?=a)a$"}},
              "required": ["a"], "additionalProperties": False}
    options = GenerateOptions(response_format=ResponseFormat("json_schema", schema),
                              max_tokens=200)
    with pytest.raises(GrammarEngineError) as caught:
        [c async for c in model.stream([Msg.user("Write a long story about a lighthouse.")],
                                       (), options)]
    assert "before the reply began" in str(caught.value) and caught.value.reason
