"""exec tools at run time: argv rules for optional values, limits, errors, cwd and env."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from yaml_tool_helpers import call

PY = sys.executable


def argv_of(response) -> list[str]:
    assert response.success, response
    return json.loads(response.message)["argv"]


@pytest.fixture
def search_tool(load_one, echo_program):
    return load_one(
        f"""
        tools:
          - name: search
            description: Search with optional flags
            exec:
              - "{echo_program}"
              - "--query={{query}}"
              - ["--limit", "{{limit}}"]
              - "--since={{since}}"
              - {{when: verbose, args: ["-v", "--debug"]}}
              - "--"
              - "{{files}}"
            params:
              - {{name: query}}
              - {{name: limit, type: int, required: false}}
              - {{name: since, type: date, required: false}}
              - {{name: verbose, type: bool, default: false}}
              - {{name: files, type: "array<str>", required: false}}
        """
    )


def test_omitted_optional_params_drop_their_element_or_group(search_tool):
    assert argv_of(call(search_tool, query="q")) == ["--query=q", "--"]


def test_given_optional_params_fill_their_element_and_group(search_tool):
    argv = argv_of(
        call(search_tool, query="q", limit="3", since="2026-01-18", verbose=True,
             files=["a.txt", "b c.txt"])
    )
    assert argv == [
        "--query=q", "--limit", "3", "--since=2026-01-18", "-v", "--debug", "--",
        "a.txt", "b c.txt",
    ]


def test_false_flag_leaves_its_conditional_out(search_tool):
    assert argv_of(call(search_tool, query="q", verbose="false")) == ["--query=q", "--"]


def test_list_inside_text_is_json_and_values_render_plainly(load_one, echo_program):
    tool = load_one(
        f"""
        tools:
          - name: render
            description: Render values
            exec: ["{echo_program}", "tags={{tags}}", "n={{n}}", "x={{x}}", "b={{b}}", "o={{o}}"]
            params:
              - {{name: tags, type: list}}
              - {{name: n, type: int}}
              - {{name: x, type: float}}
              - {{name: b, type: bool}}
              - {{name: o, type: dict}}
        """
    )
    argv = argv_of(call(tool, tags=["a", "b"], n=3, x=2.5, b=True, o={"k": "v"}))
    assert argv == ['tags=["a", "b"]', "n=3", "x=2.5", "b=true", 'o={"k": "v"}']


def test_default_values_are_used_in_argv(load_one, echo_program):
    tool = load_one(
        f"""
        tools:
          - name: d
            description: Defaults
            exec: ["{echo_program}", "--unit={{unit}}"]
            params:
              - {{name: unit, default: metric, enum: [metric, imperial]}}
        """
    )
    assert argv_of(call(tool)) == ["--unit=metric"]
    assert argv_of(call(tool, unit="imperial")) == ["--unit=imperial"]
    assert call(tool, unit="kelvin").context_data["valid_values"] == {
        "unit": ["metric", "imperial"]
    }


def test_timeout_kills_the_program_and_its_children(load_one, tmp_path):
    pidfile = tmp_path / "child.pid"
    tool = load_one(
        f"""
        tools:
          - name: slow
            description: Start a child and wait forever
            exec: ["sh", "-c", "sleep 30 & echo $! > {pidfile}; wait"]
            timeout: 0.5
        """
    )
    started = time.monotonic()
    response = call(tool)
    assert time.monotonic() - started < 10
    assert not response.success
    assert response.message == "Tool 'slow' failed: timed out after 0.5 s"
    child = int(pidfile.read_text())
    assert _gone(child)


def _gone(pid: int) -> bool:
    """True when the process has exited (a zombie waiting for its reaper counts as exited)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status")
        try:
            lines = status.read_text().splitlines()
            state = next(s for s in lines if s.startswith("State:"))
        except (FileNotFoundError, ProcessLookupError):
            return True
        if "Z" in state.split()[1]:
            return True
        time.sleep(0.05)
    return False


def test_sleep_program_times_out(load_one):
    tool = load_one(
        """
        tools:
          - name: nap
            description: Sleep
            exec: ["sleep", "{seconds}"]
            timeout: 0.3
            params:
              - {name: seconds, type: int}
        """
    )
    assert call(tool, seconds=30).message == "Tool 'nap' failed: timed out after 0.3 s"
    assert call(tool, seconds=0).success


