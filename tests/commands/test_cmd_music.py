from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from command_helpers import make_context, request

from jarvis.commands import music
from jarvis.commands.music import (
    MpcPlayer,
    MpvIpcPlayer,
    MusicCommand,
    MusicPlayerError,
    set_player_factory,
)


class FakePlayer:
    """Records calls; knows a few songs."""

    def __init__(self, library: tuple[str, ...] = ("jazz", "queen")) -> None:
        self.calls: list[tuple] = []
        self.volume = 50
        self.library = library

    def play(self, query: str | None) -> str | None:
        self.calls.append(("play", query))
        if query and not any(word in query.lower() for word in self.library):
            raise MusicPlayerError(f"I couldn't find {query} in your music.")
        return query

    def pause(self) -> None:
        self.calls.append(("pause",))

    def resume(self) -> None:
        self.calls.append(("resume",))

    def skip(self) -> None:
        self.calls.append(("skip",))

    def previous(self) -> None:
        self.calls.append(("previous",))

    def stop(self) -> None:
        self.calls.append(("stop",))

    def set_volume(self, level: int) -> None:
        self.calls.append(("volume", level))
        self.volume = level

    def get_volume(self) -> int | None:
        return self.volume


@pytest.fixture
def player() -> FakePlayer:
    return FakePlayer()


@pytest.fixture
def cmd(player: FakePlayer) -> MusicCommand:
    command = MusicCommand(player=player)
    command.bind(make_context())
    return command


@pytest.mark.parametrize(
    ("text", "arguments"),
    [("pause", {"action": "pause"}), ("Stop the music.", {"action": "stop"}),
     ("skip", {"action": "skip"}), ("next song", {"action": "skip"}),
     ("resume", {"action": "resume"}), ("previous track", {"action": "previous"}),
     ("volume 50", {"action": "volume", "volume": 50}),
     ("set volume to 30 percent", {"action": "volume", "volume": 30}),
     ("turn it up", {"action": "volume"})],
)
def test_pre_route_hits(cmd: MusicCommand, text: str, arguments: dict) -> None:
    hit = cmd.pre_route(text)
    assert hit is not None and hit.arguments == arguments


@pytest.mark.parametrize(
    "text",
    ["pause the music in the kitchen and then turn off the lights",  # more than 5 words
     "set the volume to 30 percent",
     "play some jazz", "volume 150", "stop the timer", "skip breakfast tomorrow",
     "what is the next song on the album"],
)
def test_pre_route_misses(cmd: MusicCommand, text: str) -> None:
    assert cmd.pre_route(text) is None


def test_actions_reach_the_player(cmd: MusicCommand, player: FakePlayer) -> None:
    assert cmd.execute(request(), action="play", query="jazz").message == "Playing jazz."
    assert cmd.execute(request(), action="pause").message == "Paused."
    assert cmd.execute(request(), action="resume").message == "Resuming the music."
    assert cmd.execute(request(), action="skip").message == "Skipping to the next song."
    assert cmd.execute(request(), action="previous").success
    assert cmd.execute(request(), action="volume", volume=40).message == (
        "Volume set to 40 percent.")
    assert cmd.execute(request(), action="stop").message == "Stopped the music."
    assert player.calls == [("play", "jazz"), ("pause",), ("resume",), ("skip",),
                            ("previous",), ("volume", 40), ("stop",)]


def test_pre_routed_relative_volume(cmd: MusicCommand, player: FakePlayer) -> None:
    hit = cmd.pre_route("turn it up")
    assert hit is not None
    assert cmd.execute(request("turn it up"), **hit.arguments).message == (
        "Volume set to 60 percent.")
    assert cmd.execute(request("quieter"), action="volume").context_data["volume"] == 50
    unclear = cmd.execute(request("volume"), action="volume")
    assert unclear.is_validation_error


def test_volume_bounds_and_post_process(cmd: MusicCommand) -> None:
    assert cmd.execute(request(), action="volume", volume=101).is_validation_error
    assert cmd.post_process_tool_call({"action": "next"}, "") == {"action": "skip"}
    assert cmd.post_process_tool_call({"action": "set_volume", "volume": "70%"}, "") == {
        "action": "volume", "volume": 70}
    assert cmd.post_process_tool_call({"action": "play", "query": "music"}, "") == {
        "action": "play"}


