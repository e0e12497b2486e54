"""Sentence boundaries for answers spoken one sentence at a time."""

from __future__ import annotations

import re

import pytest

from jarvis.center import sentences
from jarvis.center.sentences import SentenceCutter, split_sentences

boundaries = sentences._boundaries

TEXT = ('Call Dr. Smith at 9 a.m. sharp. It costs 3.5 dollars! Is that right?  Yes... it is. '
        'The U.S. team won.\nHe said "go." Then he left')
SENTENCES = ["Call Dr. Smith at 9 a.m. sharp.", "It costs 3.5 dollars!", "Is that right?",
             "Yes... it is.", "The U.S. team won.", 'He said "go."', "Then he left"]


def test_split_keeps_abbreviations_and_decimals() -> None:
    assert split_sentences(TEXT) == SENTENCES
    assert split_sentences("") == [] and split_sentences("  \n") == []
    assert split_sentences("Version 2.0 is out") == ["Version 2.0 is out"]


def test_cutter_hands_on_each_sentence_once_the_next_has_begun() -> None:
    cutter = SentenceCutter()
    pieces = re.findall(r".{1,3}", TEXT, re.DOTALL)  # tokens cut anywhere, as an LLM's are
    out: list[str] = []
    for piece in pieces:
        out.extend(cutter.feed(piece))
    assert out == SENTENCES[:-1]
    assert cutter.flush() == SENTENCES[-1:]
    assert cutter.consumed == TEXT


def test_a_period_at_the_end_of_a_piece_waits_for_what_follows() -> None:
    cutter = SentenceCutter()
    assert cutter.feed("I paid 3.") == []
    assert cutter.feed("5 dollars to Dr.") == []
    assert cutter.feed(" Who. Th") == []  # "Th" may yet be a list's "1."
    assert cutter.feed("en ") == ["I paid 3.5 dollars to Dr. Who."]
    assert cutter.flush() == ["Then"]


def test_text_is_segmented_once_per_possible_end_not_per_piece(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counted(text: str) -> list[int]:
        calls.append(text)
        return boundaries(text)

    monkeypatch.setattr(sentences, "_boundaries", counted)
    cutter = SentenceCutter()
    words = [f"word{n} " for n in range(300)]  # a long answer that ends no sentence
    assert [s for w in words for s in cutter.feed(w)] == []
    assert calls == []
    for piece in ["and Dr. ", "Who ", "came. ", "Then ", "he ", "left ", "again. ", "Bye "]:
        cutter.feed(piece)
    assert len(calls) == 3  # after "Dr.", "came." and "again.", each once a word followed
