"""A command's `required_packages` installed on its first use, and `commands install --list`.

pip really runs, in a subprocess, offline: it finds a wheel built here (`PIP_NO_INDEX`,
`PIP_FIND_LINKS`) and installs into a private folder on `sys.path` (`PIP_TARGET`). `ask`
and `chat` run their own center in-process with the scripted LLM from `JARVIS_LLM_SCRIPT`
(the test is about the protocol: the script says which tool "the model" calls).
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from node_helpers import build_wheel
from typer.testing import CliRunner

from jarvis.cli.main import app

runner = CliRunner()

PLUGIN = '''
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisPackage, JarvisSecret

class TinyValue(IJarvisCommand):
    command_name = "tiny_value"
    description = "Reads the tiny value."

    @property
    def required_packages(self):
        return [JarvisPackage("{requirement_name}", "{version}")]

    @property
    def all_possible_secrets(self):
        return [JarvisSecret("TINY_URL", "Where the tiny value lives", scope="node",
                             required=False)]

    def run(self, request_info, **kwargs):
        import {module}  # imported on use: the package arrives on first use
        return CommandResponse.success_response(message=f"The tiny value is {{{module}.VALUE}}.")
'''


class Setup:
    """A plugin command needing a package only the local wheel folder has."""

    def __init__(self, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.data_dir = data_dir
        self.module = f"jarvis_tiny_{uuid.uuid4().hex[:8]}"  # fresh: nothing cached in-process
        self.requirement_name = self.module.replace("_", "-")
        self.target = tmp_path / "site"
        self.target.mkdir()
        build_wheel(tmp_path / "wheels", name=self.module)
        for name, value in {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "wheels"),
                            "PIP_TARGET": str(self.target),
                            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.syspath_prepend(str(self.target))
        self.monkeypatch = monkeypatch

    def plugin(self, version: str = ">=0.1", requirement_name: str | None = None) -> None:
        (self.data_dir / "commands").mkdir(exist_ok=True)
        (self.data_dir / "commands" / "tiny.py").write_text(PLUGIN.format(
            requirement_name=requirement_name or self.requirement_name, version=version,
            module=self.module))

    def script(self, replies: list) -> None:
        path = self.data_dir / "script.json"
        path.write_text(json.dumps(replies))
        self.monkeypatch.setenv("JARVIS_LLM_BACKEND", "scripted")
        self.monkeypatch.setenv("JARVIS_LLM_SCRIPT", str(path))


@pytest.fixture
def setup(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Setup]:
    s = Setup(data_dir, tmp_path, monkeypatch)
    yield s
    sys.modules.pop(s.module, None)


def _tiny_call() -> dict:
    return {"tool_calls": [{"name": "tiny_value", "arguments": {}}]}


def _listing(*names: str) -> str:
    result = runner.invoke(app, ["commands", "install", "--list", *names])
    assert result.exit_code == 0, result.output
    return result.output


def test_list_shows_what_each_command_lacks_and_changes_nothing(setup: Setup) -> None:
    setup.plugin()
    output = _listing()
    line = next(line for line in output.splitlines() if line.startswith("tiny_value"))
    assert "packages missing" in line and "tiny.py" in line
    assert f"package {setup.requirement_name}>=0.1: missing (installed on first use)" in output
    assert "secret TINY_URL (node): not set" in output
    assert next(line for line in output.splitlines() if line.startswith("calculate ")) \
        .split()[1] == "ready"
    assert "command(s)," in output.splitlines()[-1]
    assert not (setup.data_dir / "node.db").exists()

    setup.monkeypatch.setenv("JARVIS_AUTO_INSTALL", "0")
    output = _listing("tiny_value")
    assert output.splitlines()[0].startswith("tiny_value")
    assert "missing (jarvis commands install tiny_value)" in output
    assert output.splitlines()[-1] == "1 command(s), 0 ready"

    result = runner.invoke(app, ["commands", "install", "--list", "nope"])
    assert result.exit_code == 1 and "unknown command(s): nope" in result.output


def test_first_use_installs_the_package_once_then_runs(setup: Setup) -> None:
    setup.plugin()
    setup.script([_tiny_call(), _tiny_call()])
    result = runner.invoke(app, ["chat"], input="what is the tiny value\nthe tiny value again\n")

    assert result.exit_code == 0, result.output
    spoken = [line for line in result.output.splitlines() if line.startswith("jarvis>")]
    assert spoken == ["jarvis> The tiny value is 42.", "jarvis> The tiny value is 42."]
    progress = [line for line in result.output.splitlines() if line.startswith("Installing")]
    assert progress == [f"Installing {setup.requirement_name}>=0.1 for tiny_value (first use)..."]
    assert (setup.target / setup.module / "__init__.py").exists()
    assert (setup.data_dir / "custom-requirements.txt").read_text() == (
        f"{setup.requirement_name}>=0.1\n")
    assert f"package {setup.requirement_name}>=0.1: installed" in _listing("tiny_value")


@pytest.mark.parametrize(("plugin", "said"), [
    (lambda s: s.plugin(version="==9.9"), "No matching distribution"),
    (lambda s: s.plugin(requirement_name="jarvis-nowhere-to-be-found"), "jarvis-nowhere"),
])
def test_a_failed_install_is_a_clear_spoken_error(
    setup: Setup, plugin: Callable[[Setup], None], said: str
) -> None:
    plugin(setup)
    setup.script([_tiny_call()])
    result = runner.invoke(app, ["ask", "what is the tiny value"])

    answer = result.output.strip().splitlines()[-1]
    assert answer.startswith("I couldn't install ") and said in answer
    assert "which the tiny_value command needs: ERROR: " in answer
    assert "Traceback" not in result.output
    assert not (setup.data_dir / "custom-requirements.txt").exists()


def test_a_setting_can_forbid_installing_on_first_use(setup: Setup) -> None:
    setup.plugin()
    setup.script([_tiny_call()])
    setup.monkeypatch.setenv("JARVIS_AUTO_INSTALL", "0")
    result = runner.invoke(app, ["ask", "what is the tiny value"])

    assert result.output.strip() == (
        f"The tiny_value command needs {setup.requirement_name}>=0.1, which is not installed, "
        "and installing on first use is turned off; install it with: "
        "jarvis commands install tiny_value")
    assert list(setup.target.iterdir()) == []  # pip never ran
