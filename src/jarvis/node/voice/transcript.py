"""A transcript as the text path wants it: Whisper's punctuation taken out.

Whisper writes sentences: it ends them with a full stop even after a question, and breaks
one request in two where the speaker paused ("Roll 3. Six-sided dice."), which a
command's `pre_route` then no longer recognizes. Spoken requests carry no punctuation, so
sentence marks are dropped; decimal points ("3.5"), times ("6.30"), apostrophes and
hyphens stay.
"""

from __future__ import annotations

import re

__all__ = ["tidy_transcript"]

_MARK = re.compile(r"[.?!,;:]+(?=\s|$)")


def tidy_transcript(text: str) -> str:
    """`text` without sentence punctuation, with single spaces."""
    return " ".join(_MARK.sub("", text).split())
