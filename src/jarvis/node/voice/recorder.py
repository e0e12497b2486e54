"""Cutting one spoken request out of a stream: from the first speech to a pause.

The recorder is fed 10 ms frames with their speech probability (from a `VoiceActivity`
engine, which the loop keeps warm on every frame) and answers when the request is over: after
`end_silence` seconds without speech, at `max_seconds`, or, when nobody starts speaking
within `start_timeout` seconds, with no audio at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jarvis.node.voice.audio import FRAME_SAMPLES, SAMPLE_RATE, Audio

__all__ = ["RecorderSettings", "Recording", "UtteranceRecorder"]

_FRAME_S = FRAME_SAMPLES / SAMPLE_RATE


@dataclass(frozen=True)
class RecorderSettings:
    speech_threshold: float = 0.5
    end_silence: float = 0.5  # a pause this long ends the request
    max_seconds: float = 15.0
    start_timeout: float = 6.0
    lead_in: float = 0.3  # audio kept from before the first speech frame

    def __post_init__(self) -> None:
        if self.max_seconds <= 0 or self.end_silence <= 0 or self.start_timeout <= 0:
            raise ValueError("recorder times must be positive")


@dataclass
class Recording:
    """What one request sounded like, and how it ended."""

    audio: Audio
    heard_speech: bool
    truncated: bool = False  # cut at `max_seconds`
    trailing_silence: float = 0.0  # seconds between the end of speech and the decision
    frames: list[bytes] = field(default_factory=list, repr=False)


class UtteranceRecorder:
    """Feed frames with `feed`; it returns a `Recording` once the request is over."""

    def __init__(self, settings: RecorderSettings | None = None) -> None:
        self.settings = settings or RecorderSettings()
        self.reset()

    def reset(self) -> None:
        self._frames: list[bytes] = []
        self._speech_frames = 0
        self._silent_run = 0
        self._started_at: int | None = None

    def feed(self, frame: bytes, speech_probability: float) -> Recording | None:
        """One frame and what the voice activity detector said of it."""
        s = self.settings
        self._frames.append(frame)
        speech = speech_probability >= s.speech_threshold
        if self._started_at is None:
            if speech:
                self._started_at = max(0, len(self._frames) - 1 - round(s.lead_in / _FRAME_S))
                self._speech_frames = 1
            elif len(self._frames) * _FRAME_S >= s.start_timeout:
                return self._done(heard=False)
            return None
        if speech:
            self._speech_frames += 1
            self._silent_run = 0
        else:
            self._silent_run += 1
        length = (len(self._frames) - self._started_at) * _FRAME_S
        if self._silent_run * _FRAME_S >= s.end_silence:
            # A lone click or breath is not a request: start waiting again.
            if self._speech_frames * _FRAME_S < 0.15:
                self._started_at, self._speech_frames, self._silent_run = None, 0, 0
                return None
            return self._done(heard=True)
        if length >= s.max_seconds:
            return self._done(heard=True, truncated=True)
        return None

    @property
    def pause(self) -> float:
        """Seconds without speech since a request began (0 while speaking or before it)."""
        return self._silent_run * _FRAME_S if self._started_at is not None else 0.0

    def so_far(self) -> Audio:
        """The request as heard up to now, from its lead-in."""
        start = self._started_at if self._started_at is not None else len(self._frames)
        return Audio.from_bytes(b"".join(self._frames[start:]))

    def finish(self) -> Recording:
        """The source ended: what was heard so far."""
        return self._done(heard=self._started_at is not None)

    def _done(self, *, heard: bool, truncated: bool = False) -> Recording:
        frames = self._frames[self._started_at :] if heard and self._started_at is not None else []
        recording = Recording(
            audio=Audio.from_bytes(b"".join(frames)),
            heard_speech=heard,
            truncated=truncated,
            trailing_silence=self._silent_run * _FRAME_S,
            frames=frames,
        )
        self.reset()
        return recording
