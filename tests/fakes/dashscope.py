"""A fake DashScope compatible-mode API
(``POST /compatible-mode/v1/chat/completions``) on 127.0.0.1.

Speaks shared/providers.md §5 (compatible mode) on top of the OpenAI-style
fake: ``reasoning_content`` deltas while thinking, a ``choices: []`` usage
chunk with ``include_usage``, errors with ``id`` and ``request_id`` and code
``invalid_parameter_error``.

Thinking: ``enable_thinking`` when sent, else the model's default (open-source
``qwen3-*`` and ``qwq*`` think, commercial hybrids do not). Refuses: a forced
``tool_choice`` (``required`` or an object) in thinking mode (the vendor's
exact 400), ``required`` at all unless ``accept_required`` (older docs list
only auto/none/object; unconfirmed), ``response_format`` in thinking mode,
JSON mode without "json", ``json_schema`` on models not in
``json_schema_models``, a non-streaming call to a thinking open-source
Qwen3, and images off the Qwen-VL image limits or ``file`` parts.
``ignore_response_format=True`` reproduces case C04: the request is
accepted and the scripted (prose) reply comes back regardless.
Invented wordings (unconfirmed) are marked below.
"""

from __future__ import annotations

from typing import Any

from .base import FakeError
from .openai import OpenAIStyleFake

__all__ = ["DashScopeFake"]

FORCED_IN_THINKING = ("<400> InternalError.Algo.InvalidParameter: The tool_choice parameter "
                      "does not support being set to required or object in thinking mode")
JSON_WORD = ("<400> InternalError.Algo.InvalidParameter: 'messages' must contain the word "
             "'json' in some form, to use 'response_format' of type 'json_object'.")
NON_STREAMING_THINKING = ("<400> InternalError.Algo.InvalidParameter: parameter.enable_thinking "
                          "must be set to false for non-streaming calls")
# invented wordings (the real ones are unconfirmed):
REQUIRED_REFUSED = ("<400> InternalError.Algo.InvalidParameter: tool_choice 'required' is not "
                    "supported")
FORMAT_IN_THINKING = ("<400> InternalError.Algo.InvalidParameter: response_format is not "
                      "supported in thinking mode")
NO_JSON_SCHEMA = ("<400> InternalError.Algo.InvalidParameter: response_format type json_schema "
                  "is not supported by this model")


class DashScopeFake(OpenAIStyleFake):
    """The fake (see the module docstring for the options)."""

    routes = ("/compatible-mode/v1/chat/completions",)
    vendor = "dashscope"
    # Qwen-VL "Image limits": BMP, JPEG, PNG, TIFF, WEBP, HEIC, 10 MB an image; no file parts
    image_types = ("image/bmp", "image/jpeg", "image/png", "image/tiff", "image/webp",
                   "image/heic")
    max_image_bytes = 10 * 1024 * 1024
    file_parts = False
    max_request_bytes = None

    def __init__(self, *, api_key: str | None = None, accept_required: bool = False,
                 json_schema_models: frozenset[str] = frozenset({"qwen-plus"}),
                 ignore_response_format: bool = False) -> None:
        super().__init__(api_key=api_key)
        self.accept_required = accept_required
        self.json_schema_models = json_schema_models
        self.ignore_response_format = ignore_response_format

    def base_url(self, root: str) -> str:
        return root + "/compatible-mode/v1"

    def bad(self, message: str, param: str | None = None, code: str | None = None) -> FakeError:
        body = {"error": {"message": message, "type": "invalid_request_error", "param": None,
                          "code": "invalid_parameter_error"},
                "id": "chatcmpl-fake", "request_id": "req-fake"}
        return FakeError(400, body)

    def unauthorized(self) -> FakeError:
        body = {"error": {"message": "Incorrect API key provided. ", "type":
                          "invalid_request_error", "param": None, "code": "invalid_api_key"},
                "request_id": "req-fake"}
        return FakeError(401, body)

    @staticmethod
    def open_source_qwen3(model: str) -> bool:
        return model.startswith("qwen3-") and not model.startswith(("qwen3-max", "qwen3-coder"))

    def thinking_on(self, body: dict[str, Any]) -> bool:
        if "enable_thinking" in body:
            return bool(body["enable_thinking"])
        model = str(body.get("model", ""))
        return self.open_source_qwen3(model) or model.startswith("qwq")

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        thinking = self.thinking_on(body)
        if thinking and not body.get("stream") and self.open_source_qwen3(str(body.get("model"))):
            return self.bad(NON_STREAMING_THINKING)
        choice = body.get("tool_choice")
        if body.get("tools") and (choice == "required" or isinstance(choice, dict)) and thinking:
            return self.bad(FORCED_IN_THINKING)
        if choice == "required" and not self.accept_required:
            return self.bad(REQUIRED_REFUSED)
        rf = body.get("response_format") or {}
        if rf and not self.ignore_response_format:
            if thinking:
                return self.bad(FORMAT_IN_THINKING)
            if rf.get("type") == "json_schema" and body.get("model") not in self.json_schema_models:
                return self.bad(NO_JSON_SCHEMA)
            if rf.get("type") == "json_object" and not self.mentions_json(body):
                return self.bad(JSON_WORD)
        return self.check_messages(body) or self.check_tools(body) or self.check_tool_choice(
            body)

    @staticmethod
    def mentions_json(body: dict[str, Any]) -> bool:
        return any("json" in str(m.get("content") or "").lower() for m in body["messages"])
