"""Whisper's sentence punctuation is taken out before the text path sees a request."""

from __future__ import annotations

import pytest

from jarvis.node.voice.transcript import tidy_transcript


@pytest.mark.parametrize(("heard", "tidy"), [
    ("Roll 3. Six-sided dice.", "Roll 3 Six-sided dice"),
    ("What is 3.5 minus 1.25?", "What is 3.5 minus 1.25"),
    ("Remind me at 6.30 pm, to put the bins out.", "Remind me at 6.30 pm to put the bins out"),
    ("What's today's date...", "What's today's date"),
    ("  Set a 10-minute timer!  ", "Set a 10-minute timer"),
])
def test_sentence_marks_go_and_numbers_stay(heard: str, tidy: str) -> None:
    assert tidy_transcript(heard) == tidy