def test_player_errors_are_spoken(cmd: MusicCommand) -> None:
    response = cmd.execute(request(), action="play", query="polka")
    assert not response.success
    assert response.message == "I couldn't find polka in your music."


def test_no_player_is_a_clear_message() -> None:
    previous = set_player_factory(lambda _ctx: None)
    try:
        response = MusicCommand().bind(make_context()).execute(request(), action="pause")
    finally:
        set_player_factory(previous)
    assert not response.success
    assert response.message.startswith("No music player is set up")


def test_factory_injection(player: FakePlayer) -> None:
    previous = set_player_factory(lambda _ctx: player)
    try:
        MusicCommand().bind(make_context()).execute(request(), action="skip")
    finally:
        set_player_factory(previous)
    assert player.calls == [("skip",)]
    assert music._factory is previous


# --- the real backends against stand-ins on this machine ------------------------------------
@pytest.fixture
def fake_mpc(tmp_path: Path) -> tuple[Path, Path]:
    """An `mpc` executable that logs its arguments and answers like mpc."""
    log = tmp_path / "mpc.log"
    script = tmp_path / "mpc"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{log}"\n'
        'case "$1" in\n'
        '  playlist) grep -q "searchadd any nothing" "' + str(log) + '" || echo "Queen - Song";;\n'
        '  current) echo "Queen - Bohemian Rhapsody";;\n'
        '  volume) [ -z "$2" ] && echo "volume: 35%   repeat: off";;\n'
        "esac\n"
        "exit 0\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, log


def test_mpc_player_commands(fake_mpc: tuple[Path, Path]) -> None:
    script, log = fake_mpc
    player = MpcPlayer(str(script))
    assert player.play("queen") == "Queen - Bohemian Rhapsody"
    player.pause()
    player.skip()
    player.set_volume(20)
    assert player.get_volume() == 35
    assert log.read_text().splitlines() == [
        "clear", "searchadd any queen", "playlist", "play", "current", "pause", "next",
        "volume 20", "volume"]
    with pytest.raises(MusicPlayerError, match="couldn't find nothing"):
        player.play("nothing")


def test_mpc_failure_is_a_player_error(tmp_path: Path) -> None:
    script = tmp_path / "mpc"
    script.write_text("#!/bin/sh\necho 'error: Connection refused' >&2\nexit 1\n")
    script.chmod(0o755)
    with pytest.raises(MusicPlayerError, match="Connection refused"):
        MpcPlayer(str(script)).pause()


@pytest.fixture
def mpv_socket(tmp_path: Path) -> Iterator[tuple[Path, list[list]]]:
    """A unix socket that answers like mpv's JSON IPC and records the commands."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"jarvis-test-mpv-{os.getpid()}.sock"
    path.unlink(missing_ok=True)
    received: list[list] = []
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                line = conn.makefile("rb").readline()
                command = json.loads(line)["command"]
                received.append(command)
                data = 42.0 if command[:2] == ["get_property", "volume"] else None
                conn.sendall(b'{"event":"idle"}\n' + json.dumps(
                    {"data": data, "error": "success"}).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received
    stop.set()
    thread.join(timeout=2)
    server.close()
    path.unlink(missing_ok=True)


def test_mpv_ipc_player(mpv_socket: tuple[Path, list[list]], tmp_path: Path) -> None:
    path, received = mpv_socket
    library = tmp_path / "Music" / "Queen"
    library.mkdir(parents=True)
    (library / "Bohemian_Rhapsody.mp3").write_bytes(b"")
    (library / "notes.txt").write_text("not music")
    player = MpvIpcPlayer(path, tmp_path / "Music", executable=None)
    assert player.play("bohemian rhapsody") == "Bohemian_Rhapsody"
    player.pause()
    player.set_volume(30)
    assert player.get_volume() == 42
    assert received == [
        ["loadfile", str(library / "Bohemian_Rhapsody.mp3"), "replace"],
        ["set_property", "pause", False],
        ["set_property", "pause", True],
        ["set_property", "volume", 30],
        ["get_property", "volume"],
    ]
    with pytest.raises(MusicPlayerError, match="couldn't find"):
        player.play("polka")


def test_mpv_not_running_is_a_player_error(tmp_path: Path) -> None:
    player = MpvIpcPlayer(tmp_path / "absent.sock", tmp_path, executable=None, timeout=0.2)
    with pytest.raises(MusicPlayerError, match="not answering"):
        player.pause()
