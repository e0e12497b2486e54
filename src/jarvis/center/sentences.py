"""Where spoken text ends a sentence, for answers sent (and spoken) one sentence at a time.

The boundaries come from `pysbd` (rule-based sentence boundary disambiguation), which
knows that "Dr. Smith", "3.5" or "the U.S. team" go on. `split_sentences` cuts a whole
text; `SentenceCutter` cuts text that arrives in pieces (an LLM's tokens), handing on a
sentence only once the next one has begun, so "I paid 3." never leaves before ".5".
"""

from __future__ import annotations

import re

import pysbd

__all__ = ["SentenceCutter", "split_sentences"]

_WORD = re.compile(r"\w\W")
# Where a sentence may end (end marks and the space after them, or a line break) once a
# whole word follows: only then is the text worth segmenting again.
_READY = re.compile(r"(?:[.!?\u2026]+[\"'\u201d\u2019)\]]*\s+|\n\s*)(?=\W*\w+\W)")


def _boundaries(text: str) -> list[int]:
    """Offsets in `text` where a sentence ends and the next begins (not the text's end)."""
    # A Segmenter keeps the text it works on: one per call, so threads never share one.
    spans = pysbd.Segmenter(language="en", clean=False, char_span=True).segment(text)
    cuts: list[int] = []
    for span in spans[:-1]:
        if (not cuts or span.end > cuts[-1]) and 0 < span.end < len(text):
            cuts.append(span.end)
    return cuts


def _pieces(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at `cuts`, each piece stripped, empty ones left out."""
    starts = [0, *cuts]
    ends = [*cuts, len(text)]
    return [s for s in (text[a:b].strip() for a, b in zip(starts, ends, strict=True)) if s]


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped; joined with spaces they read as `text` does."""
    return _pieces(text, _boundaries(text)) if text.strip() else []


class SentenceCutter:
    """Collects text as it is produced and hands back each sentence once it is complete."""

    def __init__(self) -> None:
        self._pending = ""
        # Offsets in `_pending` of possible ends already judged: a long answer is
        # segmented once per possible end, not once per token.
        self._judged: set[int] = set()
        # Everything handed back so far, as it arrived (whitespace included).
        self.consumed = ""

    def feed(self, piece: str) -> list[str]:
        """Add `piece`; the sentences it completed (none while the last one may go on)."""
        self._pending += piece
        ready = {m.start() for m in _READY.finditer(self._pending)}
        if ready <= self._judged:
            return []
        self._judged |= ready
        cuts = _boundaries(self._pending)
        # The next sentence has begun only once it has a whole word: "Yes." may yet be
        # "Yes...", and "1." read before "First item" is a list's number, not a sentence.
        while cuts and not _WORD.search(self._pending, cuts[-1]):
            cuts.pop()
        if not cuts:
            return []
        done, self._pending = self._pending[: cuts[-1]], self._pending[cuts[-1]:]
        self._judged = {i - len(done) for i in self._judged if i >= len(done)}
        self.consumed += done
        return _pieces(done, cuts[:-1])

    def flush(self) -> list[str]:
        """The text still held (the last sentence), once no more will come."""
        rest, self._pending = self._pending, ""
        self._judged = set()
        self.consumed += rest
        return split_sentences(rest)