def test_output_overflow_is_an_error(load_one):
    tool = load_one(
        """
        tools:
          - name: loud
            description: Endless output
            exec: ["yes", "jarvis"]
            max_output: 1000
        """
    )
    started = time.monotonic()
    response = call(tool)
    assert time.monotonic() - started < 10
    assert response.message == "Tool 'loud' failed: output exceeded 1000 bytes"


def test_output_at_the_limit_is_fine(load_one, write_file):
    write_file("exact.py", "import sys\nsys.stdout.write('x' * 1000)\n")
    tool = load_one(
        f"""
        tools:
          - name: exact
            description: Exactly the limit
            exec: ["{PY}", "exact.py"]
            max_output: 1000
        """
    )
    assert call(tool).message == "x" * 1000


def test_non_zero_exit_shows_the_end_of_stderr(load_one, write_file):
    write_file(
        "fail.py",
        """
        import sys
        sys.stderr.write("noise " * 2000 + "\\nFINAL: disk not found\\n")
        sys.exit(3)
        """,
    )
    tool = load_one(
        f"""
        tools:
          - name: failing
            description: Fails
            exec: ["{PY}", "fail.py"]
        """
    )
    response = call(tool)
    assert not response.success and not response.is_validation_error
    assert response.message.startswith("Tool 'failing' failed with exit code 3: ...")
    assert response.message.endswith("FINAL: disk not found")
    assert len(response.message) < 1100
    assert response.context_data["exit_code"] == 3


def test_missing_program_is_a_tool_error(load_one):
    tool = load_one(
        """
        tools:
          - name: ghost
            description: Not installed
            exec: ["no-such-program-jarvis-test"]
        """
    )
    response = call(tool)
    assert not response.success
    assert "no-such-program-jarvis-test" in response.message and "not found" in response.message


def test_cwd_defaults_to_the_tool_file_folder_and_can_be_set(load_one, echo_program, tmp_path):
    (tmp_path / "work").mkdir()
    default_cwd = load_one(
        f"""
        tools:
          - name: here
            description: Where am I
            exec: ["{echo_program}"]
        """
    )
    set_cwd = load_one(
        f"""
        tools:
          - name: there
            description: Where am I
            exec: ["{echo_program}"]
            cwd: work
        """
    )
    assert json.loads(call(default_cwd).message)["cwd"] == str(tmp_path.resolve())
    assert json.loads(call(set_cwd).message)["cwd"] == str((tmp_path / "work").resolve())


def test_env_lists_what_the_program_sees(load_one, echo_program, monkeypatch):
    monkeypatch.setenv("JARVIS_TEST_LANG", "de_DE.UTF-8")
    tool = load_one(
        f"""
        tools:
          - name: envy
            description: Environment
            exec: ["{echo_program}"]
            env:
              LANG: "${{JARVIS_TEST_LANG}}"
              PATH: /usr/bin:/bin
              TOKEN: "{{token}}"
            params:
              - {{name: token, required: false}}
        """
    )
    env = json.loads(call(tool).message)["env"]
    assert env["LANG"] == "de_DE.UTF-8" and env["PATH"] == "/usr/bin:/bin"
    assert "TOKEN" not in env  # fed by an omitted optional parameter
    assert json.loads(call(tool, token="abc").message)["env"]["TOKEN"] == "abc"
    assert "HOME" not in env and os.environ.get("HOME")


def test_relative_program_path_is_relative_to_the_tool_file(load_one, write_file):
    script = write_file("bin/hello.sh", "#!/bin/sh\necho hello from script\n")
    script.chmod(0o755)
    tool = load_one(
        """
        tools:
          - name: hello
            description: Say hello
            exec: ["./bin/hello.sh"]
        """
    )
    assert call(tool).message == "hello from script"


def test_empty_output_is_a_plain_success(load_one):
    tool = load_one(
        """
        tools:
          - name: quiet
            description: Nothing to say
            exec: ["true"]
        """
    )
    response = call(tool)
    assert response.success and response.message == "Done (no output)."
