"""The extract command's set-up checks (the command itself: tests/test_cli.py)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from agentflow.extraction.setup import (
    SetupError,
    check_api_key,
    check_module_settings,
    check_output_type,
    load_schema,
)


def test_schema_modules_that_fail_to_import_are_set_up_errors(tmp_path: Path) -> None:
    (tmp_path / "syntax.py").write_text("x = (\n")
    (tmp_path / "boom.py").write_text("import nosuchmodule_xyz\n")
    with pytest.raises(SetupError, match=r"SyntaxError: .*line 1"):
        load_schema(f"{tmp_path / 'syntax.py'}:X")
    with pytest.raises(SetupError, match="ModuleNotFoundError: No module named 'nosuchmodule_xyz'"):
        load_schema(f"{tmp_path / 'boom.py'}:X")
    with pytest.raises(SetupError, match="ModuleNotFoundError"):
        load_schema("nosuchmodule_xyz:X")


def test_only_types_are_output_types() -> None:
    check_output_type(list[int], "m:T")  # a generic alias is a type
    with pytest.raises(SetupError, match="'C' is a int value, not a type"):
        check_output_type(42, "m.py:C")
    with pytest.raises(SetupError, match="is a str value"):
        check_output_type("Contact", "m.py:C")


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(SetupError, match="set DEEPSEEK_API_KEY, or pass --api-key"):
        check_api_key("deepseek:deepseek-chat", api_key=None, base_url=None)
    check_api_key("deepseek:deepseek-chat", api_key="sk-x", base_url=None)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env")
    check_api_key("deepseek:deepseek-chat", api_key=None, base_url=None)


def test_json_schema_files(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"type": "object", "properties": {"a": {"type": 3}}}')
    with pytest.raises(SetupError, match="not a valid JSON Schema"):
        load_schema(str(tmp_path / "bad.json"))
    with pytest.raises(SetupError, match="does not exist"):
        load_schema(str(tmp_path / "none.json"))


@pytest.mark.parametrize("name", ["schema.py", "schema.json"])
def test_a_schema_path_that_is_no_file_says_what_it_is(tmp_path: Path, name: str) -> None:
    """A directory named like a schema file is named a directory (a module's was
    said not to exist), a pipe a pipe (a JSON one was "does not exist or is not
    a file")."""
    ref = f"{tmp_path / name}:C" if name.endswith(".py") else str(tmp_path / name)
    with pytest.raises(SetupError, match=re.escape(f"'{tmp_path / name}' does not exist") + "$"):
        load_schema(ref)
    (tmp_path / name).mkdir()
    with pytest.raises(SetupError, match=r"is a directory, not a file$"):
        load_schema(ref)
    (tmp_path / name).rmdir()
    os.mkfifo(tmp_path / name)
    with pytest.raises(SetupError, match=r"is not a regular file \(a pipe"):
        load_schema(ref)


def test_a_schema_file_never_shadows_an_imported_module(tmp_path: Path) -> None:
    import json
    import sys

    (tmp_path / "json.py").write_text("from pydantic import BaseModel\nclass T(BaseModel):\n"
                                      "    a: int\n")
    output_type, module = load_schema(f"{tmp_path / 'json.py'}:T")
    assert sys.modules["json"] is json and output_type.__name__ == "T"
    assert module is not None and module.__name__ == "agentflow_schema_json"


@pytest.mark.parametrize(("setting", "named"), [
    ("INSTRUCTIONS = 5", "INSTRUCTIONS must be a str"),          # was a TypeError traceback
    ("MAX_CHARS = '100'", "MAX_CHARS must be an int >= 1"),      # was a TypeError traceback
    ("MAX_CHARS = 0", "MAX_CHARS must be an int >= 1"),          # was a ValueError traceback
    ("MAX_CHARS = True", "MAX_CHARS must be an int >= 1"),
    ("prepare = 5", "prepare must be a function"),              # was a failed record per input
    ("def prepare(text, page): return text",                     # likewise, each a TypeError
     r"prepare must take the document's text as its one argument \(text -> text\); "
     r"prepare\(text, page\) cannot: missing a required argument: 'page'"),
    ("def prepare(): return ''", r"prepare\(\) cannot: too many positional arguments"),
])
def test_schema_module_settings_of_the_wrong_kind_are_set_up_errors(
        tmp_path: Path, setting: str, named: str) -> None:
    (tmp_path / "m.py").write_text(
        f"from pydantic import BaseModel\nclass C(BaseModel):\n    a: str\n{setting}\n")
    _, module = load_schema(f"{tmp_path / 'm.py'}:C")
    with pytest.raises(SetupError, match=named):
        check_module_settings(module, "m.py:C")


@pytest.mark.parametrize("prepare", ["def prepare(text, page=1): return text",
                                     "def prepare(*parts): return parts[0]",
                                     "prepare = str.strip", "prepare = len"])
def test_a_prepare_that_takes_the_text_passes(tmp_path: Path, prepare: str) -> None:
    (tmp_path / "m.py").write_text(
        f"from pydantic import BaseModel\nclass C(BaseModel):\n    a: str\n{prepare}\n")
    _, module = load_schema(f"{tmp_path / 'm.py'}:C")
    check_module_settings(module, "m.py:C")


def test_right_schema_module_settings_pass() -> None:
    _, module = load_schema("examples/debian_changelog.py:ChangelogEntry")
    check_module_settings(module, "examples/debian_changelog.py:ChangelogEntry")
    check_module_settings(None, "schema.json")


def test_a_schema_file_imports_its_sibling_modules(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # a schema split over files (shared field types beside it) loads as a script run would
    monkeypatch.setattr(sys, "path", list(sys.path))  # restored after the test
    (tmp_path / "af_sibling_fields.py").write_text("from pydantic import BaseModel\n"
                                                   "class Base(BaseModel):\n    name: str\n")
    (tmp_path / "af_sibling_schema.py").write_text("from af_sibling_fields import Base\n"
                                                   "class Entry(Base):\n    version: str\n")
    found, _ = load_schema(f"{tmp_path / 'af_sibling_schema.py'}:Entry")
    assert set(found.model_fields) == {"name", "version"}
