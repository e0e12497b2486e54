"""The voice loop with stand-in engines: wake word, follow-ups, questions and barge-in."""

from __future__ import annotations

from voice_standins import LoudnessVad, MarkWakeWord, PacedSink, ScriptedStt, ToneTts, sound

from jarvis.node.voice import ArraySource, Audio, CollectingSink, LoopSettings, Reply, VoiceLoop
from jarvis.node.voice.engines import VoiceEngines
from jarvis.node.voice.recorder import RecorderSettings


def _loop(audio: Audio, texts: list[str], respond, paced: bool = False, **settings):
    source = ArraySource(audio)
    sink = PacedSink(source) if paced else CollectingSink()
    engines = VoiceEngines(MarkWakeWord(), LoudnessVad(), ScriptedStt(texts), ToneTts())
    events: list[tuple[str, str]] = []
    loop = VoiceLoop(
        engines, source, sink, respond,
        settings=LoopSettings(recorder=RecorderSettings(end_silence=0.3, start_timeout=2.0),
                              **settings),
        on_event=lambda kind, detail: events.append((kind, detail)),
    )
    return loop, sink, events


def test_wake_word_then_request_then_spoken_answer() -> None:
    asked: list[str] = []

    def respond(text, ask, say):
        asked.append(text)
        return Reply("Timer set", commands=("set_timer",))

    audio = sound(("silence", 1), ("speech", 1), ("silence", 1),  # speech before: ignored
                  ("wake", 0.5), ("silence", 0.3), ("speech", 1.2), ("silence", 1))
    loop, sink, events = _loop(audio, ["set a timer"], respond)

    exchanges = loop.run()

    assert asked == ["set a timer"] and len(exchanges) == 1
    assert exchanges[0].woke and exchanges[0].reply.commands == ("set_timer",)
    assert 1.2 <= loop.engines.stt.heard[0] <= 1.2 + 0.3 + 0.3 + 0.05  # lead-in + pause
    assert len(sink.played) == 2  # the earcon, then the answer
    assert "first_audio_s" in exchanges[0].timings
    assert [kind for kind, _ in events] == ["wake", "heard", "reply"]


def test_a_follow_up_is_heard_without_the_wake_word_and_only_then() -> None:
    replies = iter([Reply("For how long?", follow_up=True), Reply("Set."), Reply("never")])

    def respond(text, ask, say):
        return next(replies)

    audio = sound(("wake", 0.5), ("silence", 0.3), ("speech", 1), ("silence", 1),
                  ("speech", 0.8), ("silence", 1),   # the follow-up
                  ("speech", 0.8), ("silence", 1))   # no wake word, no follow-up: ignored
    loop, _, _ = _loop(audio, ["set a timer", "five minutes", "nope"], respond)

    exchanges = loop.run()

    assert [e.heard for e in exchanges] == ["set a timer", "five minutes"]
    assert [e.woke for e in exchanges] == [True, False]


def test_a_validation_question_is_spoken_and_answered_by_voice() -> None:
    def respond(text, ask, say):
        city = ask("Which city?")
        return Reply(f"Weather in {city}.")

    audio = sound(("wake", 0.5), ("silence", 0.3), ("speech", 1), ("silence", 1),
                  ("speech", 0.6), ("silence", 1))
    loop, _, events = _loop(audio, ["what's the weather", "Paris"], respond)

    exchanges = loop.run()

    assert exchanges[0].reply.text == "Weather in Paris."
    assert ("question", "Which city?") in events


def test_the_wake_word_during_an_answer_stops_it() -> None:
    def respond(text, ask, say):
        return Reply("A long answer. " * 20 if text == "tell me a story" else "Stopped.")

    audio = sound(("wake", 0.5), ("silence", 0.3), ("speech", 1), ("silence", 1.5),
                  ("wake", 0.5), ("silence", 0.5), ("speech", 1), ("silence", 8))
    loop, sink, events = _loop(audio, ["tell me a story", "stop"], respond, paced=True)

    exchanges = loop.run()

    assert [e.heard for e in exchanges] == ["tell me a story", "stop"]
    assert exchanges[0].barged_in and not exchanges[1].barged_in
    assert sink.stopped == 1
    assert ("barge_in", "") in events


def test_silence_after_the_wake_word_asks_nothing() -> None:
    audio = sound(("wake", 0.5), ("silence", 3))
    loop, _, events = _loop(audio, [], lambda text, ask, say: Reply("no"))
    assert loop.run() == []
    assert ("silence", "") in events


def test_a_file_request_may_start_with_the_wake_word_or_not() -> None:
    heard: list[str] = []

    def respond(text, ask, say):
        heard.append(text)
        return Reply("ok")

    for audio in (sound(("wake", 0.5), ("silence", 0.2), ("speech", 1), ("silence", 1)),
                  sound(("speech", 1), ("silence", 1))):
        loop, _, _ = _loop(audio, ["roll a die"], respond, wake_word="optional", earcon=False)
        exchanges = loop.run(max_exchanges=1)
        assert len(exchanges) == 1
        assert loop.engines.stt.heard[0] < 1.7  # the wake phrase is not part of the request
    assert heard == ["roll a die", "roll a die"]


def test_a_streamed_answer_is_spoken_sentence_by_sentence_as_it_arrives() -> None:
    queued_before_the_end: list[int] = []

    def respond(text, ask, say):
        say("First.")
        queued_before_the_end.append(len(sink.played))  # already queued for the speaker
        say("Second.")
        return Reply("First. Second.")

    audio = sound(("wake", 0.5), ("silence", 0.3), ("speech", 1), ("silence", 1))
    loop, sink, events = _loop(audio, ["tell me"], respond)

    exchanges = loop.run()

    assert queued_before_the_end == [2]  # the earcon and the first sentence
    assert len(sink.played) == 3  # the whole answer is not spoken again
    assert [d for k, d in events if k == "sentence"] == ["First.", "Second."]
    assert "first_audio_s" in exchanges[0].timings


class _LengthStt:
    """Says how long the audio it was given lasted, e.g. "1.60"."""

    def transcribe(self, audio: Audio, hint: str | None = None) -> str:
        return f"{audio.duration:.2f}"


def _heard_length(audio: Audio, after: float | None) -> float:
    engines = VoiceEngines(MarkWakeWord(), LoudnessVad(), _LengthStt(), ToneTts())
    settings = LoopSettings(recorder=RecorderSettings(end_silence=0.5, lead_in=0.3),
                            early_transcript_after=after)
    loop = VoiceLoop(engines, ArraySource(audio), CollectingSink(),
                     lambda text, ask, say: Reply("ok"), settings=settings)
    (exchange,) = loop.run(max_exchanges=1)
    return float(exchange.heard)


def test_the_request_is_transcribed_during_the_pause_that_ends_it() -> None:
    audio = sound(("wake", 0.5), ("silence", 0.4), ("speech", 1.0), ("silence", 1.5))

    # lead-in 0.3 s + speech 1.0 s + the pause so far: 0.15 s early, 0.5 s at the end
    assert abs(_heard_length(audio, after=0.15) - 1.45) < 0.03
    assert abs(_heard_length(audio, after=None) - 1.8) < 0.03


def test_speech_after_a_short_pause_drops_the_early_transcript() -> None:
    audio = sound(("wake", 0.5), ("silence", 0.4), ("speech", 1.0), ("silence", 0.3),
                  ("speech", 0.6), ("silence", 1.5))

    # the whole request, both parts (0.3 + 1.0 + 0.3 + 0.6) and 0.15 s of the final pause
    assert abs(_heard_length(audio, after=0.15) - 2.35) < 0.03
