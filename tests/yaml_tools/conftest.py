"""Helpers for the YAML tools tests: tool files, fn modules and an argv-echoing program."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from jarvis.sdk.yaml_tools import YamlTool, load_tool_file

ECHO_ARGV = """\
#!{python}
import json, os, sys
print(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}))
"""


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write dedented text to tmp_path/name and return the path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def fn_module(tmp_path: Path) -> Callable[[str], str]:
    """Write Python source as a uniquely named module next to the tool files; returns its name."""

    def write(source: str) -> str:
        name = f"ytmod_{uuid.uuid4().hex[:12]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return name

    return write


@pytest.fixture
def echo_program(tmp_path: Path) -> Path:
    """An executable that prints its argv (without argv[0]), cwd and environment as JSON."""
    path = tmp_path / "bin" / "echo_argv"
    path.parent.mkdir(exist_ok=True)
    path.write_text(ECHO_ARGV.format(python=sys.executable), encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def load_one(write_file: Callable[[str, str], Path]) -> Callable[[str], YamlTool]:
    """Load a YAML text holding exactly one tool."""

    def load(text: str) -> YamlTool:
        tools = load_tool_file(write_file(f"t_{uuid.uuid4().hex[:8]}.yaml", text))
        assert len(tools) == 1
        return tools[0]

    return load
