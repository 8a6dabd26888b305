"""A fake MiniMax API (OpenAI-compatible ``POST /v1/chat/completions``, and
the native ``/v1/text/chatcompletion_v2`` route) on 127.0.0.1.

Speaks shared/providers.md §8 on top of the OpenAI-style fake:

* reasoning inline in ``content`` as ``<think>\\n...\\n</think>\\n\\n`` (the
  tags fall wherever the chunking cuts them);
* stream deltas with ``"role": "assistant"`` on the first, zero ``usage``
  placeholders on intermediate chunks, and a last ``chat.completion.chunk``
  with the finish reason and the real usage, then ``[DONE]`` (``send_done=False``
  drops it, as the native endpoint may). ``final_message=True`` gives the
  tail third parties report instead (shared/providers.md §8): ``"role": ""``
  on later deltas and a **final ``chat.completion`` frame** repeating the
  whole message with the usage, which the openai SDK's stream helper drops
  (its usage reads 0/0 there); the adapter reads both;
* tool calls whole in one delta (``fragment_tool_args=True`` streams pieces;
  which one MiniMax does is unconfirmed);
* ``tool_choice`` is ignored (recorded, never refused);
* errors are **HTTP 200** with ``base_resp.status_code != 0``: a wrong key
  (1004), ``temperature`` outside (0, 1] or ``n`` != 1 (2013, invented
  wording); ``add_base_error`` scripts any other.
"""

from __future__ import annotations

from typing import Any

from .base import FakeError, FakeReply, pieces
from .openai import OpenAIStyleFake

__all__ = ["MiniMaxFake", "base_error"]

_OK = {"status_code": 0, "status_msg": ""}


def base_error(code: int, message: str) -> FakeError:
    """MiniMax's error shape: HTTP 200 and a non-zero ``base_resp``."""
    return FakeError(200, {"id": "", "choices": None, "base_resp": {"status_code": code,
                                                                   "status_msg": message}})


class MiniMaxFake(OpenAIStyleFake):
    """The fake (see the module docstring for the options)."""

    routes = ("/v1/chat/completions", "/v1/text/chatcompletion_v2")
    vendor = "minimax"
    file_parts = False  # text models: no documented image or file parts

    def __init__(self, *, api_key: str | None = None, send_done: bool = True,
                 fragment_tool_args: bool = False, final_message: bool = False) -> None:
        super().__init__(api_key=api_key)
        self.send_done = send_done
        self.fragment_tool_args = fragment_tool_args
        self.final_message = final_message
        """The third-party-reported stream tail (``delta.role: ""`` and a final
        ``chat.completion`` frame repeating the message with the usage); off,
        the tail is what the openai SDK's stream helper reads: a
        ``chat.completion.chunk`` with the finish reason and the usage."""

    def base_url(self, root: str) -> str:
        return root + "/v1"

    def add_base_error(self, code: int, message: str) -> None:
        """Queue a 200 + ``base_resp`` error."""
        self.add(base_error(code, message))

    def bad(self, message: str, param: str | None = None, code: str | None = None) -> FakeError:
        return base_error(2013, f"invalid params, {message}")

    def key_error(self, key: str) -> FakeError:
        return base_error(1004, f"login fail: Please carry the API secret key in the "
                          f"'Authorization' field of the request header ({key}, {key[:12]})")

    def unauthorized(self) -> FakeError:
        return base_error(1004, "login fail: Please carry the API secret key in the "
                                "'Authorization' field of the request header")

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        temperature = body.get("temperature")
        if temperature is not None and not 0 < temperature <= 1:
            return self.bad(f"temperature must be in (0, 1], got {temperature}")
        if body.get("n", 1) != 1:
            return self.bad("n must be 1")
        return self.check_messages(body) or self.check_tools(body)

    def whole_calls(self, body: dict[str, Any]) -> bool:
        return not self.fragment_tool_args

    @staticmethod
    def content_of(reply: FakeReply) -> str:
        if not reply.thinking:
            return reply.text
        return f"<think>\n{reply.thinking}\n</think>\n\n{reply.text}"

    def message_json(self, reply: FakeReply, body: Any) -> dict[str, Any]:
        message = super().message_json(reply, body)
        message.pop("refusal", None)
        message.pop(self.reasoning_field, None)
        message.update(name="MiniMax AI", content=self.content_of(reply))
        return message

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        data = super().render_json(reply, body)
        data["usage"]["total_characters"] = 0
        data.update(input_sensitive=False, output_sensitive=False, base_resp=_OK)
        return data

    def delta_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        zero = {"total_tokens": 0, "prompt_tokens": 0, "completion_tokens": 0}
        frames = []
        for i, piece in enumerate(pieces(self.content_of(reply), reply.chunk_size)):
            role = {"role": "assistant"} if i == 0 else {"role": ""} if self.final_message else {}
            frames.append(self.chunk(body, {**role, "content": piece}, usage=zero))
        calls = super().delta_frames(FakeReply(tool_calls=reply.tool_calls,
                                               chunk_size=reply.chunk_size, extra=reply.extra),
                                     body)[1:]
        for frame in calls:
            frame["usage"] = zero
        return frames + calls

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        zero = {"total_tokens": 0, "prompt_tokens": 0, "completion_tokens": 0}
        finish = None if reply.extra.get("no_finish") else self.finish_of(reply)
        if not self.final_message:
            usage = self.render_json(reply, body)["usage"]
            return [self.chunk(body, {}, finish, usage=usage)]
        final = self.render_json(reply, body)
        final["choices"][0].pop("logprobs", None)
        if finish is None:
            final["choices"][0]["finish_reason"] = None
        return [self.chunk(body, {"role": ""}, finish, usage=zero), final]

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        frames = super().render_events(reply, body)
        if not self.send_done and frames and frames[-1].startswith(b"data: [DONE]"):
            frames = frames[:-1]
        return frames
