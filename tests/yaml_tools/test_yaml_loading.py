"""Loading tool files: ${ENV} substitution, broken files with line numbers, folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from yaml_tool_helpers import call

from jarvis.sdk.yaml_tools import (
    ToolFileError,
    load_tool_file,
    load_tool_paths,
    tool_paths_from_env,
)

GOOD = """\
tools:
  - name: greet
    description: Say hello to ${GREET_WHO}
    exec: ["echo", "hello", "{name}"]
    params:
      - name: name
        example: "${GREET_WHO}"
"""


def test_env_substitution_at_load_time(write_file):
    tools = load_tool_file(write_file("g.yaml", GOOD), environ={"GREET_WHO": "the world"})
    schema = tools[0].to_openai_tool_schema()["function"]
    assert schema["description"] == "Say hello to the world"
    assert schema["parameters"]["properties"]["name"]["description"] == "Example: the world"


def test_unset_variable_names_file_tool_variable_and_line(write_file):
    path = write_file("g.yaml", GOOD)
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path, environ={})
    error = info.value
    assert error.file == path and error.tool == "greet" and error.line == 3
    assert "GREET_WHO" in error.message and "not set" in error.message
    assert str(error).startswith(f"{path}:3 (tool 'greet'): ")


def test_dollar_dollar_escapes_a_literal(write_file, echo_program):
    path = write_file(
        "e.yaml",
        f"""\
        tools:
          - name: lit
            description: Costs $5, shows $${{HOME}} and ${{WHO}}
            exec: ["{echo_program}", "$${{HOME}}", "${{WHO}}", "$HOME"]
        """,
    )
    tool = load_tool_file(path, environ={"WHO": "me"})[0]
    assert tool.description == "Costs $5, shows ${HOME} and me"
    assert json.loads(call(tool).message)["argv"] == ["${HOME}", "me", "$HOME"]


def test_env_values_are_not_read_as_placeholders(write_file, echo_program):
    # A variable holding braces stays literal text inside an exec template.
    path = write_file(
        "b.yaml",
        f"""\
        tools:
          - name: braces
            description: Braces from the environment
            exec: ["{echo_program}", "${{FMT}}"]
        """,
    )
    tool = load_tool_file(path, environ={"FMT": "{x} {{y}}"})[0]
    assert json.loads(call(tool).message)["argv"] == ["{x} {{y}}"]


BROKEN = {
    "bad_yaml.yaml": ("tools:\n  - name: a\n    exec: [echo\n  - name: b\n", 4, "invalid YAML"),
    "unknown_field.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo]\n    colour: red\n",
        5,
        "unknown field 'colour'",
    ),
    "unknown_param_field.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo, '{x}']\n"
        "    params:\n      - name: x\n        kind: str\n",
        7,
        "unknown field 'kind'",
    ),
    "bad_type.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo, '{x}']\n"
        "    params:\n      - name: x\n        type: integerz\n",
        7,
        "Unknown parameter type 'integerz'",
    ),
    "missing_env.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo, '{k}']\n"
        "    params:\n      - name: k\n        override: ${JARVIS_TEST_UNSET_VAR}\n",
        7,
        "JARVIS_TEST_UNSET_VAR",
    ),
    "unknown_module.yaml": (
        "tools:\n  - name: a\n    fn: no_such_module_jarvis:search\n",
        3,
        "cannot import module 'no_such_module_jarvis'",
    ),
    "fn_and_exec.yaml": (
        "tools:\n  - name: a\n    description: d\n    fn: os:getcwd\n    exec: [pwd]\n",
        2,
        "exactly one of 'fn'",
    ),
    "top_level.yaml": ("tool:\n  - name: a\n", 1, "unknown top-level field 'tool'"),
    "duplicate_key.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo]\n    exec: [true]\n",
        5,
        "written twice",
    ),
    "stray_brace.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [jq, '{a: 1}']\n",
        4,
        "stray '{'",
    ),
    "placeholder_program.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: ['{prog}']\n"
        "    params:\n      - name: prog\n",
        4,
        "the program, must be fixed text",
    ),
    "undeclared_placeholder.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo, '{who}']\n",
        4,
        "no parameter 'who' is declared",
    ),
    "unused_param.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo]\n"
        "    params:\n      - name: who\n",
        6,
        "parameter 'who' is not used",
    ),
    "exec_string.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: 'rm -rf {x}'\n",
        4,
        "a single string is not split",
    ),
    "required_default.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo, '{x}']\n"
        "    params:\n      - name: x\n        required: true\n        default: y\n",
        8,
        "default would never be used",
    ),
    "override_extra.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo, '{x}']\n"
        "    params:\n      - name: x\n        override: v\n        example: w\n",
        8,
        "override parameter 'x' takes only",
    ),
    "bad_timeout.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo]\n    timeout: -1\n",
        5,
        "'timeout' must be a positive number",
    ),
    "default_type.yaml": (
        "tools:\n  - name: a\n    description: d\n    exec: [echo, '{n}']\n"
        "    params:\n      - name: n\n        type: int\n        default: many\n",
        6,
        "does not fit",
    ),
    "allow_dash_fn.yaml": (
        "tools:\n  - name: a\n    fn: os.path:join\n    params:\n      - name: a\n"
        "        allow_dash: true\n",
        6,
        "unknown field 'allow_dash'",
    ),
    "bad_name.yaml": (
        "tools:\n  - name: 'rm -rf'\n    description: d\n    exec: [echo]\n",
        2,
        "'name' is required",
    ),
}


@pytest.mark.parametrize("file_name", sorted(BROKEN))
def test_broken_file_is_reported_with_its_line(tmp_path, file_name):
    text, line, fragment = BROKEN[file_name]
    path = tmp_path / file_name
    path.write_text(text)
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path, environ={})
    assert info.value.file == path
    assert fragment in info.value.message, info.value
    assert info.value.line == line, info.value


def test_other_files_still_load(tmp_path):
    folder = tmp_path / "tools"
    folder.mkdir()
    for name, (text, _, _) in BROKEN.items():
        (folder / name).write_text(text)
    (folder / "good.yml").write_text(GOOD)
    (folder / "notes.txt").write_text("not a tool file")
    commands, errors = load_tool_paths([folder], environ={"GREET_WHO": "you"})
    assert [c.command_name for c in commands] == ["greet"]
    assert sorted(e.file.name for e in errors) == sorted(BROKEN)


def test_a_broken_tool_keeps_its_whole_file_out(tmp_path):
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "tools:\n"
        "  - {name: fine, description: d, exec: [echo]}\n"
        "  - {name: broken, description: d, exec: [echo], colour: red}\n"
        "  - {name: also_broken, exec: [echo]}\n"
    )
    commands, errors = load_tool_paths([path])
    assert commands == []
    assert [(e.tool, e.line) for e in errors] == [("broken", 3), ("also_broken", 4)]


def test_duplicate_names_across_files(tmp_path):
    (tmp_path / "a.yaml").write_text("tools:\n  - {name: t, description: first, exec: [echo]}\n")
    (tmp_path / "b.yaml").write_text("tools:\n  - {name: t, description: second, exec: [echo]}\n")
    commands, errors = load_tool_paths([tmp_path])
    assert [c.description for c in commands] == ["first"]
    assert len(errors) == 1 and errors[0].file.name == "b.yaml"
    assert "already defined" in errors[0].message


def test_missing_path_is_an_error(tmp_path):
    commands, errors = load_tool_paths([tmp_path / "nope.yaml"])
    assert commands == [] and "no such file" in errors[0].message


def test_tool_paths_from_env(tmp_path):
    assert tool_paths_from_env(tmp_path, environ={}) == []
    (tmp_path / "tools").mkdir()
    extra = [tmp_path / "x.yaml", tmp_path / "more"]
    environ = {"JARVIS_TOOLS": os.pathsep.join(str(p) for p in extra)}
    assert tool_paths_from_env(tmp_path, environ=environ) == [tmp_path / "tools", *extra]


def test_fn_module_next_to_the_tool_file(tmp_path):
    folder = tmp_path / "mytools"
    folder.mkdir()
    (folder / "jarvis_test_sibling_mod.py").write_text(
        'def hello(who: str) -> str:\n    """Greet."""\n    return f"hi {who}"\n'
    )
    (folder / "t.yaml").write_text(
        "tools:\n  - name: hello\n    fn: jarvis_test_sibling_mod:hello\n"
    )
    tool = load_tool_file(folder / "t.yaml")[0]
    assert call(tool, who="Ada").message == "hi Ada"


def test_examples_reach_the_command_schema(tmp_path):
    path = Path(tmp_path / "ex.yaml")
    path.write_text(
        "tools:\n"
        "  - name: du\n"
        "    description: Disk usage\n"
        "    exec: [du, -sh, '{path}']\n"
        "    params: [{name: path}]\n"
        "    examples:\n"
        "      - voice_command: how big is my music folder\n"
        "        parameters: {path: /home/me/Music}\n"
        "        primary: true\n"
    )
    schema = load_tool_file(path)[0].get_command_schema()
    assert schema["examples"] == [
        {
            "voice_command": "how big is my music folder",
            "expected_parameters": {"path": "/home/me/Music"},
            "is_primary": True,
        }
    ]


def test_enum_synonyms_reach_the_command_schema(tmp_path):
    path = Path(tmp_path / "player.yaml")
    path.write_text(
        "tools:\n"
        "  - name: player\n"
        "    description: Control the player\n"
        "    exec: [playerctl, '{action}']\n"
        "    params:\n"
        "      - name: action\n"
        "        enum: [next, play-pause]\n"
        "        synonyms: {next: [skip, next song], play-pause: [pause, resume]}\n"
    )
    [param] = load_tool_file(path)[0].get_command_schema()["parameters"]
    assert param["enum_synonyms"] == {"next": ["skip", "next song"],
                                      "play-pause": ["pause", "resume"]}
    path.write_text(path.read_text().replace("play-pause: [pause", "stop: [pause"))
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    assert "'stop' is not one of its enum_values: next, play-pause" in info.value.message
    assert info.value.line == 6


def _lamp_file(tmp_path, *fields: str) -> Path:
    """A YAML tool with one int parameter `level`, declared with `fields` (lines 8 on)."""
    path = Path(tmp_path / "lamp.yaml")
    path.write_text(
        "tools:\n"
        "  - name: lamp\n"
        "    description: Set the lamp's brightness\n"
        "    exec: [lampctl, '{level}']\n"
        "    params:\n"
        "      - name: level\n"
        "        type: int\n" + "".join(f"        {f}\n" for f in fields)
    )
    return path


def test_refinable_reaches_both_schemas_and_must_be_a_flag(tmp_path):
    path = _lamp_file(tmp_path, "refinable: true")
    [tool] = load_tool_file(path)
    assert tool.get_command_schema()["parameters"][0]["refinable"] is True
    level = tool.to_openai_tool_schema()["function"]["parameters"]["properties"]["level"]
    assert level["_refinable"] is True
    path.write_text(path.read_text().replace("refinable: true", "refinable: often"))
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    assert "'refinable' must be true or false" in info.value.message
    assert info.value.line == 8


def test_minimum_and_maximum_bound_a_number_and_are_refused_elsewhere(tmp_path):
    path = _lamp_file(tmp_path, "minimum: 0", "maximum: 100", "refinable: true")
    [tool] = load_tool_file(path)
    assert tool.get_command_schema()["parameters"][0]["maximum"] == 100
    level = tool.to_openai_tool_schema()["function"]["parameters"]["properties"]["level"]
    assert (level["minimum"], level["maximum"]) == (0, 100)
    [problem] = [r for r in tool.validate_call(level=150) if not r.success]
    assert problem.message == "Invalid value for 'level': 150 is above the maximum of 100"
    path.write_text(path.read_text().replace("type: int", "type: str"))
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    assert "need a number type" in info.value.message
    assert info.value.line == 6


@pytest.mark.parametrize(
    "exec_list",
    [
        ["sh", "-c", "du -sh {path}"],
        ["/bin/bash", "-ec", "ls {path}"],
        ["bash", "-x", "-c", "echo {path}"],
        ["python3.11", "-c", "print('{path}')"],
        ["perl", "-e", "print '{path}'"],
        ["node", "--eval", "{path}"],
        ["awk", "/{path}/"],
    ],
)
def test_values_inside_code_for_an_interpreter_are_refused(tmp_path, exec_list):
    path = tmp_path / "code.yaml"
    path.write_text(
        "tools:\n  - name: t\n    description: d\n"
        f"    exec: {json.dumps(exec_list)}\n    params: [{{name: path}}]\n"
    )
    with pytest.raises(ToolFileError, match="would be run as code") as info:
        load_tool_file(path)
    assert info.value.line == 4


@pytest.mark.parametrize(
    "exec_list",
    [
        ["sh", "-c", 'du -sh -- "$1"', "sh", "{path}"],
        ["python3", "script.py", "-c", "{path}"],
        ["grep", "-c", "{path}"],
        ["awk", "{{print $1}}", "{path}"],
    ],
)
def test_values_passed_as_arguments_to_an_interpreter_are_fine(tmp_path, exec_list):
    path = tmp_path / "args.yaml"
    path.write_text(
        "tools:\n  - name: t\n    description: d\n"
        f"    exec: {json.dumps(exec_list)}\n    params: [{{name: path}}]\n"
    )
    assert load_tool_file(path)[0].command_name == "t"


def test_shell_gets_the_value_as_a_positional_argument(tmp_path):
    path = tmp_path / "sh.yaml"
    marker = tmp_path / "pwned"
    path.write_text(
        "tools:\n  - name: count_chars\n    description: d\n"
        "    exec: [sh, -c, 'printf %s \"$1\" | wc -c', sh, '{text}']\n"
        "    params: [{name: text}]\n"
    )
    tool = load_tool_file(path)[0]
    value = f"$(touch {marker}); `touch {marker}`"
    assert call(tool, text=value).message == str(len(value.encode()))
    assert not marker.exists()


def test_yaml_anchors_and_merge_keys(tmp_path):
    path = tmp_path / "anchors.yaml"
    path.write_text(
        "x-common: &common\n  timeout: 5\n  description: shared\n"
        "tools:\n"
        "  - <<: *common\n    name: a\n    exec: [echo, a]\n"
        "  - <<: *common\n    name: b\n    description: own\n    exec: [echo, b]\n"
    )
    with pytest.raises(ToolFileError, match="unknown top-level field 'x-common'"):
        load_tool_file(path)
    path.write_text(
        "tools:\n"
        "  - &first {name: a, description: shared, timeout: 5, exec: [echo, a]}\n"
        "  - <<: *first\n    name: b\n    description: own\n"
    )
    first, second = load_tool_file(path)
    assert first.command_name == "a"
    assert (second.command_name, second.description, second.timeout) == ("b", "own", 5)
    assert call(second).message == "a"
