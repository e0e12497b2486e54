"""Transcribing a request during the pause that ends it.

A request is over after `RecorderSettings.end_silence` without speech (half a second), and
most pauses that long are the end. So once the speaker has been silent for
`LoopSettings.early_transcript_after`, speech-to-text starts on a worker thread while the
recorder goes on listening: when the request ends without another word, that transcript
is the answer and the pause has hidden most of its cost; when speech resumes, it is
dropped and the whole request is transcribed later. Every transcription runs on the same
single worker, so an engine is never asked two things at once.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from jarvis.node.voice.interfaces import SpeechToText
from jarvis.node.voice.recorder import Recording, UtteranceRecorder

__all__ = ["EarlyTranscript"]


class EarlyTranscript:
    """`watch` the recorder after every frame; `take` the transcript of the recording."""

    def __init__(self, stt: SpeechToText, hint: str | None, after: float | None) -> None:
        self._stt = stt
        self._hint = hint
        self._after = after  # seconds of pause before starting; None: never early
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jarvis-stt")
        self._pending: Future[str] | None = None

    def watch(self, recorder: UtteranceRecorder) -> None:
        """Start on a long enough pause; forget the early transcript when speech resumes."""
        pause = recorder.pause
        if pause == 0.0:
            self._pending = None  # a transcription under way finishes unread
        elif self._pending is None and self._after is not None and pause >= self._after:
            self._pending = self._worker.submit(self._stt.transcribe, recorder.so_far(),
                                                self._hint)

    def take(self, recording: Recording) -> str:
        """The words of `recording`: the early transcript when nothing was said after it."""
        pending, self._pending = self._pending, None
        if pending is None:
            pending = self._worker.submit(self._stt.transcribe, recording.audio, self._hint)
        return pending.result()
