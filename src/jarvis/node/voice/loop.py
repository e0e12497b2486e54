"""The voice loop: wake word, earcon, request, text path, spoken answer, follow-ups.

`VoiceLoop` reads 10 ms frames from an `AudioSource` and plays through an `AudioSink`, so
the same loop serves a microphone and speaker, a WAV file (`jarvis listen --wav`) and the
tests. Every frame goes through the voice activity detector (kept warm, so the first
syllable after the wake word is not lost) and, while waiting or speaking, the wake word
detector: "hey jarvis" during an answer stops it (barge-in) and starts a new request.

What is said is answered by a `Responder`: text in, `Reply` out. It may ask the user
something on the way (a validation question) through the `ask` function it is given,
which speaks the question and listens again without the wake word, and may hand the
answer over sentence by sentence through `say` while it is still being written (a
streamed turn): each sentence is synthesized and queued at once, so Jarvis starts
speaking before the answer is complete. An answer never given to `say` is spoken whole.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from jarvis.node.voice.audio import FRAME_BYTES, FRAME_SAMPLES, SAMPLE_RATE
from jarvis.node.voice.earcon import earcon
from jarvis.node.voice.early_transcript import EarlyTranscript
from jarvis.node.voice.engines import VoiceEngines
from jarvis.node.voice.interfaces import AudioSink, AudioSource
from jarvis.node.voice.recorder import RecorderSettings, Recording, UtteranceRecorder
from jarvis.node.voice.transcript import tidy_transcript

__all__ = ["Ask", "Exchange", "LoopSettings", "Reply", "Responder", "Say", "VoiceLoop"]

NOT_HEARD = "Sorry, I did not catch that."
_WARM_UP_S = 1.0
_WAKE_TAIL_S = 0.6
_WAKE_PAUSE_S = 0.1
FRAME_S = FRAME_SAMPLES / SAMPLE_RATE


@dataclass(frozen=True)
class Reply:
    """The answer to speak; `follow_up` listens again without the wake word."""

    text: str
    follow_up: bool = False
    commands: tuple[str, ...] = ()  # the commands that ran, for logs and tests


Ask = Callable[[str], str | None]
Say = Callable[[str], None]
Responder = Callable[[str, Ask, Say], Reply]
EventHandler = Callable[[str, str], None]


@dataclass(frozen=True)
class LoopSettings:
    recorder: RecorderSettings = field(default_factory=RecorderSettings)
    # required: wait for it; optional: a request may start with it (files); off: never.
    wake_word: Literal["required", "optional", "off"] = "required"
    barge_in: bool = True
    earcon: bool = True
    # Seconds of pause after which speech-to-text starts while the recorder waits for the
    # request's end (see early_transcript); None: only once the request has ended.
    early_transcript_after: float | None = 0.2


@dataclass
class Exchange:
    """One request and its answer, with what it cost."""

    heard: str
    reply: Reply
    woke: bool
    recording: Recording
    barged_in: bool = False
    # seconds: speech-to-text, text path, and end of speech -> first reply audio queued
    timings: dict[str, float] = field(default_factory=dict)


class VoiceLoop:
    def __init__(
        self,
        engines: VoiceEngines,
        source: AudioSource,
        sink: AudioSink,
        respond: Responder,
        *,
        settings: LoopSettings | None = None,
        hint: str | None = None,
        on_event: EventHandler | None = None,
    ) -> None:
        self.engines = engines
        self.source = source
        self.sink = sink
        self.respond = respond
        self.settings = settings or LoopSettings()
        self.hint = hint
        self._transcripts = EarlyTranscript(engines.stt, hint,
                                            self.settings.early_transcript_after)
        self._emit = on_event or (lambda _kind, _detail: None)
        self._ended = False
        self._announcements: queue.Queue[str] = queue.Queue()

    # --- public -------------------------------------------------------------------------------
    def announce(self, text: str) -> None:
        """Speak `text` when the loop is next idle (safe from other threads: timers ringing)."""
        self._announcements.put(text)

    def run(self, max_exchanges: int | None = None) -> list[Exchange]:
        """Serve requests until the source ends or `max_exchanges` were answered."""
        exchanges: list[Exchange] = []
        listening_on = False  # True: record at once (follow-up, barge-in)
        self._warm_up()
        while not self._ended and (max_exchanges is None or len(exchanges) < max_exchanges):
            woke = False
            if not listening_on and self.settings.wake_word == "required":
                if not self._wait_for_wake_word():
                    break
                woke = True
                self._chime()
            recording, woke_in_request = self._record(
                watch_wake_word=self.settings.wake_word == "optional" and not listening_on
            )
            if not recording.heard_speech:
                self._emit("silence", "")
                listening_on = False
                continue
            exchange = self._exchange(recording, woke or woke_in_request)
            exchanges.append(exchange)
            listening_on = exchange.barged_in or exchange.reply.follow_up
            if listening_on:
                self._chime()  # listening again, without the wake word
        return exchanges

    def ask(self, question: str) -> str | None:
        """Speak `question` and return the answer heard (None when nothing was said)."""
        self._emit("question", question)
        self.speak(question)
        self._chime()
        recording, _ = self._record(watch_wake_word=False)
        if not recording.heard_speech:
            self._emit("silence", "")
            return None
        text = tidy_transcript(self._transcripts.take(recording))
        self._emit("heard", text)
        return text or None

    def speak(self, text: str) -> tuple[bool, float | None]:
        """Play `text` sentence by sentence; (barged in?, when the first audio was queued)."""
        first = self._queue(text)
        return self._wait_while_playing(), first

    def _queue(self, text: str) -> float | None:
        """Synthesize `text` into the sink; when its first audio was queued (None: silent)."""
        first: float | None = None
        for piece in self.engines.tts.synthesize(text):
            if first is None:
                first = time.perf_counter()
            self.sink.play(piece)
        return first

    # --- steps -------------------------------------------------------------------------------
    def _exchange(self, recording: Recording, woke: bool) -> Exchange:
        decided = time.perf_counter()
        if recording.truncated:
            self._emit("truncated", f"{recording.audio.duration:.1f} s")
        heard = tidy_transcript(self._transcripts.take(recording))
        transcribed = time.perf_counter()
        self._emit("heard", heard)
        firsts: list[float | None] = []

        def say(sentence: str) -> None:
            self._emit("sentence", sentence)
            firsts.append(self._queue(sentence))

        reply = self.respond(heard, self.ask, say) if heard else Reply(NOT_HEARD)
        answered = time.perf_counter()
        self._emit("reply", reply.text)
        if not firsts and reply.text:
            firsts.append(self._queue(reply.text))
        first = next((t for t in firsts if t is not None), None)
        barged_in = self._wait_while_playing()
        timings = {"stt_s": transcribed - decided, "respond_s": answered - transcribed}
        if first is not None:
            timings["first_audio_s"] = first - decided + recording.trailing_silence
        if barged_in:
            self._emit("barge_in", "")
        return Exchange(heard, reply, woke, recording, barged_in, timings)

    def _next(self, watch_wake_word: bool) -> tuple[bytes, float, bool] | None:
        """The next frame, its speech probability, and whether the wake word just ended."""
        frame = self.source.read()
        if frame is None:
            self._ended = True
            return None
        probability = self.engines.vad.speech_probability(frame)
        woke = watch_wake_word and self.engines.wake_word.process(frame)
        return frame, probability, woke

    def _wait_for_wake_word(self) -> bool:
        self.engines.wake_word.reset()
        while True:
            self._speak_announcements()
            step = self._next(watch_wake_word=True)
            if step is None:
                return False
            if step[2]:
                self._emit("wake", self.engines.wake_word.phrase)
                self._skip_rest_of_wake_phrase()
                return True

    def _skip_rest_of_wake_phrase(self) -> None:
        """The detector fires before the phrase is quite over ("hey jarv|is"): drop the
        frames until a short pause, so the tail is not taken for the request (at most
        `_WAKE_TAIL_S`, for people who run the request on without a pause)."""
        silent = 0
        threshold = self.settings.recorder.speech_threshold
        for _ in range(round(_WAKE_TAIL_S / FRAME_S)):
            step = self._next(watch_wake_word=False)
            if step is None:
                return
            silent = 0 if step[1] >= threshold else silent + 1
            if silent * FRAME_S >= _WAKE_PAUSE_S:
                return

    def _record(self, *, watch_wake_word: bool) -> tuple[Recording, bool]:
        recorder = UtteranceRecorder(self.settings.recorder)
        woke = False
        while True:
            step = self._next(watch_wake_word)
            if step is None:
                return recorder.finish(), woke
            frame, probability, heard_wake_word = step
            if heard_wake_word:
                # The request starts after the wake word: drop the wake phrase itself.
                woke = True
                self._emit("wake", self.engines.wake_word.phrase)
                self._skip_rest_of_wake_phrase()
                recorder.reset()
                continue
            recording = recorder.feed(frame, probability)
            if recording is not None:
                return recording, woke
            self._transcripts.watch(recorder)

    def _warm_up(self) -> None:
        """The detectors need about 0.75 s of audio before they answer; give them silence,
        so that a file starting with speech is heard from its first word."""
        silence = bytes(FRAME_BYTES)
        for _ in range(round(_WARM_UP_S / FRAME_S)):
            self.engines.vad.speech_probability(silence)
            self.engines.wake_word.process(silence)

    def _chime(self) -> None:
        if self.settings.earcon:
            self.sink.play(earcon())
            self._wait_while_playing(watch_wake_word=False)

    def _wait_while_playing(self, watch_wake_word: bool | None = None) -> bool:
        """Keep reading (and listening for the wake word) until playback ends; True on
        barge-in. The frames heard meanwhile are the speaker's own echo: dropped."""
        watch = self.settings.barge_in if watch_wake_word is None else watch_wake_word
        if watch:
            self.engines.wake_word.reset()
        while self.sink.playing():
            step = self._next(watch)
            if step is None:
                return False
            if step[2]:
                self.sink.stop()
                self._emit("wake", self.engines.wake_word.phrase)
                return True
        return False

    def _speak_announcements(self) -> None:
        while True:
            try:
                text = self._announcements.get_nowait()
            except queue.Empty:
                return
            self._emit("announce", text)
            self.speak(text)

