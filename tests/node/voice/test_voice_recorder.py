"""Cutting a request out of a stream of frames (speech probabilities given directly)."""

from __future__ import annotations

from jarvis.node.voice.audio import FRAME_BYTES
from jarvis.node.voice.recorder import RecorderSettings, UtteranceRecorder

FRAME = bytes(FRAME_BYTES)


def _feed(recorder: UtteranceRecorder, pattern: str):
    """'#' a speech frame, '.' a silent one; the recording, and after how many frames."""
    for count, mark in enumerate(pattern, start=1):
        done = recorder.feed(FRAME, 1.0 if mark == "#" else 0.0)
        if done is not None:
            return done, count
    return None, len(pattern)


def test_a_pause_ends_the_request_and_keeps_a_lead_in() -> None:
    recorder = UtteranceRecorder(RecorderSettings(end_silence=0.3, lead_in=0.1))
    recording, after = _feed(recorder, "." * 50 + "#" * 100 + "." * 100)
    assert recording is not None and recording.heard_speech and not recording.truncated
    assert after == 50 + 100 + 30
    assert recording.audio.duration == (10 + 100 + 30) / 100
    assert recording.trailing_silence == 0.3


def test_a_request_longer_than_the_maximum_is_cut() -> None:
    recorder = UtteranceRecorder(RecorderSettings(max_seconds=2.0, lead_in=0.0))
    recording, after = _feed(recorder, "#" * 500)
    assert recording is not None and recording.truncated and after == 200


def test_nobody_speaking_times_out_with_no_audio() -> None:
    recorder = UtteranceRecorder(RecorderSettings(start_timeout=1.0))
    recording, after = _feed(recorder, "." * 300)
    assert recording is not None and not recording.heard_speech and after == 100
    assert recording.audio.duration == 0


def test_a_click_is_not_a_request() -> None:
    recorder = UtteranceRecorder(RecorderSettings(end_silence=0.3, start_timeout=5.0))
    recording, _ = _feed(recorder, "##" + "." * 60)
    assert recording is None
    recording, _ = _feed(recorder, "#" * 40 + "." * 40)
    assert recording is not None and recording.heard_speech
