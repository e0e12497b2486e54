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
    engines, whisper_server: str, piper_server: str, tmp_path: Path
) -> None:
    remote = VoiceEngines(engines.wake_word, engines.vad,
                          WyomingSpeechToText(whisper_server), WyomingTextToSpeech(piper_server))
    audio = request(piper_speech(engines.tts, "Hey Jarvis!"),
                    piper_speech(engines.tts, "Set a timer for five minutes."))
    sink = CollectingSink()
    engines.wake_word.reset()
    with open_node(NodeSettings(data_dir=tmp_path / "node", timezone="Europe/Paris")) as node:
        loop = VoiceLoop(remote, ArraySource(audio), sink, service_responder(node.service))
        exchanges = loop.run(max_exchanges=1)

    assert len(exchanges) == 1 and exchanges[0].woke
    assert "timer" in exchanges[0].heard.lower()
    assert exchanges[0].reply.commands == ("set_timer",)
    answer = sink.played[-1]
    assert answer.rate == 22_050 and answer.duration > 0.8 and answer.rms() > 0.02


def test_two_sentences_come_back_as_two_pieces(piper_server: str) -> None:
    pieces = list(WyomingTextToSpeech(piper_server).synthesize("Done. The timer rings at ten."))
    assert len(pieces) == 2 and all(p.rms() > 0.02 for p in pieces)


def test_an_unreachable_server_is_a_clear_error(engines) -> None:
    stt = WyomingSpeechToText(f"tcp://127.0.0.1:{_free_port()}", timeout=5)
    with pytest.raises(WyomingError, match="cannot reach the Wyoming server at tcp://"):
        stt.transcribe(piper_speech(engines.tts, "Hello."))
