"""`jarvis tools list | check | call`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from jarvis.cli.main import app

GOOD = """\
tools:
  - name: shout
    description: Repeat a word loudly
    exec: ["echo", "{word}!", ["x{times}"]]
    params:
      - {name: word, example: hello}
      - {name: times, type: int, required: false}
"""
BROKEN = "tools:\n  - name: broken\n    description: d\n    exec: [echo]\n    colour: red\n"


@pytest.fixture
def env(tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "tools").mkdir(parents=True)
    (data / "tools" / "good.yaml").write_text(GOOD)
    monkeypatch.setenv("JARVIS_DATA_DIR", str(data))
    monkeypatch.delenv("JARVIS_TOOLS", raising=False)
    return data


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_list_shows_tools_and_errors(env, tmp_path, monkeypatch):
    (tmp_path / "broken.yaml").write_text(BROKEN)
    monkeypatch.setenv("JARVIS_TOOLS", str(tmp_path / "broken.yaml"))
    result = run("tools", "list")
    assert result.exit_code == 0
    assert "shout [exec] (word: string, times: int?)" in result.output
    assert "broken.yaml:5 (tool 'broken'): unknown field 'colour'" in result.output


def test_check_prints_schemas_or_fails(env, tmp_path):
    good = run("tools", "check", str(env / "tools" / "good.yaml"))
    assert good.exit_code == 0
    schemas = json.loads(good.output[: good.output.rindex("]") + 1])
    assert schemas[0]["function"]["parameters"]["properties"]["word"] == {
        "type": "string", "description": "Example: hello",
    }
    (tmp_path / "broken.yaml").write_text(BROKEN)
    bad = run("tools", "check", str(tmp_path / "broken.yaml"))
    assert bad.exit_code == 1 and "unknown field 'colour'" in bad.output


def test_call_runs_the_pipeline(env):
    ok = run("tools", "call", "shout", "word=hey", "times=3")
    assert ok.exit_code == 0 and ok.output.strip() == "hey! x3"
    refused = run("tools", "call", "shout", "word=hey", "times=many")
    assert refused.exit_code == 1
    assert "Invalid value for 'times' (type int)" in refused.output
    missing = run("tools", "call", "nope")
    assert missing.exit_code == 2 and "Loaded tools: shout" in missing.output
    bad_pair = run("tools", "call", "shout", "word")
    assert bad_pair.exit_code != 0 and "key=value" in bad_pair.output
