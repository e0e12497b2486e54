"""Failure is contained: servers that do not start, hang, die or babble give a sentence.

Every case uses a real process. The node (here: the registry and its other commands)
keeps working, and a server that stopped is started again after a short back-off.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jarvis.node.mcp import Backoff, McpHub, McpServerConfig, add_mcp_commands
from jarvis.node.registry import CommandRegistry
from jarvis.sdk import CommandResponse, EnvironmentSecretStore, RequestInformation

INFO = RequestInformation()
QUICK = Backoff(first=0.2, maximum=1.0)


def _start(*configs: McpServerConfig, tools_dir: Path | None = None) -> CommandRegistry:
    registry = CommandRegistry()
    add_mcp_commands(registry, configs, EnvironmentSecretStore(), backoff=QUICK,
                     tools_dir=tools_dir)
    return registry


@pytest.fixture
def sample(sample_command: list[str]) -> Iterator[CommandRegistry]:
    registry = _start(McpServerConfig("sample", command=sample_command, call_timeout=1.5))
    yield registry
    registry.close()


def _convert(registry: CommandRegistry) -> CommandResponse:
    return registry.commands["convert_temperature"].execute(INFO, value=100, unit="celsius")


def _recovers(registry: CommandRegistry, within: float = 20.0) -> list[str]:
    """The sentences heard until the server answers again."""
    heard: list[str] = []
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        answer = _convert(registry)
        if answer.success:
            assert answer.message == "100 °C is 212 °F"
            return heard
        heard.append(answer.message or "")
        time.sleep(0.1)
    raise AssertionError(f"the server never came back: {heard[-3:]}")


def test_servers_that_do_not_start_are_problems_not_crashes(sample_command: list[str]) -> None:
    registry = _start(
        McpServerConfig("missing", command=["/nonexistent/mcp-server"]),
        McpServerConfig("quits", command=[sys.executable, "-c", "raise SystemExit(2)"]),
        McpServerConfig("chatty", command=[sys.executable, "-c",
                                           "import time; print('hello there'); time.sleep(60)"],
                        start_timeout=1.5),
        McpServerConfig("sample", command=sample_command),
    )
    try:
        problems = {p.source.split()[2]: p.message for p in registry.problems}
        assert set(problems) == {"missing", "quits", "chatty"}
        assert problems["missing"].startswith("not started, its tools are unavailable: "
                                              "it failed to start (")
        assert "it failed to start" in problems["quits"]
        assert problems["chatty"].endswith("it did not start within 1.5 seconds")
        assert _convert(registry).success  # the working server's tools are there
    finally:
        registry.close()


def test_a_slow_start_is_bounded_by_start_timeout_not_call_timeout(
    sample_command: list[str],
) -> None:
    # A loaded Raspberry Pi may take seconds to start a server whose calls are quick.
    script = "import os, sys, time; time.sleep(2.5); os.execv(sys.executable, sys.argv[1:])"
    config = McpServerConfig("sample", command=[sys.executable, "-c", script, *sample_command],
                             call_timeout=1.0, start_timeout=15.0)
    registry = _start(config)
    try:
        assert registry.problems == []
        assert _convert(registry).success
    finally:
        registry.close()


def test_a_server_down_at_start_keeps_its_commands_from_last_time(
    sample_command: list[str], tmp_path: Path,
) -> None:
    tools_dir = tmp_path / "mcp"
    _start(McpServerConfig("sample", command=sample_command), tools_dir=tools_dir).close()
    assert (tools_dir / "sample.tools.json").exists()
    # now the server only starts once a flag file exists (say, a disk not yet mounted)
    flag = tmp_path / "ready"
    script = ("import os, sys; os.path.exists(sys.argv[1]) or sys.exit(1); "
              "os.execv(sys.executable, [sys.executable, sys.argv[2]])")
    config = McpServerConfig("sample", command=[sys.executable, "-c", script, str(flag),
                                                sample_command[1]])
    registry = _start(config, tools_dir=tools_dir)
    try:
        [problem] = registry.problems
        assert problem.message.startswith("not started (it failed to start (")
        answer = _convert(registry)
        assert not answer.success
        assert (answer.message or "").startswith("The sample server is not available: "
                                                 "it failed to start (")
        flag.touch()
        _recovers(registry)
    finally:
        registry.close()


def test_a_hung_call_meets_its_deadline_and_the_server_restarts(sample: CommandRegistry) -> None:
    started = time.monotonic()
    answer = sample.commands["stall"].execute(INFO, seconds=60)
    assert time.monotonic() - started < 5
    assert not answer.success
    assert answer.message == (
        "The sample server did not answer within 1.5 seconds; it is being restarted.")
    heard = _recovers(sample)
    assert all(h.startswith("The sample server is not available: a call to stall took "
                            "longer than 1.5 seconds") for h in heard)


def test_a_server_that_dies_is_started_again(sample: CommandRegistry) -> None:
    answer = sample.commands["crash"].execute(INFO)
    assert answer.message == "The sample server stopped while answering; it is being restarted."
    _recovers(sample)
    # and once more: the back-off starts again from its first step after a good start
    sample.commands["crash"].execute(INFO)
    _recovers(sample)


def test_garbage_on_the_wire_is_contained(sample: CommandRegistry) -> None:
    answer = sample.commands["babble"].execute(INFO)
    assert not answer.success
    assert answer.message == (
        "The sample server did not answer within 1.5 seconds; it is being restarted.")
    _recovers(sample)


def test_a_server_that_dies_while_idle_is_noticed_and_started_again(
    sample_command: list[str], tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    registry = _start(McpServerConfig("sample", command=sample_command, ping_interval=0.3,
                                      env={"SAMPLE_PID_FILE": str(pid_file)}))
    try:
        first = _pid(pid_file)
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while _pid(pid_file) in (0, first) and time.monotonic() < deadline:
            time.sleep(0.1)  # no call is made: a ping notices and the server is restarted
        assert _pid(pid_file) not in (0, first)
        _recovers(registry)
    finally:
        registry.close()


def _pid(path: Path) -> int:
    text = path.read_text().strip()
    return int(text) if text else 0


def test_closing_during_a_slow_start_ends_the_process_at_once(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
              "time.sleep(120)")
    config = McpServerConfig("slow", command=[sys.executable, "-c", script, str(pid_file)],
                             start_timeout=60)
    hub = McpHub()
    starting = threading.Thread(target=hub.start, args=([(config, {}, {})],))
    starting.start()
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    hub.close()
    starting.join(timeout=10)
    assert time.monotonic() - started < 5 and not starting.is_alive()
    with pytest.raises(ProcessLookupError):
        os.kill(_pid(pid_file), 0)


def test_back_off_doubles_up_to_its_limit() -> None:
    backoff = Backoff(first=1, maximum=5)
    assert [backoff.failed() for _ in range(5)] == [1, 2, 4, 5, 5]
    backoff.reset()
    assert backoff.failed() == 1


def test_closing_stops_the_server_processes(sample_command: list[str], tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    registry = _start(McpServerConfig("sample", command=sample_command,
                                      env={"SAMPLE_PID_FILE": str(pid_file)}))
    pid = int(pid_file.read_text())
    os.kill(pid, 0)  # running
    registry.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    answer = _convert(registry)
    assert not answer.success
    assert answer.message is not None and answer.message.startswith("The sample server")
