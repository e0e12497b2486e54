"""Shell-injection corpus: each value reaches the program as one unchanged argv element."""

from __future__ import annotations

import json

import pytest
from yaml_tool_helpers import call, error_params

MARK = "MARKERFILE"

# `MARK` is replaced by an absolute path in the test folder; no payload may create it.
PAYLOADS = [
    f"; touch {MARK}",
    "; rm -rf /tmp/x",
    f"$(touch {MARK})",
    f"`touch {MARK}`",
    f"&& touch {MARK}",
    f"|| touch {MARK}",
    f"| touch {MARK}",
    f"& touch {MARK} &",
    f"x\ntouch {MARK}",
    f"x\r\ntouch {MARK}",
    f"'; touch {MARK}; '",
    f'"; touch {MARK}; "',
    f"> {MARK}",
    f">> {MARK}",
    "< /etc/passwd",
    "2>&1",
    f"$(<{MARK})",
    f"<(touch {MARK})",
    f">(touch {MARK})",
    f"IFS=,;touch${{IFS}}{MARK}",
    f"x=1 touch {MARK}",
    "$((1+1))",
    "!!",
    "*",
    "/*",
    "?",
    "[abc]",
    "{a,b}",
    "~",
    "~root",
    "$HOME",
    "${HOME}",
    "$PATH",
    "%PATH%",
    "${MY_TOOL_SECRET}",
    "$${HOME}",
    "{value}",
    "{{value}}",
    "\\",
    "\\n",
    "a b c",
    "  leading and trailing  ",
    "\t",
    "",
    "unicode ✓ ünïcödé",
    "emoji 😀",
    "$'\\x41'",
    "#comment",
    "\x1b[31mred",
    "' OR '1'='1",
    "../../etc/passwd",
    "@file",
    "%s%s%n",
    "a;b|c&d",
    "\"quoted\" 'single'",
    "line1\nline2\nline3",
]

# Values an option parser could read as options: refused where they would start an element.
DASHED = [
    "--option",
    "-rf",
    "--output=/tmp/x",
    "-",
    "--",
    "-n 5",
    "--exec=touch MARKERFILE",
    "-1",
]


@pytest.fixture
def tools(load_one, echo_program, tmp_path):
    everywhere = load_one(
        f"""
        tools:
          - name: echo_everywhere
            description: Echo a value in several argv positions and in the environment
            exec: ["{echo_program}", "{{value}}", "--name={{value}}", "--", "{{value}}"]
            env:
              VALUE: "{{value}}"
            params:
              - name: value
        """
    )
    after_marker = load_one(
        f"""
        tools:
          - name: echo_after_marker
            description: Echo a value after the end of options
            exec: ["{echo_program}", "--", "{{value}}"]
            params:
              - name: value
        """
    )
    return everywhere, after_marker


def _run(tool, value: str, name: str = "value") -> dict:
    response = call(tool, **{name: value})
    assert response.success, (value, response)
    return json.loads(response.message)


def test_corpus_is_large_enough():
    assert len(PAYLOADS) + len(DASHED) >= 50


@pytest.mark.parametrize("template", PAYLOADS)
def test_payload_arrives_as_one_unchanged_element(tools, tmp_path, template):
    everywhere, _ = tools
    marker = tmp_path / "pwned"
    value = template.replace(MARK, str(marker))
    out = _run(everywhere, value)
    assert out["argv"] == [value, f"--name={value}", "--", value]
    assert out["env"]["VALUE"] == value
    assert not marker.exists()
    assert not list(tmp_path.glob("*MARKER*"))


@pytest.mark.parametrize("value", DASHED)
def test_option_smuggling_is_refused_before_the_end_of_options(tools, tmp_path, value):
    everywhere, after_marker = tools
    response = call(everywhere, value=value)
    assert error_params(response) == ["value"]
    assert "must not start with '-'" in response.message
    # After a literal "--" the same value is plain data.
    out = _run(after_marker, value)
    assert out["argv"] == ["--", value]
    assert not list(tmp_path.glob("*MARKER*"))


def test_allow_dash_lets_a_param_start_with_a_dash(load_one, echo_program):
    tool = load_one(
        f"""
        tools:
          - name: offset
            description: Echo a number that may be negative
            exec: ["{echo_program}", "{{n}}"]
            params:
              - name: n
                type: int
                allow_dash: true
        """
    )
    assert _run(tool, "-5", "n")["argv"] == ["-5"]


def test_negative_number_in_a_positional_element_is_refused_by_default(load_one, echo_program):
    tool = load_one(
        f"""
        tools:
          - name: lines
            description: Echo a count
            exec: ["{echo_program}", "{{n}}"]
            params:
              - {{name: n, type: int}}
        """
    )
    assert error_params(call(tool, n=-5)) == ["n"]
    assert _run(tool, "5", "n")["argv"] == ["5"]


@pytest.mark.parametrize("value", ["a\x00b", "\x00", "x\x00; touch y"])
def test_nul_bytes_are_refused(tools, value):
    for tool in tools:
        response = call(tool, value=value)
        assert error_params(response) == ["value"]
        assert "NUL" in response.message


def test_placeholder_after_a_leading_placeholder_is_checked_too(load_one, echo_program):
    # "{a}{b}" with an empty a would let b start the element.
    tool = load_one(
        f"""
        tools:
          - name: pair
            description: Echo two joined values
            exec: ["{echo_program}", "{{a}}{{b}}"]
            params:
              - name: a
              - name: b
        """
    )
    assert error_params(call(tool, a="", b="-rf")) == ["b"]
    # Refused whatever a holds: the rule is decided by the template, not by the other value.
    assert error_params(call(tool, a="x", b="-rf")) == ["b"]
    response = call(tool, a="x", b="y-z")
    assert json.loads(response.message)["argv"] == ["xy-z"]


def test_env_of_the_program_is_explicit(tools, monkeypatch):
    monkeypatch.setenv("MY_TOOL_SECRET", "do-not-leak")
    everywhere, _ = tools
    env = _run(everywhere, "x")["env"]
    assert "MY_TOOL_SECRET" not in env and "HOME" not in env
    assert env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    # Python may add LC_CTYPE itself when it starts under the C locale.
    assert set(env) - {"LC_CTYPE"} == {"PATH", "VALUE"}
