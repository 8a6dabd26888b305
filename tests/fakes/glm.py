"""A fake Zhipu GLM API (``POST /api/paas/v4/chat/completions``) on 127.0.0.1.

Speaks shared/providers.md §7 on top of the OpenAI-style fake: tool calls
arrive **whole** in one delta unless ``tool_stream: true``; usage rides on
the finish chunk; ``reasoning_content`` while thinking (GLM-4.5+ by default,
``thinking.type`` overrides); finish reason ``sensitive`` when scripted.
Errors are ``{"error": {"code": "<numeric string>", "message"}}``.

Refuses: any ``tool_choice`` but ``"auto"`` (400 "Tool choice must be auto",
as reported through OpenRouter; the native body's code is unconfirmed, 1214
here), and, with ``strict_params`` (default), the parameters GLM does not
support (``stream_options``, ``strict`` on tools, ``max_completion_tokens``;
whether the real API refuses or ignores them is unconfirmed: 1210 here);
images as a ``data:`` URL (the official SDK sends the bare base64 text), not
JPG/PNG, or over 5 MB, and ``file`` parts (1210 here; wordings unconfirmed).
"""

from __future__ import annotations

from typing import Any

from .base import FakeError
from .openai import OpenAIStyleFake

__all__ = ["GLMFake", "glm_error"]

MUST_BE_AUTO = "Tool choice must be auto"


def glm_error(status: int, code: str, message: str,
              headers: dict[str, str] | None = None) -> FakeError:
    """A scripted error in GLM's envelope."""
    return FakeError(status, {"error": {"code": code, "message": message}}, headers or {})


class GLMFake(OpenAIStyleFake):
    """The fake. ``strict_params``: refuse parameters GLM does not support."""

    routes = ("/api/paas/v4/chat/completions",)
    vendor = "glm"
    usage_on_finish = True
    # vision models: an http(s) URL or the bare base64 text (zai-sdk strips data: prefixes),
    # JPG/PNG under 5 MB; no file parts
    image_url_forms = ("base64", "http")
    image_types = ("image/jpeg", "image/png")
    max_image_bytes = 5 * 1024 * 1024
    file_parts = False
    max_request_bytes = None

    def __init__(self, *, api_key: str | None = None, strict_params: bool = True) -> None:
        super().__init__(api_key=api_key)
        self.strict_params = strict_params

    def base_url(self, root: str) -> str:
        return root + "/api/paas/v4"

    def bad(self, message: str, param: str | None = None, code: str | None = None) -> FakeError:
        return glm_error(400, code or "1214", message)

    def media_error(self, message: str, param: str | None = None,
                    code: str | None = None) -> FakeError:
        return glm_error(400, "1210", f"API 调用参数有误，请检查文档。{message}")

    def unauthorized(self) -> FakeError:
        return glm_error(401, "1000", "身份验证失败。")

    def thinking_on(self, body: dict[str, Any]) -> bool:
        kind = (body.get("thinking") or {}).get("type")
        if kind:
            return bool(kind == "enabled")
        return not str(body.get("model", "")).startswith("glm-4-")

    def validate(self, body: dict[str, Any]) -> FakeError | None:
        if "tool_choice" in body and body["tool_choice"] != "auto":
            return self.bad(MUST_BE_AUTO)
        if self.strict_params:
            unknown = {"stream_options", "max_completion_tokens", "parallel_tool_calls"} & set(body)
            if any("strict" in (t.get("function") or {}) for t in body.get("tools") or ()):
                unknown.add("tools[].function.strict")
            if unknown:
                return self.bad(f"Invalid API parameter, please check the documentation: "
                                f"{sorted(unknown)[0]}", code="1210")
        return self.check_messages(body) or self.check_tools(body)

    def whole_calls(self, body: dict[str, Any]) -> bool:
        return not bool(body.get("tool_stream"))
