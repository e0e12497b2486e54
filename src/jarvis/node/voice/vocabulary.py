"""The words Jarvis expects to hear, taken from the registered commands themselves.

Whisper reads a short text before the audio (faster-whisper's `hotwords`) and prefers its
words and spelling. Jarvis builds it from what each command declares: its name, keywords and example
utterances, so a command someone else wrote is recognized as well as a built-in one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from jarvis.sdk import IJarvisCommand

__all__ = ["recognition_hint"]

# Whisper keeps at most 223 prompt tokens. Shorter hot words garble fewer words they do
# not hold, but spell fewer commands in noise (docs/voice.md, "Measured").
_MAX_CHARS = 600
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


def recognition_hint(commands: Iterable[IJarvisCommand], max_chars: int = _MAX_CHARS) -> str:
    """One example utterance per command first, then further ones, within `max_chars`."""
    per_command: list[list[str]] = []
    for command in commands:
        try:
            lines = [_sentence(e.voice_command) for e in command.examples]
            lines += [_sentence(k) for k in command.keywords]
            lines.append(_sentence(" ".join(_WORD.findall(command.command_name.replace("_", " ")))))
        except Exception:  # a broken declaration must not silence the others
            continue
        per_command.append([line for line in lines if line])
    chosen: list[str] = []
    seen: set[str] = set()
    used = 0
    for round_ in range(max((len(lines) for lines in per_command), default=0)):
        for lines in per_command:
            if round_ >= len(lines) or lines[round_].lower() in seen:
                continue
            line = lines[round_]
            if used + len(line) + 1 > max_chars:
                return " ".join(chosen)
            chosen.append(line)
            seen.add(line.lower())
            used += len(line) + 1
    return " ".join(chosen)


def _sentence(text: str) -> str:
    text = " ".join(str(text).split())
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".?!" else text + "."
