"""`music`: play, pause, skip and set the volume of the local music player.

The player is found at run time: MPD through `mpc`, else mpv through its JSON IPC socket.
A `MusicPlayer` can also be given to the command (tests, other backends), or a factory
installed with `set_player_factory`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rapidfuzz import fuzz

from jarvis.sdk import (
    CommandAntipattern,
    CommandContext,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    PreRouteResult,
    RequestInformation,
    ValidationResult,
)

__all__ = [
    "ACTIONS",
    "MpcPlayer",
    "MpvIpcPlayer",
    "MusicCommand",
    "MusicPlayer",
    "MusicPlayerError",
    "default_player",
    "set_player_factory",
]

ACTIONS = ("play", "pause", "resume", "skip", "previous", "stop", "volume")
MAX_PRE_ROUTE_WORDS = 5
VOLUME_STEP = 10
AUDIO_SUFFIXES = {".mp3", ".flac", ".ogg", ".opus", ".m4a", ".wav", ".aac", ".wma"}
NO_PLAYER = ("No music player is set up on this device. Install MPD with mpc, or mpv, "
             "to play music.")


class MusicPlayerError(Exception):
    """The player failed or found nothing; the message is spoken."""


@runtime_checkable
class MusicPlayer(Protocol):
    """What the music command needs from a player."""

    def play(self, query: str | None) -> str | None:
        """Start `query` (or resume the queue when None); returns what now plays, if known."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def skip(self) -> None: ...

    def previous(self) -> None: ...

    def stop(self) -> None: ...

    def set_volume(self, level: int) -> None: ...

    def get_volume(self) -> int | None: ...


