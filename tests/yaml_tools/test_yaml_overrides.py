"""Override parameters: injected at call time, invisible to the LLM, the caller and the logs."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from typer.testing import CliRunner
from yaml_tool_helpers import call, error_params

from jarvis.cli.main import app
from jarvis.sdk.yaml_tools import ToolFileError, load_tool_file

SECRET = "s3cr3t-Override-Value-42"


@pytest.fixture
def secret_env(monkeypatch, caplog):
    # Logs are captured at DEBUG from before the tool file is loaded until the test ends.
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("JARVIS_TEST_API_KEY", SECRET)


@pytest.fixture
def fn_tool(secret_env, load_one, fn_module, tmp_path):
    mod = fn_module(
        '''
        import json
        CALLS = []

        def lookup(query: str, api_key: str, tenant: str) -> dict:
            """Look something up in the private index."""
            CALLS.append((query, api_key, tenant))
            if query == "explode":
                raise RuntimeError(f"bad key {api_key} for {query}")
            if query == "echo":
                return {"message": f"used {api_key}", "detail": {"key": api_key}}
            return f"found {query} for {tenant}"
        '''
    )
    tool = load_one(
        f"""
        tools:
          - name: lookup
            fn: {mod}:lookup
            params:
              - name: query
                description: What to look up
                example: opening hours
              - name: api_key
                override: "${{JARVIS_TEST_API_KEY}}"
              - name: tenant
                override: acme-corp
        """
    )
    return tool, sys.modules[mod].CALLS


@pytest.fixture
def exec_tool(secret_env, load_one, echo_program, write_file):
    write_file(
        "leaky.py",
        "import os, sys\nprint('token is ' + sys.argv[1])\n"
        "sys.stderr.write('failed with ' + os.environ['API_KEY'])\nsys.exit(int(sys.argv[2]))\n",
    )
    return load_one(
        f"""
        tools:
          - name: leaky
            description: A program that prints what it was given
            exec: ["{sys.executable}", "leaky.py", "{{key}}", "{{code}}"]
            env:
              API_KEY: "{{key}}"
            params:
              - {{name: code, type: int, description: exit code}}
              - name: key
                override: "${{JARVIS_TEST_API_KEY}}"
        """
    )


def test_override_is_injected_but_hidden_everywhere(fn_tool, caplog):
    tool, calls = fn_tool
    seen: list[str] = []

    schema = tool.to_openai_tool_schema()
    assert list(schema["function"]["parameters"]["properties"]) == ["query"]
    seen.append(json.dumps(schema))
    prompt = tool.get_command_schema()
    assert [p["name"] for p in prompt["parameters"]] == ["query"]
    seen.append(json.dumps(prompt))
    seen.append(repr(tool))
    assert tool.override_names == ["api_key", "tenant"]

    ok = call(tool, query="hours")
    # Every override value is masked in what comes back, even one that is not a secret.
    assert ok.message == "found hours for [hidden]"
    assert calls[-1] == ("hours", SECRET, "acme-corp")
    seen.append(ok.model_dump_json())

    # A caller cannot set an override: it is an unknown parameter, and nothing runs.
    before = len(calls)
    refused = call(tool, query="hours", api_key="attacker-key")
    assert error_params(refused) == ["api_key"]
    assert "Known parameters: query" in refused.message
    assert len(calls) == before
    seen.append(refused.model_dump_json())

    for bad in (call(tool), call(tool, query=["not", "text"]), call(tool, query="x", x=1)):
        assert bad.is_validation_error
        seen.append(bad.model_dump_json())

    failed = call(tool, query="explode")
    assert failed.message == "Tool 'lookup' failed: RuntimeError: bad key [hidden] for explode"
    echoed = call(tool, query="echo")
    assert echoed.message == "used [hidden]"
    assert echoed.context_data["detail"] == {"key": "[hidden]"}
    seen += [failed.model_dump_json(), echoed.model_dump_json()]

    seen += [r.getMessage() for r in caplog.records]
    seen.append(caplog.text)
    for text in seen:
        assert SECRET not in text


def test_exec_override_is_masked_in_stdout_and_stderr(exec_tool, caplog):
    ok = call(exec_tool, code=0)
    assert ok.message == "token is [hidden]"
    failed = call(exec_tool, code="4")
    assert failed.message == "Tool 'leaky' failed with exit code 4: failed with [hidden]"
    refused = call(exec_tool, code=0, key="mine")
    assert error_params(refused) == ["key"]
    for text in (ok.model_dump_json(), failed.model_dump_json(), refused.model_dump_json(),
                 json.dumps(exec_tool.get_command_schema()), caplog.text):
        assert SECRET not in text


def test_typed_override_is_converted_at_load(load_one, fn_module, monkeypatch):
    monkeypatch.setenv("JARVIS_TEST_PORT", "8443")
    mod = fn_module(
        'def f(port: int, host: str) -> str:\n    """P."""\n    return f"{host}:{port + 1}"\n'
    )
    tool = load_one(
        f"""
        tools:
          - name: p
            fn: {mod}:f
            params:
              - {{name: port, type: int, override: "${{JARVIS_TEST_PORT}}"}}
        """
    )
    assert call(tool, host="h").message == "h:8444"


def test_bad_override_value_is_not_shown_in_the_load_error(write_file, monkeypatch):
    monkeypatch.setenv("JARVIS_TEST_API_KEY", SECRET)
    path = write_file(
        "t.yaml",
        """
        tools:
          - name: t
            description: d
            exec: [echo, "{n}"]
            params:
              - {name: n, type: int, override: "${JARVIS_TEST_API_KEY}"}
        """,
    )
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    assert "does not fit its type int" in str(info.value)
    assert SECRET not in str(info.value)


def test_cli_never_prints_the_override(fn_tool, tmp_path, monkeypatch):
    tool, _ = fn_tool
    monkeypatch.setenv("JARVIS_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    outputs = []
    for args in (
        ["tools", "list", "-p", str(tool.source_path)],
        ["tools", "check", str(tool.source_path)],
        ["tools", "call", "lookup", "query=echo", "-p", str(tool.source_path), "--json"],
        ["tools", "call", "lookup", "query=x", "api_key=mine", "-p", str(tool.source_path)],
    ):
        result = runner.invoke(app, args)
        outputs.append(result.output)
    assert "lookup" in outputs[0] and '"query"' in outputs[1]
    assert "[hidden]" in outputs[2]
    assert "Unknown parameter 'api_key'" in outputs[3]
    for output in outputs:
        assert SECRET not in output


def test_typed_overrides_render_in_argv_and_only_text_is_masked(load_one, echo_program):
    tool = load_one(
        f"""
        tools:
          - name: typed
            description: Typed overrides
            exec: ["{echo_program}", "--since={{since}}", "--dry={{dry}}", "--n={{n}}",
                   "--token={{token}}", "{{word}}"]
            params:
              - {{name: word}}
              - {{name: since, type: date, override: "2026-01-18"}}
              - {{name: token, override: "tok-secret"}}
              - {{name: dry, type: bool, override: true}}
              - {{name: n, type: int, override: 1234}}
        """
    )
    response = call(tool, word="true 1234")
    argv = json.loads(response.message)["argv"]
    # Only str overrides are masked; a bool or a number would blot out ordinary output.
    assert argv == [
        "--since=2026-01-18", "--dry=true", "--n=1234", "--token=[hidden]", "true 1234",
    ]
