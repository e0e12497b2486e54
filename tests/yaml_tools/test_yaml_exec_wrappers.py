"""Values that would reach code through a launcher (env, nice, timeout, xargs, find -exec...).

Every case runs real programs: a template that would run an injected `touch` is first shown
to do so when its argv is run directly, then refused by Jarvis at load time, by
`jarvis tools check` and again before a run; legitimate wrapper tools get every payload as
one unchanged argument and no marker file ever appears.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner
from yaml_tool_helpers import call, error_params

from jarvis.cli.main import app
from jarvis.sdk.parameter import JarvisParameter
from jarvis.sdk.yaml_tools import ArgvTemplate, ExecTool, ToolFileError, load_tool_file
from jarvis.sdk.yaml_tools.landing import Landing
from jarvis.sdk.yaml_tools.template import Placeholder

MARK = "@MARK@"

# Each payload creates MARK when a shell, Python, Perl or awk runs it as code.
PAYLOADS = [
    f"x; touch {MARK}",
    f"x && touch {MARK}",
    f"x; false || touch {MARK}",
    f"x | touch {MARK}",
    f"$(touch {MARK})",
    f"`touch {MARK}`",
    f"x\ntouch {MARK}",
    f"x & touch {MARK}; wait",
    f"'; touch {MARK}; '",
    f'"; touch {MARK}; "',
    f"x > {MARK}",
    f"x >> {MARK}",
    f"${{IFS}}; touch {MARK}",
    f"x;touch${{IFS}}{MARK}",
    f"$(IFS=:;x=touch:{MARK};$x)",
    f"x; sh -c 'touch {MARK}'",
    f"');open('{MARK}','w');print('",
    f"'; system('touch {MARK}'); print '",
    f'"; system("touch {MARK}"); print "',
    f"{{ touch {MARK}; }}",
    f"x\r\ntouch {MARK}",
    f"<(touch {MARK})",
]

ECHO_ARGV = """\
#!{python} -S
import json, sys
print(json.dumps(sys.argv[1:]))
"""
RUN_ARGS = """\
#!{python} -S
import os, sys
os.execvp(sys.argv[1], sys.argv[1:])
"""


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text.format(python=sys.executable), encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    _script(folder, "echo_argv", ECHO_ARGV)
    _script(folder, "run_args", RUN_ARGS)  # a launcher Jarvis knows nothing about
    return folder


def _marker(tmp_path: Path) -> Path:
    return tmp_path / "pwned"


def _payload(template: str, tmp_path: Path) -> str:
    return template.replace(MARK, str(_marker(tmp_path)))


def _tool_yaml(name: str, exec_list: list[str], params: str = "[{name: v}]") -> str:
    return textwrap.dedent(
        f"""\
        tools:
          - name: {name}
            description: A tool under test
            exec: {json.dumps(exec_list)}
            params: {params}
        """
    )


def _need(*programs: str) -> None:
    for program in programs:
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")


# --- templates that would run a value as code, and the payload that proves it -------------
# (name, exec template with {bin} and {lock} filled in per test, payload, programs needed)
DANGEROUS = [
    ("env_sh", ["env", "sh", "-c", "echo {v}"], PAYLOADS[0], ["env", "sh"]),
    ("env_assign_sh", ["env", "A=1", "bash", "-c", "echo {v}"], PAYLOADS[1], ["env", "bash"]),
    ("xargs_sh", ["xargs", "sh", "-c", "echo {v}"], PAYLOADS[4], ["xargs", "sh"]),
    ("timeout_sh", ["timeout", "5", "sh", "-c", "echo {v}"], PAYLOADS[5], ["timeout", "sh"]),
    ("nice_sh", ["nice", "-n", "5", "sh", "-c", "echo {v}"], PAYLOADS[6], ["nice", "sh"]),
    ("find_exec_sh", ["find", "{bin}", "-maxdepth", "0", "-exec", "sh", "-c", "echo {v}", ";"],
     PAYLOADS[0], ["find", "sh"]),
    ("sh_dashdash", ["sh", "-c", "--", "echo {v}"], PAYLOADS[2], ["sh"]),
    ("sh_plus_x", ["sh", "+x", "-c", "echo {v}"], PAYLOADS[3], ["sh"]),
    ("stdbuf_sh", ["stdbuf", "-oL", "sh", "-c", "echo {v}"], PAYLOADS[13], ["stdbuf", "sh"]),
    ("setsid_sh", ["setsid", "sh", "-c", "echo {v}"], PAYLOADS[14], ["setsid", "sh"]),
    ("nohup_sh", ["nohup", "sh", "-c", "echo {v}"], PAYLOADS[7], ["nohup", "sh"]),
    ("flock_c", ["flock", "{lock}", "-c", "echo {v}"], PAYLOADS[10], ["flock", "sh"]),
    ("env_split", ["env", "-S", "sh -c 'echo {v}'"], PAYLOADS[0], ["env", "sh"]),
    ("nested", ["env", "-i", "timeout", "5", "nice", "xargs", "sh", "-c", "echo {v}"],
     PAYLOADS[15], ["env", "timeout", "nice", "xargs", "sh"]),
    ("unknown_launcher", ["{bin}/run_args", "sh", "-c", "echo {v}"], PAYLOADS[12], ["sh"]),
    ("env_python", ["env", "python3", "-c", "print('{v}')"], PAYLOADS[16], ["env", "python3"]),
    ("timeout_perl", ["timeout", "5", "perl", "-e", "print '{v}'"], PAYLOADS[17],
     ["timeout", "perl"]),
    ("nice_awk", ["nice", "awk", 'BEGIN {{ print "{v}" }}'], PAYLOADS[18], ["nice", "awk"]),
    ("timeout_program", ["timeout", "5", "{v}", "@MARK@"], "touch", ["timeout", "touch"]),
    ("find_exec_program", ["find", "{bin}", "-maxdepth", "0", "-exec", "{v}", "@MARK@", ";"],
     "touch", ["find", "touch"]),
    ("env_program", ["env", "{v}", "@MARK@"], "touch", ["env", "touch"]),
    ("perl_magic_open", ["nice", "perl", "-ne", "print", "{v}"], f"touch {MARK}|",
     ["nice", "perl"]),
]
IDS = [case[0] for case in DANGEROUS]


def _fill(exec_list: list[str], bin_dir: Path, tmp_path: Path) -> list[str]:
    lock = tmp_path / "lock"
    return [
        part.replace("{bin}", str(bin_dir)).replace("{lock}", str(lock))
        .replace(MARK, str(_marker(tmp_path)))
        for part in exec_list
    ]


def _direct_argv(exec_list: list[str], value: str) -> list[str]:
    """The argv the template renders to, built by hand and run without Jarvis."""
    return [part.replace("{v}", value).replace("{{", "{").replace("}}", "}") for part in exec_list]


@pytest.mark.parametrize(("name", "exec_list", "payload", "needs"), DANGEROUS, ids=IDS)
def test_the_wrapped_template_really_runs_an_injected_command(
    tmp_path, bin_dir, name, exec_list, payload, needs
):
    """Without the check, each template runs the payload: the refusals below guard real holes."""
    _need(*needs)
    argv = _direct_argv(_fill(exec_list, bin_dir, tmp_path), _payload(payload, tmp_path))
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, cwd=tmp_path,
                   timeout=20, check=False)
    assert _marker(tmp_path).exists(), argv


@pytest.mark.parametrize(("name", "exec_list", "payload", "needs"), DANGEROUS, ids=IDS)
def test_loading_refuses_it_naming_tool_and_placeholder(
    tmp_path, bin_dir, name, exec_list, payload, needs
):
    path = tmp_path / f"{name}.yaml"
    path.write_text(_tool_yaml(name, _fill(exec_list, bin_dir, tmp_path)))
    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    assert info.value.tool == name and info.value.line == 4
    assert "the value of '{v}'" in info.value.message
    result = CliRunner().invoke(app, ["tools", "check", str(path)])
    assert result.exit_code == 1
    assert f"(tool '{name}'): exec: the value of '{{v}}'" in result.output


def _unchecked_tool(
    exec_list: list[str], cwd: Path, env: dict[str, list[str | Placeholder]] | None = None
) -> ExecTool:
    """An ExecTool built in code with no load-time check, so only the run-time check is left."""
    return ExecTool(
        template=ArgvTemplate.parse(exec_list, {}), env=env or {}, cwd=cwd, timeout=20,
        max_output=65536, landing=Landing(), name="unchecked", description="d",
        parameters=[JarvisParameter("v", "str")], overrides={}, source_path=cwd / "t.yaml",
    )


@pytest.mark.parametrize(("name", "exec_list", "payload", "needs"), DANGEROUS, ids=IDS)
def test_running_refuses_it_too(tmp_path, bin_dir, name, exec_list, payload, needs):
    tool = _unchecked_tool(_fill(exec_list, bin_dir, tmp_path), tmp_path)
    for template in {payload, *PAYLOADS}:
        response = call(tool, v=_payload(template, tmp_path))
        assert not response.success
        assert response.error_details.startswith("Tool 'unchecked' refused to run: ")
        assert "'{v}'" in response.error_details
    assert not _marker(tmp_path).exists()


@pytest.mark.parametrize(
    "exec_list",
    [
        ["busybox", "sh", "-c", "echo {v}"],
        ["busybox", "{v}"],
        ["ssh", "-p", "22", "host", "ls {v}"],
        ["watch", "-n", "1", "ls {v}"],
        ["sudo", "-u", "bob", "bash", "-c", "{v}"],
        ["xargs", "-I", "Q", "{v}", "Q"],
        ["chroot", "/srv/root", "{v}"],
        ["env", "-S{v}"],
        ["env", "--split-string={v}"],
        ["python3", "-m", "{v}"],
        ["python3", "{v}"],
        ["perl", "-M{v}", "-e", "1"],
        ["node", "--require", "{v}", "app.js"],
        ["bash", "--rcfile", "{v}", "-c", "true"],
        ["sed", "s/a/{v}/"],
        ["sed", "-n", "-e", "s/x/{v}/p"],
        ["gawk", "-f", "{v}"],
        ["docker", "exec", "box", "sh", "-c", "ls {v}"],
        ["kubectl", "exec", "pod", "--", "python3", "-c", "print({v})"],
        ["nice", "-{v}", "ls"],
        ["env", "--{v}", "ls"],
        ["find", ".", "-execdir", "sh", "-c", "ls {v}", "+"],
        ["perl", "-n", "-e", "print", "--", "{v}"],
        ["git", "-c", "core.pager={v}", "log"],
        ["tar", "--to-command={v}", "-xf", "backup.tar"],
        ["rsync", "-e", "{v}", "src/", "host:dst/"],
        ["zip", "-T", "-TT", "{v}", "out.zip", "file"],
        ["make", "-f", "{v}"],
    ],
)
def test_more_placements_are_refused_at_load_time(tmp_path, exec_list):
    path = tmp_path / "t.yaml"
    path.write_text(_tool_yaml("t", exec_list))
    with pytest.raises(ToolFileError, match=r"the value of '\{v\}'"):
        load_tool_file(path)


# --- legitimate wrapper tools: every payload arrives as one unchanged argument -------------
LEGITIMATE = [
    ("env", ["env", "LC_ALL=C", "{bin}/echo_argv", "--", "{v}"]),
    ("nice", ["nice", "-n", "5", "{bin}/echo_argv", "--", "{v}"]),
    ("timeout", ["timeout", "10", "{bin}/echo_argv", "--", "{v}"]),
    ("xargs", ["xargs", "{bin}/echo_argv", "--", "{v}"]),
    ("stdbuf", ["stdbuf", "-oL", "{bin}/echo_argv", "--", "{v}"]),
    ("setsid", ["setsid", "{bin}/echo_argv", "--", "{v}"]),
    ("nohup", ["nohup", "{bin}/echo_argv", "--", "{v}"]),
    ("find_exec", ["find", "{bin}", "-maxdepth", "0", "-exec", "{bin}/echo_argv", "--", "{v}",
                   ";"]),
    ("sh_positional", ["sh", "-c", 'exec "$1" -- "$2"', "sh", "{bin}/echo_argv", "{v}"]),
    ("flock", ["flock", "{lock}", "{bin}/echo_argv", "--", "{v}"]),
    ("unknown_launcher", ["{bin}/run_args", "{bin}/echo_argv", "--", "{v}"]),
    ("python_argv", ["python3", "-S", "-c", "import sys; print(repr(sys.argv[1:]))", "--",
                     "{v}"]),
]


@pytest.fixture(params=LEGITIMATE, ids=[case[0] for case in LEGITIMATE])
def legitimate(request, tmp_path, bin_dir):
    name, exec_list = request.param
    _need(Path(exec_list[0]).name if "{bin}" not in exec_list[0] else "env")
    path = tmp_path / f"{name}.yaml"
    path.write_text(_tool_yaml(name, _fill(exec_list, bin_dir, tmp_path)))
    [tool] = load_tool_file(path)
    return name, tool


def test_wrapper_tools_load_and_pass_every_payload_as_data(legitimate, tmp_path):
    name, tool = legitimate
    for template in PAYLOADS:
        value = _payload(template, tmp_path)
        response = call(tool, v=value)
        assert response.success, (value, response)
        if name == "python_argv":
            assert response.message == repr(["--", value]).strip()
        else:
            assert json.loads(response.message) == ["--", value]
    assert not _marker(tmp_path).exists()
    assert not list(tmp_path.glob("*pwned*"))


def test_end_of_options_counts_only_for_the_program_that_reads_it(tmp_path, bin_dir):
    # env's "--" ends env's options, not those of the program env runs.
    path = tmp_path / "t.yaml"
    path.write_text(_tool_yaml("t", ["env", "--", f"{bin_dir}/echo_argv", "{v}"]))
    [tool] = load_tool_file(path)
    assert error_params(call(tool, v="--delete")) == ["v"]
    assert json.loads(call(tool, v="keep").message) == ["keep"]


def test_a_value_cannot_end_a_find_exec_command(tmp_path, bin_dir):
    exec_list = ["find", str(bin_dir), "-maxdepth", "0", "-exec", f"{bin_dir}/echo_argv", "--",
                 "{args}", ";"]
    injected = [";", "-exec", "touch", str(_marker(tmp_path))]
    subprocess.run(_direct_argv(exec_list[:7], "") + injected + [";"], cwd=tmp_path,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=20, check=False)
    assert _marker(tmp_path).exists()  # find itself would run the touch
    _marker(tmp_path).unlink()
    path = tmp_path / "t.yaml"
    path.write_text(_tool_yaml("t", exec_list, "[{name: args, type: 'array<string>'}]"))
    [tool] = load_tool_file(path)
    response = call(tool, args=injected)
    assert error_params(response) == ["args"] and "would end the command" in response.message
    assert json.loads(call(tool, args=["a;b", "+x"]).message) == ["--", "a;b", "+x"]
    assert not _marker(tmp_path).exists()


def test_allow_dash_is_refused_where_a_launcher_reads_options(tmp_path, bin_dir):
    path = tmp_path / "t.yaml"
    path.write_text(_tool_yaml("t", ["timeout", "{v}", f"{bin_dir}/echo_argv"],
                               "[{name: v, allow_dash: true}]"))
    with pytest.raises(ToolFileError, match="could be read as an option of timeout"):
        load_tool_file(path)


def test_shapes_too_many_to_check_at_load_time_are_checked_before_the_run(tmp_path, bin_dir):
    # Eleven optional parts: only the fullest and emptiest argv are read at load time; the
    # middle shape "run_args sh -c {v}" is caught when the call is made.
    flags = [{"when": f"f{i}", "args": [f"--f{i}"]} for i in range(9)]
    exec_list = [f"{bin_dir}/run_args", {"when": "shell", "args": ["sh", "-c"]},
                 {"when": "quiet", "args": ["true"]}, "{v}", *flags]
    params = [{"name": "v"}, {"name": "shell", "type": "bool", "default": False},
              {"name": "quiet", "type": "bool", "default": False}]
    params += [{"name": f"f{i}", "type": "bool", "default": False} for i in range(9)]
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(f"""\
        tools:
          - name: t
            description: d
            exec: {json.dumps(exec_list)}
            params: {json.dumps(params)}
        """))
    [tool] = load_tool_file(path)
    value = _payload(PAYLOADS[0], tmp_path)
    response = call(tool, v=value, shell=True)
    assert response.error_details.startswith("Tool 't' refused to run: the value of '{v}' "
                                             "would be run as code by sh")
    assert not _marker(tmp_path).exists()
    ok = call(tool, v="hello", shell=True, quiet=True)  # sh -c true hello: hello is $0
    assert ok.success


def test_a_value_in_a_variable_that_loads_code_is_refused(tmp_path, bin_dir):
    _need("bash")
    hook = tmp_path / "hook.sh"
    hook.write_text(f"touch {_marker(tmp_path)}\n")
    subprocess.run(["env", f"BASH_ENV={hook}", "bash", "-c", "true"], cwd=tmp_path,
                   stdin=subprocess.DEVNULL, timeout=20, check=False)
    assert _marker(tmp_path).exists()  # bash runs the file BASH_ENV names
    _marker(tmp_path).unlink()
    in_argv = tmp_path / "argv.yaml"
    in_argv.write_text(_tool_yaml("t", ["env", "BASH_ENV={v}", "bash", "-c", "true"]))
    with pytest.raises(ToolFileError, match="environment variable BASH_ENV"):
        load_tool_file(in_argv)
    for variable in ("BASH_ENV", "LD_PRELOAD", "PATH", "NODE_OPTIONS", "GIT_SSH_COMMAND"):
        in_env = tmp_path / f"{variable}.yaml"
        in_env.write_text(_tool_yaml("t", ["bash", "-c", "true"]).replace(
            "    params:", f'    env: {{{variable}: "{{v}}"}}\n    params:'))
        with pytest.raises(ToolFileError, match=f"environment variable {variable}") as info:
            load_tool_file(in_env)
        assert info.value.line == 5
    tool = _unchecked_tool(["bash", "-c", "true"], tmp_path, {"BASH_ENV": [Placeholder("v")]})
    response = call(tool, v=str(hook))
    assert "refused to run: the value of '{v}'" in response.error_details
    assert not _marker(tmp_path).exists()
    fine = tmp_path / "fine.yaml"
    fine.write_text(_tool_yaml("t", [f"{bin_dir}/echo_argv"]).replace(
        "    params:", '    env: {GREETING: "{v}"}\n    params:'))
    assert call(load_tool_file(fine)[0], v="hi").success