# --- MPD through mpc -------------------------------------------------------------------------
class MpcPlayer:
    """Drives MPD with the `mpc` client (MPD_HOST/MPD_PORT are honoured by mpc itself)."""

    def __init__(self, executable: str = "mpc", timeout: float = 5.0) -> None:
        self.executable = executable
        self.timeout = timeout

    def _mpc(self, *args: str) -> str:
        try:
            done = subprocess.run([self.executable, *args], capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MusicPlayerError("The music player is not answering.") from exc
        if done.returncode != 0:
            raise MusicPlayerError("The music player reported an error: "
                                   + (done.stderr.strip().splitlines() or ["unknown"])[-1])
        return done.stdout

    def play(self, query: str | None) -> str | None:
        if query:
            self._mpc("clear")
            self._mpc("searchadd", "any", query)
            if not self._mpc("playlist").strip():
                raise MusicPlayerError(f"I couldn't find {query} in your music.")
        self._mpc("play")
        current = self._mpc("current").strip()
        return current or None

    def pause(self) -> None:
        self._mpc("pause")

    def resume(self) -> None:
        self._mpc("play")

    def skip(self) -> None:
        self._mpc("next")

    def previous(self) -> None:
        self._mpc("prev")

    def stop(self) -> None:
        self._mpc("stop")

    def set_volume(self, level: int) -> None:
        self._mpc("volume", str(level))

    def get_volume(self) -> int | None:
        m = re.search(r"volume:\s*(\d+)%", self._mpc("volume"))
        return int(m[1]) if m else None


# --- mpv through its JSON IPC socket ---------------------------------------------------------
class MpvIpcPlayer:
    """Drives an mpv started in idle mode with `--input-ipc-server`; starts one if needed.

    Songs are files under the music folder (`JARVIS_MUSIC_DIR`, default ~/Music) whose path
    matches the query.
    """

    def __init__(self, socket_path: Path, music_dir: Path, executable: str | None = "mpv",
                 timeout: float = 3.0) -> None:
        self.socket_path = socket_path
        self.music_dir = music_dir
        self.executable = executable
        self.timeout = timeout

    def _send(self, command: list[Any]) -> Any:
        reply = self._try_send(command)
        if reply is None and self.executable:
            self._start()
            reply = self._try_send(command)
        if reply is None:
            raise MusicPlayerError("The music player is not answering.")
        if reply.get("error") not in (None, "success"):
            raise MusicPlayerError(f"The music player reported an error: {reply['error']}")
        return reply.get("data")

    def _try_send(self, command: list[Any]) -> dict[str, Any] | None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(self.timeout)
                sock.connect(str(self.socket_path))
                sock.sendall(json.dumps({"command": command}).encode() + b"\n")
                buffer = b""
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return None
                    buffer += chunk
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        message = json.loads(line or b"{}")
                        if "event" not in message:  # events are unrelated notifications
                            return message
        except (OSError, ValueError):
            return None

    def _start(self) -> None:
        assert self.executable is not None
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.Popen(
            [self.executable, "--idle=yes", "--no-video", "--no-terminal",
             f"--input-ipc-server={self.socket_path}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline and not self.socket_path.exists():
            time.sleep(0.05)

    def find(self, query: str) -> list[Path]:
        """Audio files whose path (relative to the music folder) matches `query`."""
        if not self.music_dir.is_dir():
            return []
        wanted = query.lower()
        scored = []
        for path in self.music_dir.rglob("*"):
            if path.suffix.lower() not in AUDIO_SUFFIXES or not path.is_file():
                continue
            name = str(path.relative_to(self.music_dir).with_suffix("")).lower()
            score = fuzz.partial_token_set_ratio(wanted, re.sub(r"[_/\\-]+", " ", name))
            if score >= 85:
                scored.append((-score, str(path)))
        return [Path(p) for _, p in sorted(scored)]

    def play(self, query: str | None) -> str | None:
        if not query:
            self._send(["set_property", "pause", False])
            return None
        files = self.find(query)
        if not files:
            raise MusicPlayerError(f"I couldn't find {query} in your music.")
        self._send(["loadfile", str(files[0]), "replace"])
        for path in files[1:]:
            self._send(["loadfile", str(path), "append"])
        self._send(["set_property", "pause", False])
        return files[0].stem

    def pause(self) -> None:
        self._send(["set_property", "pause", True])

    def resume(self) -> None:
        self._send(["set_property", "pause", False])

    def skip(self) -> None:
        self._send(["playlist-next", "force"])

    def previous(self) -> None:
        self._send(["playlist-prev", "force"])

    def stop(self) -> None:
        self._send(["stop"])

    def set_volume(self, level: int) -> None:
        self._send(["set_property", "volume", level])

    def get_volume(self) -> int | None:
        value = self._send(["get_property", "volume"])
        return round(value) if isinstance(value, int | float) else None


# --- choosing a player ----------------------------------------------------------------------
def default_player(context: CommandContext) -> MusicPlayer | None:
    """mpc when installed, else mpv, else None."""
    mpc = shutil.which("mpc")
    if mpc:
        return MpcPlayer(mpc)
    mpv = shutil.which("mpv")
    if mpv:
        base = context.data_dir or Path(tempfile.gettempdir())
        socket_path = Path(os.environ.get("JARVIS_MPV_SOCKET") or base / "mpv.sock")
        music_dir = Path(os.environ.get("JARVIS_MUSIC_DIR") or Path.home() / "Music")
        return MpvIpcPlayer(socket_path, music_dir, mpv)
    return None


_factory: Callable[[CommandContext], MusicPlayer | None] = default_player


def set_player_factory(
    factory: Callable[[CommandContext], MusicPlayer | None] | None,
) -> Callable[[CommandContext], MusicPlayer | None]:
    """Install how commands find their player (None restores the default); returns the old."""
    global _factory
    previous = _factory
    _factory = factory or default_player
    return previous


# --- the command -----------------------------------------------------------------------------
_SIMPLE = {
    "pause": ("pause", "pause the music", "pause music", "pause the song", "pause it",
              "pause playback", "pause the song please", "hold the music"),
    "stop": ("stop", "stop the music", "stop music", "stop playing", "stop the song",
             "stop playback", "stop playing music", "stop the playback"),
    "skip": ("skip", "skip it", "skip this", "skip song", "skip this song", "skip the song",
             "skip track", "skip this track", "next", "next song", "next track",
             "play the next song", "play next song", "next one"),
    "previous": ("previous", "previous song", "previous track", "go back a song",
                 "last song", "play the previous song", "play the last song", "back one song"),
    "resume": ("resume", "resume the music", "resume music", "resume playing", "unpause",
               "continue the music", "keep playing", "continue playing", "resume playback",
               "play", "unpause the music"),
}
_SIMPLE_LOOKUP = {phrase: action for action, phrases in _SIMPLE.items() for phrase in phrases}
_VOLUME_SET = re.compile(
    r"^(?:(?:set|turn|change) (?:the )?)?volume (?:to |at )?(?P<level>\d{1,3})(?: ?%| percent)?$"
)
_LOUDER = re.compile(r"\b(?:louder|up|increase|raise|higher)\b")
_QUIETER = re.compile(r"\b(?:quieter|softer|down|decrease|lower)\b")
_VOLUME_RELATIVE = ("volume up", "volume down", "turn it up", "turn it down", "louder",
                    "quieter", "turn the volume up", "turn the volume down", "turn up the volume",
                    "turn down the volume", "a bit louder", "a bit quieter")
_ACTION_ALIASES = {
    "next": "skip", "next_song": "skip", "skip_song": "skip", "forward": "skip",
    "prev": "previous", "back": "previous", "previous_song": "previous", "rewind": "previous",
    "unpause": "resume", "continue": "resume", "resume_music": "resume",
    "halt": "stop", "pause_music": "pause",
    "set_volume": "volume", "volume_up": "volume", "volume_down": "volume",
    "louder": "volume", "quieter": "volume", "play_music": "play", "start": "play",
}
# What people say for each action; the center favours the action whose words were said.
_SAID_ACTIONS = {
    "play": ["put on", "stick on", "throw on", "listen to", "hear"],
    "skip": ["skip", "next", "skip ahead", "forward"],
    "previous": ["previous", "go back", "last song", "last track", "back a song", "rewind"],
    "resume": ["resume", "unpause", "continue", "keep playing", "carry on"],
    "pause": ["pause", "hold the music"],
    "stop": ["stop", "turn off the music", "turn the music off", "kill the music", "silence"],
    "volume": ["volume", "louder", "quieter", "softer", "too loud", "too quiet", "turn it up",
               "turn it down", "turn up", "turn down", "music up", "music down", "crank",
               "can't hear"],
}
_NO_QUERY = {"music", "some music", "something", "anything", "songs", "a song", "my music"}


def _normalize(text: str) -> str:
    text = text.lower().strip()
    text = re.sub(r"[.!?,]+", "", text)
    text = re.sub(r"^(?:hey |ok )?jarvis\s+", "", text)
    text = re.sub(r"^please\s+|\s+please$", "", text)
    return re.sub(r"\s+", " ", text).strip()


class MusicCommand(IJarvisCommand):
    """Plays and controls music on this device."""

    def __init__(self, player: MusicPlayer | None = None) -> None:
        self._player = player

    @property
    def command_name(self) -> str:
        return "music"

    @property
    def description(self) -> str:
        return ("Play music (a song, artist, album or genre), or pause, resume, skip, go back, "
                "stop, or set the volume.")

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("action", "string", required=True, enum_values=list(ACTIONS),
                            # The prompt shows a description up to its first ";" or "(".
                            description="skip is next song, previous last song, resume unpause, "
                                        "volume louder",
                            enum_synonyms=_SAID_ACTIONS),
            JarvisParameter("query", "string",
                            description="For play: the song, artist, album or genre",
                            example="Miles Davis"),
            JarvisParameter("volume", "int", refinable=True, minimum=0, maximum=100,
                            description="For volume: the level in percent, 0 to 100"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("play some jazz", {"action": "play", "query": "jazz"},
                           is_primary=True),
            CommandExample("play Bohemian Rhapsody by Queen",
                           {"action": "play", "query": "Bohemian Rhapsody Queen"}),
            CommandExample("pause the music", {"action": "pause"}),
            CommandExample("skip this song", {"action": "skip"}),
            CommandExample("set the volume to 40", {"action": "volume", "volume": 40}),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return [
            "action is one of play, pause, resume, skip, previous, stop, volume: "
            "'next song' -> skip, 'continue' -> resume",
        ]

    @property
    def rules(self) -> list[str]:
        return ["'Make it louder' after a volume change refines volume"]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("control_device", "Lights, switches and locks are "
                               "control_device."),
            CommandAntipattern("cancel_timer", "'Cancel the timer' is cancel_timer, not stop."),
        ]

    @property
    def keywords(self) -> list[str]:
        return ["play", "music", "song", "pause", "skip", "next", "volume", "resume", "stop",
                "track", "album", "playlist", "artist", "shuffle", "louder", "quieter", "radio",
                "unpause", "too loud", "crank", "turn it up", "turn it down", "tunes"]

    # --- routing -----------------------------------------------------------------------------
    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        text = _normalize(voice_command)
        if not text or len(text.split()) > MAX_PRE_ROUTE_WORDS:
            return None
        if text in _SIMPLE_LOOKUP:
            return PreRouteResult(arguments={"action": _SIMPLE_LOOKUP[text]})
        m = _VOLUME_SET.match(text)
        if m and 0 <= int(m["level"]) <= 100:
            return PreRouteResult(arguments={"action": "volume", "volume": int(m["level"])})
        if text in _VOLUME_RELATIVE:
            return PreRouteResult(arguments={"action": "volume"})
        return None

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        action = fixed.get("action")
        if isinstance(action, str):
            key = action.strip().lower().replace(" ", "_")
            fixed["action"] = key if key in ACTIONS else _ACTION_ALIASES.get(key, action)
        volume = fixed.get("volume")
        if isinstance(volume, str):
            digits = volume.strip().rstrip("%").removesuffix("percent").strip()
            if digits.isdigit():
                fixed["volume"] = int(digits)
        elif isinstance(volume, float) and volume == int(volume):
            fixed["volume"] = int(volume)
        if fixed.get("volume") is not None and fixed.get("action") in (None, "play"):
            fixed["action"] = "volume" if not fixed.get("query") else fixed.get("action")
        query = fixed.get("query")
        if isinstance(query, str) and query.strip().lower() in _NO_QUERY:
            fixed.pop("query")
        return fixed

    # --- running -------------------------------------------------------------------------------
    def player(self) -> MusicPlayer | None:
        return self._player if self._player is not None else _factory(self.context)

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        action: str = kwargs["action"]
        player = self.player()
        if player is None:
            return CommandResponse.error_response(NO_PLAYER, {"error": "no_player"})
        try:
            return self._do(player, action, kwargs, request_info.voice_command)
        except MusicPlayerError as exc:
            return CommandResponse.error_response(str(exc), {"action": action})

    def _do(self, player: MusicPlayer, action: str, kwargs: dict[str, Any],
            voice_command: str) -> CommandResponse:
        data: dict[str, Any] = {"action": action}
        if action == "play":
            query = kwargs.get("query")
            playing = player.play(query)
            data.update(query=query, now_playing=playing)
            message = f"Playing {query}." if query else "Playing music."
        elif action == "volume":
            level = kwargs.get("volume")
            if level is None:
                level = self._relative_volume(player, voice_command)
                if level is None:
                    return CommandResponse.validation_error([ValidationResult(
                        success=False, param_name="volume", command_name=self.command_name,
                        message="What volume, from 0 to 100?",
                    )])
            player.set_volume(level)
            data["volume"] = level
            message = f"Volume set to {level} percent."
        else:
            getattr(player, action)()
            message = {
                "pause": "Paused.",
                "resume": "Resuming the music.",
                "skip": "Skipping to the next song.",
                "previous": "Going back to the previous song.",
                "stop": "Stopped the music.",
            }[action]
        return CommandResponse.success_response(data, message=message)

    @staticmethod
    def _relative_volume(player: MusicPlayer, voice_command: str) -> int | None:
        text = voice_command.lower()
        step = VOLUME_STEP if _LOUDER.search(text) else -VOLUME_STEP if _QUIETER.search(text) else 0
        if not step:
            return None
        current = player.get_volume()
        return max(0, min(100, (50 if current is None else current) + step))
