"""What Whisper says after a request ends, its request again or its prompt, is taken out."""

from __future__ import annotations

import pytest

from jarvis.node.voice.repeats import without_repeats

HINT = "Roll a die. What's on my to-do list. Tell me a joke."


@pytest.mark.parametrize(("heard", "kept"), [
    ("Pause the music. Pause the Music. Pause The Music.", "Pause the music."),
    ("Roll a dice. Roll a die. Roll", "Roll a dice."),
    ("Roll 36 times 4. What's on my to-do list.", "Roll 36 times 4."),
    ("Add the car service to my to-do list. Add the car service to my to-do lis",
     "Add the car service to my to-do list."),
])
def test_a_repeat_or_a_copied_prompt_sentence_goes(heard: str, kept: str) -> None:
    assert without_repeats(heard, HINT) == kept


@pytest.mark.parametrize("heard", [
    "Tell me a joke.",  # the prompt's sentence said as the request itself stays
    "I want to go to Paris. Can you find me a flight?",
    "Set a timer for 5 minutes. Set another one for 10 minutes.",
    "I need a dentist on March 12 at 3.30 in the afternoon. Can you reserve it?",
    "What is 3.5 minus 1.25?",
    "",
])
def test_sentences_said_once_stay_whole(heard: str) -> None:
    assert without_repeats(heard, HINT) == heard
