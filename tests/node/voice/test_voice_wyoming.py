"""Speech-to-text and text-to-speech on real Wyoming servers started on loopback.

`wyoming-faster-whisper` serves the prepared Whisper base folder and `wyoming-piper` the
prepared Piper voice (both are test dependencies); the node's wake word and voice activity
stay in-process. Needs the prepared voice models (see conftest).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from voice_speech import piper_speech, request

from jarvis.node import NodeSettings, open_node
from jarvis.node.voice import ArraySource, CollectingSink, VoiceLoop, service_responder
from jarvis.node.voice.engines import VoiceEngines
from jarvis.node.voice.models import PIPER_VOICE, WHISPER_BASE
from jarvis.node.voice.wyoming import WyomingError, WyomingSpeechToText, WyomingTextToSpeech

pytest.importorskip("wyoming_faster_whisper")
pytest.importorskip("wyoming_piper")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(args: list[str], tmp: Path, name: str) -> Iterator[str]:
    port = _free_port()
    uri = f"tcp://127.0.0.1:{port}"
    log = (tmp / f"{name}.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", *args, "--uri", uri],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"{name} exited: {(tmp / f'{name}.log').read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        else:
            pytest.fail(f"{name} did not start in 120 s")
        yield uri
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


@pytest.fixture(scope="module")
def whisper_server(voice_data_dir: Path, tmp_path_factory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("wyoming-whisper")
    model = voice_data_dir / "models" / WHISPER_BASE.folder
    yield from _serve(["wyoming_faster_whisper", "--model", str(model), "--data-dir", str(tmp),
                       "--language", "en", "--compute-type", "int8", "--cpu-threads", "2",
                       "--local-files-only"], tmp, "wyoming-faster-whisper")


@pytest.fixture(scope="module")
def piper_server(voice_data_dir: Path, tmp_path_factory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("wyoming-piper")
    voices = voice_data_dir / "models" / PIPER_VOICE.folder
    yield from _serve(["wyoming_piper", "--voice", "en_US-joe-medium", "--data-dir", str(voices),
                       "--download-dir", str(tmp), "--local-files-only"], tmp, "wyoming-piper")


def test_a_spoken_request_through_wyoming_servers(
    engines, speaker, whisper_server: str, piper_server: str, tmp_path: Path
) -> None:
    remote = VoiceEngines(engines.wake_word, engines.vad,
                          WyomingSpeechToText(whisper_server), WyomingTextToSpeech(piper_server))
    audio = request(piper_speech(speaker, "Hey Jarvis!"),
                    piper_speech(speaker, "Set a timer for five minutes."))
    sink = CollectingSink()
    engines.wake_word.reset()
    with open_node(NodeSettings(data_dir=tmp_path / "node", timezone="Europe/Paris")) as node:
        loop = VoiceLoop(remote, ArraySource(audio), sink, service_responder(node.service))
        exchanges = loop.run(max_exchanges=1)

    assert len(exchanges) == 1 and exchanges[0].woke
    assert "timer" in exchanges[0].heard.lower(), exchanges[0].heard
    assert exchanges[0].reply.commands == ("set_timer",)
    answer = sink.played[-1]
    assert answer.rate == 22_050 and answer.duration > 0.8 and answer.rms() > 0.02


def test_two_sentences_come_back_as_two_pieces(piper_server: str) -> None:
    pieces = list(WyomingTextToSpeech(piper_server).synthesize("Done. The timer rings at ten."))
    assert len(pieces) == 2 and all(p.rms() > 0.02 for p in pieces)


def test_an_unreachable_server_is_a_clear_error(speaker) -> None:
    stt = WyomingSpeechToText(f"tcp://127.0.0.1:{_free_port()}", timeout=5)
    with pytest.raises(WyomingError, match="cannot reach the Wyoming server at tcp://"):
        stt.transcribe(piper_speech(speaker, "Hello."))


class _WakeHandler:
    """A Wyoming wake word server's handler around Jarvis's own openWakeWord detector
    (wyoming-openwakeword pins an older `wyoming` than the speech servers need)."""

    @staticmethod
    def factory():
        from wyoming.audio import AudioChunk
        from wyoming.server import AsyncEventHandler
        from wyoming.wake import Detection

        from jarvis.node.voice.audio import FRAME_BYTES
        from jarvis.node.voice.wake_word import OpenWakeWordDetector

        class Handler(AsyncEventHandler):
            def __init__(self, *args, **kwargs) -> None:
                super().__init__(*args, **kwargs)
                self.detector = OpenWakeWordDetector()

            async def handle_event(self, event) -> bool:
                if AudioChunk.is_type(event.type):
                    audio = AudioChunk.from_event(event).audio
                    for start in range(0, len(audio), FRAME_BYTES):
                        if self.detector.process(audio[start : start + FRAME_BYTES]):
                            await self.write_event(Detection(name="hey_jarvis").event())
                return True

        return Handler


@pytest.fixture(scope="module")
def wake_server(voice_data_dir: Path) -> Iterator[str]:
    import asyncio
    import threading

    from wyoming.server import AsyncServer

    uri = f"tcp://127.0.0.1:{_free_port()}"
    server = AsyncServer.from_uri(uri)
    handler = _WakeHandler.factory()
    loop = asyncio.new_event_loop()
    stopped = asyncio.Event()

    async def serve() -> None:
        await server.start(lambda reader, writer: handler(reader, writer))
        await stopped.wait()
        await server.stop()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    time.sleep(0.5)
    yield uri
    loop.call_soon_threadsafe(stopped.set)
    thread.join(timeout=10)


def test_the_wake_word_from_a_wyoming_server(speaker, wake_server: str) -> None:
    from jarvis.node.voice.wyoming import WyomingWakeWord

    wake = WyomingWakeWord(wake_server)
    try:
        said = request(piper_speech(speaker, "Hey Jarvis!"),
                       piper_speech(speaker, "Set a timer."))
        fired = [wake.process(frame) for frame in said.frames()]
        for _ in range(100):  # the detection arrives a moment after the audio
            if any(fired):
                break
            time.sleep(0.05)
            fired.append(wake.process(bytes(320)))
        assert any(fired)
    finally:
        wake.close()
