"""The node's voice on 2 cores: recognition, routing from speech, wake word, latency, memory.

    .venv/bin/python bench/voice.py            # short run (a few minutes)
    .venv/bin/python bench/voice.py --full     # 150 commands, 1 hour of non-wake speech
    .venv/bin/python bench/voice.py --commands 40 --false-accept-minutes 10
    .venv/bin/python bench/voice.py --center http://127.0.0.1:8000 --key jnk_...  # LLM too

Spoken commands are texts from the built-in commands' examples and bench/corpus (lines
with a tool; the deliberately misheard `asr_mixed` file is left out). Each is synthesized
with two voices (Piper `en_US-joe-medium`, espeak-ng `en-us`), clean and with noise at
10 dB SNR, preceded by "hey jarvis", and fed in real time (as a microphone would, so
speech-to-text started during the closing pause overlaps it) through the real
`VoiceLoop`: wake word, voice activity, Whisper base, the node's text path, Piper for the
answer. By default only the fast path runs (the center URL is a closed port, so nothing
reaches an LLM); with `--center URL` (a running `jarvis serve`, best with
`rate_limit_per_minute=0`) the other commands go to that center and their latency is
printed apart.

Printed: word error rate (after Whisper's English normalizer, as Whisper's own evaluation
counts it; the count without it, numbers compared as digits, follows), the share of
commands the fast path runs right from speech against the same texts typed, wake-word
detection at three levels (0, -10, -20 dB: near to far) for both wake-word engines, false
accepts on speech without the wake word (with noise), end of speech -> first reply audio
(p50, fast-path commands), and the resident memory of a process listening (wake word +
VAD only).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "node" / "voice"))  # the test's speech helpers

from rapidfuzz.distance import Levenshtein  # noqa: E402
from text_to_num import alpha2digit  # noqa: E402
from voice_speech import (  # noqa: E402
    espeak_available,
    espeak_speech,
    piper_speech,
    request,
    scaled,
    with_noise,
)
from whisper_normalizer.english import EnglishTextNormalizer  # noqa: E402

from jarvis.node.voice import Audio  # noqa: E402

CORPUS = ROOT / "bench" / "corpus"
LEVELS_DB = (0, -10, -20)
ESPEAK_WAKE = [("en-us", 140), ("en-us", 170), ("en-us+f2", 150), ("en-us+m3", 150)]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_NORMALIZE = EnglishTextNormalizer()


def _words(text: str) -> list[str]:
    """Words as speech recognition is scored: Whisper's English normalizer ("what's" and
    "what is", "20%" and "twenty percent", "yoghurt" and "yogurt" are one)."""
    return _NORMALIZE(text).split()


def _plain_words(text: str) -> list[str]:
    """Words as this bench counted them before it used the normalizer (numbers as digits)."""
    return re.findall(r"[a-z0-9]+", alpha2digit(text.lower().replace("-", " "), "en"))


@dataclasses.dataclass
class WordErrors:
    """Word errors over many requests, counted both ways (`_words` and `_plain_words`)."""

    errors: int = 0
    total: int = 0
    plain_errors: int = 0
    plain_total: int = 0

    def add(self, said: str, heard: str) -> None:
        reference, plain = _words(said), _plain_words(said)
        self.errors += Levenshtein.distance(reference, _words(heard))
        self.total += len(reference)
        self.plain_errors += Levenshtein.distance(plain, _plain_words(heard))
        self.plain_total += len(plain)

    def rates(self) -> dict[str, float]:
        return {"wer": self.errors / max(1, self.total),
                "plain_wer": self.plain_errors / max(1, self.plain_total)}


def commands_to_say(registry, count: int, seed: int = 7) -> list[tuple[str, str]]:
    """(text, expected tool) pairs: the node's commands' examples and corpus lines, shuffled."""
    pairs = [(e.voice_command, c.command_name) for c in registry for e in c.examples]
    for path in sorted(CORPUS.glob("*.yaml")):
        if path.stem == "asr_mixed":
            continue
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            if entry.get("tool"):
                pairs.append((entry["utterance"], entry["tool"]))
    unique = list(dict.fromkeys(pairs))
    random.Random(seed).shuffle(unique)
    return unique[:count]


def non_wake_sentences() -> list[str]:
    """Everyday speech without the wake word: the corpus lines with no tool, and others."""
    lines = []
    for path in sorted(CORPUS.glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            text = entry["utterance"]
            if "jarvis" not in text.lower():
                lines.append(text)
    return lines


class RealTimeSource:
    """Frames at the pace a microphone gives them, so the speech-to-text started during a
    request's closing pause overlaps it as it would in a room."""

    def __init__(self, audio: Audio) -> None:
        from jarvis.node.voice import ArraySource
        from jarvis.node.voice.audio import FRAME_SAMPLES, SAMPLE_RATE

        self._frames = ArraySource(audio)
        self._frame_s = FRAME_SAMPLES / SAMPLE_RATE
        self._start = time.perf_counter()

    def read(self) -> bytes | None:
        due = self._start + self._frames.position * self._frame_s
        time.sleep(max(0.0, due - time.perf_counter()))
        return self._frames.read()

    def close(self) -> None:
        self._frames.close()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def bench_commands(engines, node, texts, conditions, verbose=False, use_hint=True,
                   early: bool = True) -> dict:
    from jarvis.node.voice import (
        CollectingSink,
        LoopSettings,
        VoiceLoop,
        recognition_hint,
        service_responder,
    )

    hint = recognition_hint(node.registry) if use_hint else None
    settings = LoopSettings() if early else LoopSettings(early_transcript_after=None)
    responder = service_responder(node.service)
    # What the same texts do typed: the tool the fast path runs (None: it would go to the center)
    typed, fast = {}, set()
    for text, _ in texts:
        result = node.service.process_voice_command(text) if _fast(node, text) else None
        if result is None:
            reply = responder(text, lambda _q: None, lambda _s: None)
            typed[text] = reply.commands[0] if reply.commands else None
        else:
            typed[text] = result.tool_calls[0].name if result.tool_calls else None
            fast.add(text)
    wakes = {"piper": piper_speech(engines.tts, "Hey Jarvis!"),
             "espeak": espeak_speech("Hey Jarvis!")}
    rows = {}
    latencies: list[float] = []
    center_latencies: list[float] = []
    parts: dict[str, list[float]] = {"pause": [], "stt": [], "answer": []}
    for voice, snr in conditions:
        counted, woke, right = WordErrors(), 0, 0
        for index, (text, expected) in enumerate(texts):
            said = piper_speech(engines.tts, text) if voice == "piper" else espeak_speech(text)
            audio = request(wakes[voice], said)
            if snr is not None:
                audio = with_noise(audio, snr, seed=index)
            engines.wake_word.reset()
            loop = VoiceLoop(engines, RealTimeSource(audio), CollectingSink(), responder,
                             settings=settings, hint=hint)
            exchanges = loop.run(max_exchanges=1)
            heard = exchanges[0].heard if exchanges else ""
            if verbose:
                print(f"  {voice} {snr}: {text!r} -> {heard!r}", file=sys.stderr)
            counted.add(text, heard)
            if exchanges:
                woke += exchanges[0].woke
                ran = exchanges[0].reply.commands[0] if exchanges[0].reply.commands else None
                right += typed[text] == expected and ran == expected
                timing = exchanges[0].timings.get("first_audio_s")
                if ran is not None and timing is not None:
                    local = ran == typed[text] and text in fast
                    (latencies if local else center_latencies).append(timing)
                    if local:
                        t = exchanges[0].timings
                        parts["pause"].append(exchanges[0].recording.trailing_silence)
                        parts["stt"].append(t["stt_s"])
                        parts["answer"].append(timing - t["stt_s"] - parts["pause"][-1])
        rows[(voice, snr)] = {**counted.rates(), "right": right, "woke": woke}
    typed_right = sum(typed[t] == e for t, e in texts)
    return {"rows": rows, "typed_right": typed_right, "latencies": latencies,
            "center_latencies": center_latencies, "parts": parts}


