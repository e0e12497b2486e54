"""Command discovery: local files, entry points, built-ins, broken modules, duplicates."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jarvis.cli.main import app
from jarvis.node.registry import discover_commands
from jarvis.node.runtime import command_context
from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore

COMMAND_SOURCE = '''
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisParameter

class {cls}(IJarvisCommand):
    command_name = "{name}"
    description = "A test command."
    parameters = [JarvisParameter("n", "int")]

    def run(self, request_info, **kwargs):
        stored = self.context.storage.get("{name}", "runs", 0) + 1
        self.context.storage.set("{name}", "runs", stored)
        return CommandResponse.success_response(message=f"run {{stored}}")
'''


def _write_command(directory: Path, filename: str, cls: str, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / filename).write_text(COMMAND_SOURCE.format(cls=cls, name=name))


def _context(data_dir: Path):
    settings = NodeSettings(data_dir=data_dir, timezone="Europe/Paris")
    return command_context(settings, NodeStore(data_dir))


def test_user_directory_commands_are_loaded_bound_and_broken_ones_reported(
    data_dir: Path,
) -> None:
    commands_dir = data_dir / "commands"
    _write_command(commands_dir, "greeter.py", "Greeter", "greet")
    (commands_dir / "broken.py").write_text("import not_a_real_module_xyz\n")
    (commands_dir / "abstract_only.py").write_text(textwrap.dedent("""
        from jarvis.sdk import IJarvisCommand
        class Base(IJarvisCommand):
            pass
    """))

    registry = discover_commands(_context(data_dir), builtins=False, entry_points_enabled=False)

    assert list(registry.commands) == ["greet"]
    command = registry.get("greet")
    assert command.context.timezone == "Europe/Paris"
    assert command.context.data_dir == data_dir
    from jarvis.sdk import RequestInformation

    command.execute(RequestInformation(voice_command="hi"))
    assert NodeStore(data_dir).storage.get("greet", "runs") == 1  # the node's SQLite storage
    problems = [str(p) for p in registry.problems]
    assert len(problems) == 1
    assert "broken.py" in problems[0] and "not_a_real_module_xyz" in problems[0]


def test_duplicate_names_keep_the_first_and_are_reported(data_dir: Path) -> None:
    commands_dir = data_dir / "commands"
    _write_command(commands_dir, "a_first.py", "First", "same_name")
    _write_command(commands_dir, "b_second.py", "Second", "same_name")

    registry = discover_commands(_context(data_dir), builtins=False, entry_points_enabled=False)

    assert type(registry.get("same_name")).__name__ == "First"
    [problem] = registry.problems
    assert "duplicate command name 'same_name'" in problem.message
    assert "a_first.py" in problem.message and "b_second.py" in problem.source


def test_entry_point_commands_are_discovered(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _write_command(site, "jarvis_plugin_demo.py", "PluginCommand", "plugin_cmd")
    dist = site / "jarvis_plugin_demo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: jarvis-plugin-demo\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[jarvis.commands]\n"
        "demo = jarvis_plugin_demo:PluginCommand\n"
        "missing = jarvis_plugin_nowhere:Thing\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "jarvis_plugin_demo", raising=False)

    registry = discover_commands(_context(data_dir), builtins=False)

    assert "plugin_cmd" in registry
    assert "entry point demo" in registry.sources["plugin_cmd"]
    assert any("jarvis_plugin_nowhere" in str(p) for p in registry.problems)


def test_builtins_are_discovered_from_the_commands_package(data_dir: Path) -> None:
    registry = discover_commands(_context(data_dir), entry_points_enabled=False)
    sources = set(registry.sources.values())
    assert registry.commands, "the jarvis.commands package defines commands"
    assert all(s.startswith("jarvis.commands.") for s in sources)
    # every discovered command is bound to the node's context
    assert all(c.context.data_dir == data_dir for c in registry)


def test_missing_jarvis_tools_path_is_reported(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_TOOLS", str(data_dir / "nowhere"))
    registry = discover_commands(_context(data_dir), builtins=False, entry_points_enabled=False)
    assert any("nowhere" in p.source for p in registry.problems)


def test_yaml_tools_from_the_data_dir_and_jarvis_tools(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = data_dir / "tools"
    tools.mkdir()
    (tools / "echo.yaml").write_text(
        "tools:\n  - name: say_back\n    description: Repeats the text\n"
        "    exec: [echo, '{text}']\n    params:\n      - name: text\n        required: true\n"
    )
    (tools / "broken.yaml").write_text("tools:\n  - name: a\n    fn: no_such_module_jarvis:x\n")
    extra = tmp_path / "more-tools"
    extra.mkdir()
    (extra / "hello.yaml").write_text(
        "tools:\n  - name: greet_cwd\n    description: Working folder\n    fn: os:getcwd\n"
    )
    monkeypatch.setenv("JARVIS_TOOLS", str(extra))

    registry = discover_commands(_context(data_dir), builtins=False, entry_points_enabled=False)

    assert {"say_back", "greet_cwd"} <= set(registry.commands)
    assert registry.sources["say_back"].endswith("echo.yaml")
    assert any("broken.yaml" in str(p) and "no_such_module_jarvis" in str(p)
               for p in registry.problems)
    from jarvis.sdk import RequestInformation

    response = registry.get("say_back").execute(RequestInformation(), text="hello there")
    assert response.success and "hello there" in (response.message or "")


def _listed() -> tuple[str, str]:
    """`jarvis commands list` as a user runs it: what it prints, and its warnings."""
    result = CliRunner().invoke(app, ["commands", "list"])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_a_builtin_switched_off_leaves_its_name_to_the_users_own_command(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_command(data_dir / "commands", "station.py", "StationWeather", "get_weather")
    # Without the setting the built-in keeps its name, and the warning says how to yield it.
    out, warnings = _listed()
    assert "duplicate command name 'get_weather'" in warnings
    assert "JARVIS_BUILTINS_OFF=get_weather leaves the built-in out" in warnings
    assert "station.py" not in out

    monkeypatch.setenv("JARVIS_BUILTINS_OFF", "get_weather, tell_joke")
    out, warnings = _listed()
    line = next(line for line in out.splitlines() if "get_weather" in line)
    assert "station.py" in line
    assert "tell_joke" not in out and "calculate" in out
    assert "duplicate" not in warnings


def test_a_builtin_name_that_does_not_exist_is_reported_with_the_known_ones(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_BUILTINS_OFF", "musik")
    out, warnings = _listed()
    assert "no built-in command is named 'musik'" in warnings
    assert "music" in warnings and "get_weather" in warnings
    assert "music" in out  # nothing is left out
