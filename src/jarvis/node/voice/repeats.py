"""What Whisper adds to a short request after it ends: the request again, or the prompt.

Decoding a few seconds of speech in a window padded with silence, Whisper base sometimes
goes on after the last word: it says the request again ("Pause the music. Pause the
Music."), or a sentence of the hot words it was given ("Roll 3 dice. What's on my to-do
list."). A later sentence that is nearly an earlier one, the start of one, or word for
word one of the hot words' sentences, is taken out; the first sentence always stays.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

__all__ = ["without_repeats"]

# A sentence ends at a mark before a space or the end ("3.30" and "6.5" stay whole).
_END = re.compile(r"(?<=[.?!])\s+")
_SAME = 90.0  # rapidfuzz ratio at which two sentences are one said twice


def _plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def without_repeats(text: str, hint: str | None = None) -> str:
    """`text` without the sentences after the first that repeat an earlier one, are the
    start of one, or copy a sentence of `hint`."""
    sentences = [s.strip() for s in _END.split(text) if _plain(s)]
    if len(sentences) < 2:
        return text.strip()
    prompted = {_plain(s) for s in _END.split(hint or "")} - {""}
    kept, earlier = sentences[:1], [_plain(sentences[0])]
    for sentence in sentences[1:]:
        plain = _plain(sentence)
        if plain in prompted or any(
            fuzz.ratio(plain, e) >= _SAME or e.startswith(plain) for e in earlier
        ):
            continue
        kept.append(sentence)
        earlier.append(plain)
    return " ".join(kept)