def _fast(node, text: str) -> bool:
    """True when some command's `pre_route` takes `text` (the node's fast path)."""
    return any(command.pre_route(text) is not None for command in node.registry)


def bench_wake_word(engines, false_accept_minutes: float, seed: int = 3) -> dict:
    from jarvis.node.voice.wake_word import WakeWordSettings, load_wake_word

    phrases = [("piper", piper_speech(engines.tts, "Hey Jarvis!")) for _ in range(4)]
    phrases += [("espeak", espeak_speech("Hey Jarvis!", v, s)) for v, s in ESPEAK_WAKE]
    result: dict = {}
    sentences = non_wake_sentences()
    random.Random(seed).shuffle(sentences)
    negatives: list[Audio] = []
    seconds = 0.0
    for index, sentence in enumerate(sentences * 50):
        if seconds >= false_accept_minutes * 60:
            break
        said = piper_speech(engines.tts, sentence) if index % 2 else espeak_speech(sentence)
        negatives.append(with_noise(Audio.join([said, Audio.silence(0.3)]), 15, seed=index))
        seconds += negatives[-1].duration
    for engine in ("openwakeword", "microwakeword"):
        detected = {level: 0 for level in LEVELS_DB}
        for level in LEVELS_DB:
            for _, phrase in phrases:
                detector = load_wake_word(WakeWordSettings(engine=engine))
                audio = with_noise(scaled(request(None, phrase), level), 20)
                detected[level] += any(detector.process(f) for f in audio.frames())
        detector = load_wake_word(WakeWordSettings(engine=engine))
        started = time.perf_counter()
        accepts = sum(detector.process(f) for piece in negatives for f in piece.frames())
        cpu = (time.perf_counter() - started) / max(seconds, 1e-9)
        result[engine] = {"detected": detected, "accepts": accepts, "cpu": cpu}
    result["phrases"] = len(phrases)
    result["negative_s"] = seconds
    return result


