"""`jarvis commands install / list / init-data` and the pip step, with local packages only."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import ClassVar

import pytest
from node_helpers import build_wheel
from typer.testing import CliRunner

from jarvis.cli.main import app
from jarvis.node.installer import install_commands, record_requirements
from jarvis.node.registry import CommandRegistry
from jarvis.node.store import NodeStore
from jarvis.sdk import (
    CommandResponse,
    IJarvisCommand,
    JarvisPackage,
    RequestInformation,
)

runner = CliRunner()

PLUGIN = '''
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisSecret, JarvisPackage

class StationWeather(IJarvisCommand):
    command_name = "station_weather"
    description = "Reads the weather station."

    @property
    def required_secrets(self):
        return [JarvisSecret("STATION_TOKEN", "API token of the station")]

    @property
    def all_possible_secrets(self):
        return self.required_secrets + [
            JarvisSecret("STATION_URL", "Base URL", scope="node", required=False)]

    @property
    def required_packages(self):
        return [JarvisPackage("jarvis-tinypkg", ">=0.1")]

    def init_data(self):
        return {"status": "success", "stations_found": 3}

    def run(self, request_info, **kwargs):
        return CommandResponse.success_response(message="fine")
'''


@pytest.fixture
def plugin_dir(data_dir: Path) -> Path:
    (data_dir / "commands").mkdir()
    (data_dir / "commands" / "station.py").write_text(PLUGIN)
    return data_dir


def _dump(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return "\n".join(conn.iterdump())


def _secret_rows(data_dir: Path) -> dict[tuple[str, str], bool]:
    return {(r.key, r.scope): r.is_set for r in NodeStore(data_dir).secrets.list_secrets()}


def test_dry_run_changes_nothing(plugin_dir: Path) -> None:
    result = runner.invoke(app, ["commands", "install", "station_weather", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "STATION_TOKEN" in result.output and "would declare" in result.output
    assert "jarvis-tinypkg>=0.1: would pip install" in result.output
    assert not (plugin_dir / "node.db").exists()
    assert not (plugin_dir / "custom-requirements.txt").exists()

    # with a store holding a value, a dry run reports it as kept and leaves it alone
    NodeStore(plugin_dir).secrets.set_secret("STATION_TOKEN", "s3cret-value")
    before = _dump(plugin_dir / "node.db")
    result = runner.invoke(app, ["commands", "install", "station_weather", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "STATION_TOKEN (integration): already declared, kept" in result.output
    assert "STATION_URL (node): would declare" in result.output
    assert _dump(plugin_dir / "node.db") == before  # every row, encrypted values and times


def test_install_seeds_secret_rows_without_overwriting(
    plugin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    NodeStore(plugin_dir).secrets.set_secret("STATION_TOKEN", "kept-value")
    calls: list[str] = []
    monkeypatch.setattr(
        "jarvis.node.installer.pip_install",
        lambda requirement: calls.append(requirement) or _completed(0),
    )
    result = runner.invoke(app, ["commands", "install", "station_weather"])

    assert result.exit_code == 0, result.output
    assert _secret_rows(plugin_dir) == {
        ("STATION_TOKEN", "integration"): True,
        ("STATION_URL", "node"): False,
    }
    assert NodeStore(plugin_dir).secrets.get_secret("STATION_TOKEN") == "kept-value"
    assert calls == ["jarvis-tinypkg>=0.1"]
    assert (plugin_dir / "custom-requirements.txt").read_text() == "jarvis-tinypkg>=0.1\n"


def _completed(code: int):
    import subprocess

    return subprocess.CompletedProcess(args=[], returncode=code, stdout="", stderr="boom")


def test_pip_installs_a_local_wheel_and_records_it(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels)
    target = tmp_path / "target"
    # pip reads its options from the environment: local wheels only, into a private folder
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_TARGET", str(target))
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")

    class NeedsTiny(_Plain):
        command_name = "needs_tiny"
        required_packages: ClassVar[list[JarvisPackage]] = [
            JarvisPackage("jarvis-tinypkg", ">=0.1")
        ]

    class NeedsMissing(_Plain):
        command_name = "needs_missing"
        required_packages: ClassVar[list[JarvisPackage]] = [
            JarvisPackage("jarvis-not-anywhere", "==9.9")
        ]

    store = NodeStore(data_dir)
    registry = CommandRegistry.from_commands([NeedsTiny(), NeedsMissing()])
    report = install_commands(registry, store)

    assert report.packages_installed == ["jarvis-tinypkg>=0.1"]
    assert "jarvis-not-anywhere==9.9" in report.packages_failed
    assert not report.ok
    assert (target / "jarvis_tinypkg" / "__init__.py").read_text() == "VALUE = 42\n"
    assert (data_dir / "custom-requirements.txt").read_text().splitlines() == [
        "jarvis-tinypkg>=0.1"
    ]


class _Plain(IJarvisCommand):
    description = "test"

    def run(self, request_info: RequestInformation, **kwargs: object) -> CommandResponse:
        return CommandResponse.success_response(message="ok")


def test_requirements_file_is_deduplicated(tmp_path: Path) -> None:
    path = tmp_path / "custom-requirements.txt"
    record_requirements(path, ["music-assistant-client>=1.3.0", "requests"])
    record_requirements(path, ["requests", "Music_Assistant.Client>=1.4"])
    assert path.read_text().splitlines() == ["requests", "Music_Assistant.Client>=1.4"]


def test_list_shows_secret_state_but_never_values(plugin_dir: Path) -> None:
    NodeStore(plugin_dir).secrets.set_secret("STATION_TOKEN", "tok-visible-nowhere")
    result = runner.invoke(app, ["commands", "list"])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if "station_weather" in line)
    assert "station.py" in line
    assert "STATION_TOKEN (integration): set" in result.output
    assert "STATION_URL (node): not set" in result.output
    assert "tok-visible-nowhere" not in result.output


def test_init_data_prints_the_summary(plugin_dir: Path) -> None:
    result = runner.invoke(app, ["commands", "init-data", "station_weather"])
    assert result.exit_code == 0, result.output
    assert "stations_found" in result.output and "3" in result.output

    result = runner.invoke(app, ["commands", "init-data", "no_such_command"])
    assert result.exit_code == 1
    assert "unknown command 'no_such_command'" in result.output


def test_install_unknown_command_fails_clearly(plugin_dir: Path) -> None:
    result = runner.invoke(app, ["commands", "install", "nope"])
    assert result.exit_code == 1
    assert "unknown command(s): nope" in result.output
    assert "Traceback" not in result.output
    assert os.listdir(plugin_dir) == ["commands"] or not (plugin_dir / "node.db").exists()
