"""``agentflow.providers.registry``: model strings, lazy vendor modules, the
profile table."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from agentflow.agent import ReActAgent
from agentflow.errors import InvalidModelError
from agentflow.model import ModelProfile, resolve_model
from agentflow.providers import registry
from agentflow.providers.dashscope import DashScopeChatModel
from agentflow.providers.deepseek import DeepSeekChatModel
from agentflow.providers.glm import GLMChatModel
from agentflow.providers.minimax import MiniMaxChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.providers.registry import get_model, list_profiles, register_vendor
from agentflow.testing import ScriptedModel

from .provider_scenarios import FAST


@pytest.mark.parametrize(("spec", "cls", "name"), [
    ("openai:gpt-4o-mini", OpenAIChatModel, "gpt-4o-mini"),
    ("deepseek:deepseek-chat", DeepSeekChatModel, "deepseek-chat"),
    ("dashscope:qwen-plus", DashScopeChatModel, "qwen-plus"),
    ("qwen:qwen3-max", DashScopeChatModel, "qwen3-max"),
    ("glm:glm-4.6", GLMChatModel, "glm-4.6"),
    ("ZhiPu:glm-4.6", GLMChatModel, "glm-4.6"),
    ("minimax:MiniMax-M2.7", MiniMaxChatModel, "MiniMax-M2.7"),
])
def test_get_model(spec: str, cls: type, name: str) -> None:
    model = get_model(spec, api_key="k")
    assert type(model) is cls and model.model_name == name


def test_kwargs_and_profile_override_pass_through() -> None:
    custom = ModelProfile(supports_tools=False)
    model = get_model("openai:my-llama", base_url="http://127.0.0.1:9/v1", profile=custom,
                      stream=False, settings=FAST)
    assert isinstance(model, OpenAIChatModel)
    assert model.profile is custom and "127.0.0.1:9" in repr(model)


def test_profiles_follow_model_name_patterns() -> None:
    assert get_model("deepseek:deepseek-reasoner", api_key="k").profile.thinking_default
    assert not get_model("deepseek:deepseek-chat", api_key="k").profile.thinking_default
    assert get_model("openai:gpt-4o", api_key="k").profile.native_output == "json_schema"
    assert get_model("openai:gpt-3.5-turbo", api_key="k").profile.native_output is None
    assert get_model("openai:o3-mini", api_key="k").profile.supports_thinking


@pytest.mark.parametrize("spec", ["gpt-4o", "", "openai:", "openai:  ", "openai", 42])
def test_malformed_specs(spec: Any) -> None:
    with pytest.raises(InvalidModelError):
        get_model(spec)


def test_unknown_vendor_names_the_known_ones() -> None:
    with pytest.raises(InvalidModelError) as info:
        get_model("acme:model-1")
    for vendor in ("openai", "deepseek", "dashscope", "glm", "minimax"):
        assert vendor in str(info.value)


def test_missing_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.VENDORS, "ghost", "agentflow.providers.no_such_module:create")
    with pytest.raises(InvalidModelError) as info:
        get_model("ghost:x")
    assert "agentflow.providers.no_such_module" in str(info.value)
    assert all(row[0] != "ghost" for row in list_profiles())


def test_register_a_callable_factory_and_colons_in_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "VENDORS", dict(registry.VENDORS))
    monkeypatch.setattr(registry, "_FACTORIES", {})
    register_vendor("mine", lambda name, **kw: ScriptedModel(name=name))
    model = get_model("mine:qwen3:8b")
    assert model.model_name == "qwen3:8b"
    monkeypatch.setattr(sys.modules[__name__], "DEFAULT_MODEL", "tiny", raising=False)
    register_vendor("bare", f"{__name__}:_bare_factory")
    assert get_model("bare").model_name == "tiny"
    with pytest.raises(ValueError):
        register_vendor("bad:name", "m:f")
    with pytest.raises(ValueError):
        register_vendor("ok", "no_colon")


def _bare_factory(name: str, **kwargs: Any) -> ScriptedModel:
    return ScriptedModel(name=name)


def test_list_profiles_rows() -> None:
    rows = list_profiles()
    vendors = {vendor for vendor, _, _ in rows}
    assert {"openai", "deepseek", "dashscope", "glm", "minimax"} <= vendors
    assert all(isinstance(p, ModelProfile) and isinstance(pattern, str)
               for _, pattern, p in rows)
    glm = [(pattern, p) for vendor, pattern, p in rows if vendor == "glm"]
    assert glm[-1][0] == "*" and all(p.tool_choice_modes == {"auto", "none", "specific"}
                                     for _, p in glm)  # none and specific emulated (C21)


def test_core_resolves_strings_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    assert isinstance(resolve_model("deepseek:deepseek-chat"), DeepSeekChatModel)
    agent = ReActAgent("a", model="glm:glm-4.6")
    assert isinstance(agent.model, GLMChatModel)
    with pytest.raises(InvalidModelError):
        ReActAgent("a", model="nope:x")


def test_api_key_variables_match_the_adapters_and_missing_keys_are_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from agentflow.providers.registry import api_key_variables, missing_api_key

    for vendor in ("openai", "deepseek", "dashscope", "glm", "minimax"):
        module = importlib.import_module(f"agentflow.providers.{vendor}")
        model = module.create("m")
        assert api_key_variables(vendor) == (model.env_var, *model.env_aliases)
    assert api_key_variables("local") == ()
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert "set ANTHROPIC_API_KEY" in (missing_api_key("anthropic:claude-x") or "")
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in (missing_api_key("gemini:gemini-2.5-flash") or "")
    assert missing_api_key("anthropic:claude-x", api_key="sk") is None
    assert missing_api_key("anthropic:claude-x", base_url="http://127.0.0.1:1") is None
    assert missing_api_key("ollama:qwen3:8b") is None  # a local server needs no key
    assert missing_api_key("local") is None
    monkeypatch.setenv("GOOGLE_API_KEY", "g")
    assert missing_api_key("gemini:gemini-2.5-flash") is None