def listening_rss() -> float:
    """Peak RSS (MB) of a fresh process listening: wake word + VAD fed 20 s of audio."""
    code = (
        "from jarvis.node.voice.vad import MicroVadDetector\n"
        "from jarvis.node.voice.wake_word import load_wake_word\n"
        "from jarvis.node.voice.audio import Audio\n"
        "w, v = load_wake_word(), MicroVadDetector()\n"
        "for f in Audio.silence(20).frames():\n"
        "    v.speech_probability(f); w.process(f)\n"
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec.
        "import re, pathlib\n"
        "status = pathlib.Path('/proc/self/status').read_text()\n"
        "print(int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1)) / 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true",
                        help="150 commands and 60 minutes of non-wake speech")
    parser.add_argument("--commands", type=int, default=12, help="spoken commands per voice")
    parser.add_argument("--false-accept-minutes", type=float, default=3.0)
    parser.add_argument("--verbose", action="store_true", help="print every transcript")
    parser.add_argument("--no-hint", action="store_true",
                        help="recognize without the commands' words as hot words")
    parser.add_argument("--full-window", action="store_true",
                        help="Whisper's usual 30-second window for every request")
    parser.add_argument("--beam", type=int, default=None,
                        help="Whisper's beam size (default: the node's)")
    parser.add_argument("--no-early", action="store_true",
                        help="transcribe only once a request has ended")
    parser.add_argument("--center", help="a running center for the commands the fast path "
                        "does not take (default: none, fast path only)")
    parser.add_argument("--key", help="this node's key on that center (jarvis nodes add bench)")
    args = parser.parse_args()
    if args.full:
        args.commands, args.false_accept_minutes = 150, 60.0
    if not espeak_available():
        print("espeak-ng is needed (Debian: apt-get install espeak-ng)", file=sys.stderr)
        return 1

    from jarvis.model_files import ModelStoreError
    from jarvis.node import JarvisCommandCenterClient, NodeSettings, open_node
    from jarvis.node.voice import load_engines
    from jarvis.node.voice.engines import EngineSettings
    from jarvis.node.voice.stt import WhisperSettings

    try:
        whisper = WhisperSettings(short_window=not args.full_window)
        if args.beam:
            whisper = dataclasses.replace(whisper, beam_size=args.beam)
        engines = load_engines(settings=EngineSettings(whisper=whisper))
    except ModelStoreError as exc:
        print(exc, file=sys.stderr)
        return 1
    conditions = [("piper", None), ("piper", 10), ("espeak", None), ("espeak", 10)]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jarvis-voice-bench-") as tmp:
        url = args.center or f"http://127.0.0.1:{_closed_port()}"
        client = JarvisCommandCenterClient(url, retries=0 if not args.center else 2,
                                           key=args.key)
        with open_node(NodeSettings(data_dir=Path(tmp), timezone="Europe/Paris"),
                       client=client) as node:
            texts = commands_to_say(node.registry, args.commands)
            spoken = bench_commands(engines, node, texts, conditions, args.verbose,
                                    not args.no_hint, not args.no_early)
    wake = bench_wake_word(engines, args.false_accept_minutes)
    rss = listening_rss()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    n = len(texts)
    print(f"voice bench: {n} commands x 2 voices x (clean, 10 dB SNR), {os.cpu_count()} cores,"
          f" {time.perf_counter() - started:.0f} s; hot words {'off' if args.no_hint else 'on'},"
          f" Whisper window {'30 s' if args.full_window else 'short'}, beam "
          f"{engines.stt.settings.beam_size}, transcribed "
          f"{'after the request' if args.no_early else 'during the closing pause'}")
    print(f"{'condition':<16} {'WER':>6} {'woke':>6} {'right cmd':>10}")
    for (voice, snr), row in spoken["rows"].items():
        label = f"{voice} {'clean' if snr is None else f'{snr} dB'}"
        print(f"{label:<16} {row['wer']:>6.1%} {row['woke']:>3}/{n:<2} {row['right']:>6}/{n}")
    typed = spoken["typed_right"]
    clean = [r for (_, snr), r in spoken["rows"].items() if snr is None]
    noisy = [r for (_, snr), r in spoken["rows"].items() if snr is not None]
    print(f"WER clean {statistics.mean(r['wer'] for r in clean):.1%}, "
          f"noisy {statistics.mean(r['wer'] for r in noisy):.1%} (Whisper's normalizer; "
          f"counted as before it: {statistics.mean(r['plain_wer'] for r in clean):.1%} / "
          f"{statistics.mean(r['plain_wer'] for r in noisy):.1%})")
    for label, rows in (("clean", clean), ("noisy", noisy)):
        right = statistics.mean(r["right"] for r in rows)
        share = right / typed if typed else 0.0
        where = "" if args.center else " on the fast path"
        print(f"right command from speech ({label}): {right:.1f} of the {typed} the typed "
              f"text runs right{where} ({share:.0%})")
    lat = spoken["latencies"]
    print(f"end of speech -> first reply audio, fast path: p50 {_percentile(lat, 0.5):.2f} s,"
          f" p90 {_percentile(lat, 0.9):.2f} s ({len(lat)} exchanges)")
    parts = {name: _percentile(values, 0.5) for name, values in spoken["parts"].items()}
    print(f"  of which (p50 each): pause {parts['pause']:.2f} s, speech-to-text after it "
          f"{parts['stt']:.2f} s, command + first sentence spoken {parts['answer']:.2f} s")
    lat = spoken["center_latencies"]
    if args.center and lat:
        print(f"end of speech -> first reply audio, through the center: p50 "
              f"{_percentile(lat, 0.5):.2f} s, p90 {_percentile(lat, 0.9):.2f} s "
              f"({len(lat)} exchanges)")
    total = wake["phrases"]
    hours = wake["negative_s"] / 3600
    for engine in ("openwakeword", "microwakeword"):
        w = wake[engine]
        levels = ", ".join(f"{lvl} dB {w['detected'][lvl]}/{total}" for lvl in LEVELS_DB)
        print(f"wake word {engine}: {levels}; false accepts {w['accepts']} in "
              f"{wake['negative_s'] / 60:.1f} min ({w['accepts'] / hours:.1f}/h); "
              f"{w['cpu']:.1%} of real time")
    print(f"resident memory listening (wake word + VAD): {rss:.0f} MB; "
          f"this whole bench with Whisper and Piper: {own:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
