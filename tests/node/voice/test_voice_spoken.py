"""Spoken requests end to end with the real engines: wake word, words, command, answer.

Requests are synthesized at test time with Piper and with espeak-ng, some with noise at
10 dB SNR; the node runs the built-in commands' fast path (no center, no LLM). Needs the
prepared voice models (see conftest).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from text_to_num import alpha2digit
from typer.testing import CliRunner
from voice_speech import espeak_speech, piper_speech, request, scaled, with_noise

from jarvis.cli.main import app
from jarvis.node import Node, NodeSettings, open_node
from jarvis.node.voice import (
    ArraySource,
    Audio,
    CollectingSink,
    LoopSettings,
    VoiceLoop,
    read_wav,
    recognition_hint,
    service_responder,
    write_wav,
)
from jarvis.node.voice.wake_word import DEFAULT_SENSITIVITY, WakeWordSettings, load_wake_word

CASES = {
    # name: (voice, noisy, words, command, word expected in the answer)
    "piper-clean-calculate": ("piper", False, "What is eight plus five?", "calculate", "13"),
    "espeak-clean-timer": ("espeak", False, "Set a timer for five minutes.", "set_timer",
                           "5 minutes"),
    "piper-noisy-list": ("piper", True, "Add milk to my shopping list.", "shopping_list",
                         "milk"),
    "espeak-noisy-timer": ("espeak", True, "Set a timer for ten minutes.", "set_timer",
                           "10 minutes"),
}


def _speech(speaker, voice: str, text: str) -> Audio:
    return piper_speech(speaker, text) if voice == "piper" else espeak_speech(text)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    folder = tmp_path_factory.mktemp("voice-node")
    with open_node(NodeSettings(data_dir=folder, timezone="Europe/Paris")) as node:
        yield node


@pytest.fixture(scope="module")
def wake_phrases(speaker, espeak) -> dict[str, Audio]:
    return {"piper": piper_speech(speaker, "Hey Jarvis!"),
            "espeak": espeak_speech("Hey Jarvis!")}


def _exchange(engines, node: Node, audio: Audio):
    engines.wake_word.reset()
    sink = CollectingSink()
    loop = VoiceLoop(engines, ArraySource(audio), sink, service_responder(node.service),
                     settings=LoopSettings(), hint=recognition_hint(node.registry))
    return loop.run(max_exchanges=1), sink


def _words(text: str) -> set[str]:
    """Lower-case words, numbers as digits ("five" and "5" are the same word)."""
    return set(re.findall(r"[a-z0-9]+", alpha2digit(text.lower(), "en")))


@pytest.mark.parametrize("case", list(CASES))
def test_a_spoken_request_runs_the_right_command(
    engines, speaker, node, wake_phrases, case
) -> None:
    voice, noisy, words, command, answer = CASES[case]
    audio = request(wake_phrases[voice], _speech(speaker, voice, words))
    if noisy:
        audio = with_noise(audio, snr_db=10, seed=len(words))

    exchanges, sink = _exchange(engines, node, audio)

    assert len(exchanges) == 1, "no request heard"
    exchange = exchanges[0]
    assert exchange.woke, "wake word not found"
    heard = _words(exchange.heard)
    wanted = _words(words) - {"a", "to", "my", "is", "for"}
    assert len(heard & wanted) >= len(wanted) - 1, exchange.heard
    assert exchange.reply.commands == (command,), exchange.heard
    assert answer in exchange.reply.text
    spoken = sink.audio()
    assert spoken.duration > 0.5 and spoken.rms() > 0.02  # the earcon and a spoken answer


def test_speech_without_the_wake_word_is_not_answered(engines, speaker, node, espeak) -> None:
    sentences = ["What a lovely day it is in the garden.",
                 "Jars of jam are in the cupboard, Harvey.",
                 "I will call you tomorrow about the meeting."]
    audio = Audio.join([request(None, espeak_speech(s)) for s in sentences]
                       + [request(None, piper_speech(speaker, s)) for s in sentences])
    exchanges, _ = _exchange(engines, node, audio)
    assert exchanges == []


@pytest.mark.parametrize("gain_db", [-20, 0])
def test_the_wake_word_is_heard_far_and_near(engines, wake_phrases, gain_db) -> None:
    for voice, phrase in wake_phrases.items():
        engines.wake_word.reset()
        heard = [engines.wake_word.process(f)
                 for f in scaled(request(None, phrase), gain_db).frames()]
        assert any(heard), f"{voice} voice at {gain_db} dB"


@pytest.mark.parametrize("gain_db", [-20, 0])
def test_a_slow_speaker_is_heard_at_the_default_sensitivity(espeak, gain_db) -> None:
    # A slow "hey jarvis" (espeak-ng at 110 words a minute) peaks below the model's own
    # threshold (sensitivity 0.5), within the default's.
    phrase = scaled(request(None, espeak_speech("Hey Jarvis!", "en-us", 110)), gain_db)
    heard = {}
    for sensitivity in (0.5, DEFAULT_SENSITIVITY):
        detector = load_wake_word(WakeWordSettings(sensitivity=sensitivity))
        heard[sensitivity] = any(detector.process(f) for f in phrase.frames())
    assert heard == {0.5: False, DEFAULT_SENSITIVITY: True}


@pytest.mark.parametrize("options", [[], ["--beam", "1"]], ids=["default", "greedy"])
def test_jarvis_listen_answers_a_wav_file_into_a_wav_file(
    options, speaker, wake_phrases, voice_data_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    (data_dir / "models").symlink_to(voice_data_dir / "models")
    wav, out = tmp_path / "request.wav", tmp_path / "reply.wav"
    write_wav(wav, request(wake_phrases["piper"],
                           piper_speech(speaker, "What is eight plus five?")))

    result = CliRunner().invoke(app, ["listen", "--wav", str(wav), "--out", str(out), *options])

    assert result.exit_code == 0, result.output
    assert "13" in result.output
    reply = read_wav(out)
    assert reply.duration > 1.0 and reply.rms() > 0.02


def test_jarvis_listen_refuses_a_file_that_is_not_audio(data_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "request.wav"
    bad.write_text("not audio")
    result = CliRunner().invoke(app, ["listen", "--wav", str(bad)])
    assert result.exit_code == 1 and "not a PCM WAV file" in result.output


def test_a_beam_below_one_is_a_clear_error(
    voice_data_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    (data_dir / "models").symlink_to(voice_data_dir / "models")
    wav = write_wav(tmp_path / "request.wav", Audio.silence(1.0))
    result = CliRunner().invoke(app, ["listen", "--wav", str(wav), "--beam", "0"])
    assert result.exit_code == 1 and "beam size must be 1 or more" in result.output


def test_jarvis_say_writes_speech(voice_data_dir: Path, data_dir: Path, tmp_path: Path) -> None:
    (data_dir / "models").symlink_to(voice_data_dir / "models")
    out = tmp_path / "hello.wav"
    result = CliRunner().invoke(app, ["say", "Hello, I am Jarvis.", "--out", str(out)])
    assert result.exit_code == 0, result.output
    audio = read_wav(out)
    assert audio.rate == 22_050 and audio.duration > 0.8 and audio.rms() > 0.02


def test_a_missing_model_names_the_command_that_prepares_it(data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["say", "Hello", "--out", "x.wav"])
    assert result.exit_code == 1
    assert "jarvis model prepare --voice" in result.output


def test_a_silent_file_is_a_clear_error(
    voice_data_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    (data_dir / "models").symlink_to(voice_data_dir / "models")
    wav = write_wav(tmp_path / "quiet.wav", Audio.silence(3.0))
    result = CliRunner().invoke(app, ["listen", "--wav", str(wav)])
    assert result.exit_code == 1 and "no speech found" in result.output


def test_a_microphone_that_is_not_there_is_a_clear_error(data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["listen", "--input-device", "9999"])
    assert result.exit_code == 1
    assert "jarvis listen --devices" in result.output or "libportaudio2" in result.output


def test_the_short_window_hears_what_the_full_window_hears(
    engines, speaker, voice_data_dir: Path
) -> None:
    from jarvis.node.voice.stt import WhisperSettings, WhisperSpeechToText

    full = WhisperSpeechToText(WhisperSettings(short_window=False), voice_data_dir)
    for text in ("Set a timer for five minutes.", "What is eight plus five?"):
        audio = piper_speech(speaker, text)
        short_heard = _words(engines.stt.transcribe(audio))
        assert short_heard == _words(full.transcribe(audio)) == _words(text)
