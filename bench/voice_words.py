"""Word errors of speech-to-text alone: texts read straight to Whisper, by two voices.

    .venv/bin/python bench/voice_words.py                       # the voice bench's commands
    .venv/bin/python bench/voice_words.py --texts sgd            # requests nobody here wrote
    .venv/bin/python bench/voice_words.py --texts sgd --hint-chars 600 --keep-repeats
    .venv/bin/python bench/voice_words.py --loop     # also as the voice loop cuts it out
    .venv/bin/python bench/voice_words.py --speech /tmp/speech  # keep the speech, reuse it

No wake word, no voice loop and no real-time feed (bench/voice.py does all that): each
text is synthesized by Piper and by espeak-ng, given 0.3 s of silence before and 0.6 s
after, noise added at 10 dB SNR for the noisy conditions, and transcribed by the node's
Whisper with the registered commands' hot words. Quick (about half a minute a condition
for 150 texts on two cores), so a recognition setting can be compared on many lines.

`--texts commands`: the spoken commands of bench/voice.py (the built-in commands' examples
and bench/corpus lines). `--texts sgd`: first requests of the SGD train split (see
/work/shared/data/sgd/README.md), whose words are mostly not in the hot words: what the
hot words cost a request they do not cover. Printed: word error rate per condition, after
Whisper's English normalizer, and counted as bench/voice.py did before it used it.

`--loop`: each request is also said after "hey jarvis" (as bench/voice.py says it) and
run through the `VoiceLoop` (not in real time); the audio the loop's recorder cut out is
transcribed by the same Whisper, so the two columns differ only by the cut, on the very
same synthesized speech (Piper's voice varies between syntheses). About 15 minutes for
150 texts on two cores.

`--speech DIR`: the synthesized speech is kept in DIR (WAV files), and a later run with the
same texts reads it back instead of synthesizing again: two recognition settings are then
compared on the very same audio (noise is the same too, it is seeded by the line).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # bench/ is not a package
sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "node" / "voice"))

from voice_speech import espeak_available, espeak_speech, piper_speech, request, with_noise

from voice import WordErrors, commands_to_say

SGD = Path(os.environ.get("JARVIS_SGD_DATA", "/work/shared/data/sgd"))
CONDITIONS = [("piper", None), ("piper", 10), ("espeak", None), ("espeak", 10)]


def sgd_requests(count: int, seed: int = 11) -> list[str]:
    """`count` first requests of SGD train shorter than 110 characters, shuffled."""
    lines = (SGD / "train" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    random.Random(seed).shuffle(cases)
    return [c["utterance"] for c in cases if len(c["utterance"]) < 110][:count]


class _CutOnly:
    """A speech-to-text engine that keeps what it is given and transcribes nothing."""

    def __init__(self) -> None:
        self.given = []

    def transcribe(self, audio, hint=None) -> str:
        self.given.append(audio)
        return "-"


class SpeechCache:
    """Each voice's rendering of each text, read from `folder` when it was kept there."""

    def __init__(self, engines, texts: list[str], folder: Path | None) -> None:
        self.engines, self.texts, self.folder = engines, texts, folder
        self.reuse = folder is not None and _kept_texts(folder) == texts
        if folder is not None and not self.reuse:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "texts.json").write_text(json.dumps(texts, indent=0), encoding="utf-8")

    def said(self, voice: str, index: int):
        return self._speak(voice, self.texts[index], f"{index:03d}")

    def wake(self, voice: str):
        return self._speak(voice, "Hey Jarvis!", "wake")

    def _speak(self, voice: str, text: str, name: str):
        from jarvis.node.voice.audio import read_wav, write_wav

        path = self.folder / f"{voice}-{name}.wav" if self.folder else None
        if self.reuse and path.exists():
            return read_wav(path)
        audio = piper_speech(self.engines.tts, text) if voice == "piper" else espeak_speech(text)
        if path is not None:
            write_wav(path, audio)
        return audio


def _kept_texts(folder: Path) -> list[str] | None:
    path = folder / "texts.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def loop_cut(engines, said, wake, snr: float | None, seed: int):
    """The audio the voice loop's recorder gives speech-to-text for "hey jarvis" + `said`."""
    from dataclasses import replace

    from jarvis.node.voice import ArraySource, CollectingSink, VoiceLoop
    from jarvis.node.voice.loop import Reply

    audio = request(wake, said)
    if snr is not None:
        audio = with_noise(audio, snr, seed=seed)
    cut = _CutOnly()
    engines.wake_word.reset()
    loop = VoiceLoop(replace(engines, stt=cut), ArraySource(audio), CollectingSink(),
                     lambda _text, _ask, _say: Reply("ok"))
    loop.run(max_exchanges=1)
    return cut.given[-1] if cut.given else None


