"""``TokenLogprobs``: a reply's tokens as an immutable sequence, compared and
hashed as the tuple of its tokens, and the OpenAI wire's lazy kind of it
(``agentflow.providers._openai_logprobs.WireTokens``): tokens made only when
read, ``written`` and ``field_probabilities`` the same as from the tokens."""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import pytest

from agentflow.logprobs import TokenLogprob, TokenLogprobs
from agentflow.messages import TOKEN_LOGPROBS, Msg, msg_from_dict, msg_to_dict
from agentflow.model import TextDelta
from agentflow.output.token_confidence import field_probabilities
from agentflow.providers._openai_logprobs import WireTokens, token_logprobs
from agentflow.reply import ReplyBuilder

_A = TokenLogprob("a", -0.5, b"a")
_B = TokenLogprob("\u00e9", -1.0, b"\xc3\xa9")


def _entry(token: str, logprob: Any, data: Any = None) -> dict[str, Any]:
    raw = list(token.encode()) if data is None else data
    return {"token": token, "logprob": logprob, "bytes": raw,
            "top_logprobs": [{"token": token, "logprob": logprob, "bytes": raw}]}


def _wire(*entries: dict[str, Any]) -> Any:
    return token_logprobs({"content": list(entries)})


def test_a_sequence_of_tokens_is_its_tuple() -> None:
    tokens = TokenLogprobs([_A, _B])
    both = (_A, _B)
    assert tokens == both and both.__eq__(tokens) is NotImplemented  # (reflected: equal)
    assert both in {tokens} and hash(tokens) == hash(both)
    assert len(tokens) == 2 and tokens[1] is _B and list(tokens) == [_A, _B]
    assert tokens[:1] == (_A,) and isinstance(tokens[:1], TokenLogprobs)
    assert tokens != [_A, _B] and not TokenLogprobs() and TokenLogprobs() == ()
    assert _B in tokens and tokens.index(_B) == 1
    assert repr(tokens) == f"TokenLogprobs([{_A!r}, {_B!r}])"
    assert pickle.loads(pickle.dumps(tokens)) == tokens == copy.deepcopy(tokens)


def test_what_tokens_wrote_is_their_bytes_else_their_text() -> None:
    tokens = TokenLogprobs([_A, TokenLogprob("\u00e9!", -2.0), _B])
    assert tokens.written() == (b"a\xc3\xa9!\xc3\xa9", [1, 4, 6], [-0.5, -2.0, -1.0])


def test_wire_tokens_are_made_when_read_and_equal_the_tokens() -> None:
    tokens = _wire(_entry("a", -0.5), _entry("\u00e9", -1.0))
    assert isinstance(tokens, WireTokens) and tokens._tokens is None  # nothing made yet
    assert len(tokens) == 2 and tokens  # known from the columns
    assert tokens.written() == (b"a\xc3\xa9", [1, 3], (-0.5, -1.0))
    assert tokens._tokens is None
    assert tokens == (_A, _B) and tokens[0] is tokens[0]  # made once, then kept
    assert pickle.loads(pickle.dumps(tokens)) == (_A, _B)
    assert type(pickle.loads(pickle.dumps(tokens))) is TokenLogprobs


@pytest.mark.parametrize("raw", [[300], [-1], ["a"], [1.5]])
def test_a_token_whose_bytes_are_not_byte_values_is_read_by_its_text(raw: list[Any]) -> None:
    tokens = _wire(_entry("x", -0.1), _entry("y", -0.2, raw))
    assert list(tokens) == [TokenLogprob("x", -0.1, b"x"), TokenLogprob("y", -0.2, None)]
    assert tokens.written() == (b"xy", [1, 2], [-0.1, -0.2])


def test_streamed_wire_tokens_join_unread_and_as_the_tokens_of_each() -> None:
    one, two = _wire(_entry("a", -0.5)), _wire(_entry("\u00e9", -1.0))
    joined = TokenLogprobs.joined([one, two])
    assert isinstance(joined, WireTokens) and joined._tokens is None and joined == (_A, _B)
    assert TokenLogprobs.joined([one]) is one
    mixed = TokenLogprobs.joined([one, (_B,)])
    assert type(mixed) is TokenLogprobs and mixed == (_A, _B)
    builder = ReplyBuilder()
    for text, tokens in (("a", one), ("\u00e9", two)):
        builder.add(TextDelta(text, logprobs=tokens))
    assert builder.build().metadata[TOKEN_LOGPROBS] == (_A, _B)


def test_a_stored_reply_keeps_wire_tokens_as_tokens() -> None:
    msg = Msg("assistant", "a\u00e9", metadata={
        TOKEN_LOGPROBS: _wire(_entry("a", -0.5), _entry("\u00e9", -1.0))})
    again = msg_from_dict(msg_to_dict(msg))
    assert again.metadata[TOKEN_LOGPROBS] == (_A, _B) == msg.metadata[TOKEN_LOGPROBS]


_REPLY = '{"name": "Ad\u00e9le", "n": 12, "tags": ["x", "yz"], "none": null}'


@pytest.mark.parametrize("bad", [None, 10])
def test_field_probabilities_are_the_same_from_wire_tokens_and_from_tokens(
        bad: int | None) -> None:
    words = [_REPLY[i:i + 3] for i in range(0, len(_REPLY), 3)]
    entries = [_entry(w, -0.1 * (i % 7), [999] if i == bad else None)
               for i, w in enumerate(words)]
    entries[3]["bytes"], entries[4]["bytes"] = list(b'"Ad\xc3'), list(b"\xa9le")  # split: \u00e9
    wire = _wire(*entries)
    plain = [TokenLogprob(e["token"], e["logprob"], bytes(e["bytes"]) if i != bad else None)
             for i, e in enumerate(entries)]
    assert list(wire) == plain
    probs = field_probabilities(wire)
    assert probs == field_probabilities(plain) == field_probabilities(tuple(plain))
    assert set(probs) == {"name", "n", "tags", "none"} and all(0 < p <= 1 for p in probs.values())
    assert probs["n"] == pytest.approx(math.exp(-0.1))  # ``: 1`` (0.0) and ``2, `` (-0.1): ``12``