def word_errors(engines, speech: SpeechCache, hint: str | None, verbose: bool,
                through_loop: bool = False) -> dict:
    """(voice, snr) -> {"wer", "plain_wer"[, "loop_wer"]} over the speech's texts."""
    from jarvis.node.voice import Audio

    rows = {}
    wakes = {voice: speech.wake(voice) for voice in ("piper", "espeak")} if through_loop else {}
    for voice, snr in CONDITIONS:
        counted, looped = WordErrors(), WordErrors()
        for index, text in enumerate(speech.texts):
            said = speech.said(voice, index)
            audio = Audio.join([Audio.silence(0.3), said, Audio.silence(0.6)])
            if snr is not None:
                audio = with_noise(audio, snr, seed=index)
            heard = engines.stt.transcribe(audio, hint)
            if verbose:
                print(f"  {voice} {snr}: {text!r} -> {heard!r}", file=sys.stderr)
            counted.add(text, heard)
            if through_loop:
                cut = loop_cut(engines, said, wakes[voice], snr, index)
                cut_heard = engines.stt.transcribe(cut, hint) if cut is not None else ""
                if verbose:
                    print(f"    through the loop -> {cut_heard!r}", file=sys.stderr)
                looped.add(text, cut_heard)
        rows[(voice, snr)] = counted.rates()
        if through_loop:
            rows[(voice, snr)]["loop_wer"] = looped.rates()["wer"]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", choices=("commands", "sgd"), default="commands")
    parser.add_argument("--count", type=int, default=150, help="texts per condition")
    parser.add_argument("--hint-chars", type=int, default=None,
                        help="hot words' length in characters (0: none; default: the node's)")
    parser.add_argument("--keep-repeats", action="store_true",
                        help="keep what Whisper says after the request (default: taken out)")
    parser.add_argument("--loop", action="store_true",
                        help="also transcribe the same speech as the voice loop cuts it out")
    parser.add_argument("--speech", type=Path, default=None, metavar="DIR",
                        help="keep the synthesized speech in DIR; reuse it when DIR holds it")
    parser.add_argument("--verbose", action="store_true", help="print every transcript")
    args = parser.parse_args()
    if not espeak_available():
        print("espeak-ng is needed (Debian: apt-get install espeak-ng)", file=sys.stderr)
        return 1

    from jarvis.model_files import ModelStoreError
    from jarvis.node import JarvisCommandCenterClient, NodeSettings, open_node
    from jarvis.node.voice import load_engines, recognition_hint
    from jarvis.node.voice.engines import EngineSettings
    from jarvis.node.voice.stt import WhisperSettings

    try:
        whisper = WhisperSettings(drop_repeats=not args.keep_repeats)
        engines = load_engines(settings=EngineSettings(whisper=whisper))
    except ModelStoreError as exc:
        print(exc, file=sys.stderr)
        return 1
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jarvis-voice-words-") as tmp:
        client = JarvisCommandCenterClient("http://127.0.0.1:9", retries=0)
        with open_node(NodeSettings(data_dir=Path(tmp)), client=client) as node:
            limit = {} if args.hint_chars is None else {"max_chars": args.hint_chars}
            hint = recognition_hint(node.registry, **limit) or None
            texts = (sgd_requests(args.count) if args.texts == "sgd"
                     else [t for t, _ in commands_to_say(node.registry, args.count)])
    speech = SpeechCache(engines, texts, args.speech)
    rows = word_errors(engines, speech, hint, args.verbose, args.loop)
    print(f"speech-to-text alone: {len(texts)} {args.texts} texts x 2 voices x (clean, 10 dB "
          f"SNR), {time.perf_counter() - started:.0f} s; speech "
          f"{'read back' if speech.reuse else 'synthesized'}; hot words "
          f"{len(hint or '')} characters, repeats {'kept' if args.keep_repeats else 'out'}")
    loop_head = f" {'through the loop':>17}" if args.loop else ""
    print(f"{'condition':<16} {'WER':>6} {'counted as before':>18}{loop_head}")
    for (voice, snr), row in rows.items():
        label = f"{voice} {'clean' if snr is None else f'{snr} dB'}"
        looped = f" {row['loop_wer']:>17.1%}" if args.loop else ""
        print(f"{label:<16} {row['wer']:>6.1%} {row['plain_wer']:>18.1%}{looped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
