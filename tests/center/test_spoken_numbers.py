"""Spelled-out numbers become digits before the LLM reads them."""

from __future__ import annotations

import pytest

from jarvis.center.spoken_numbers import digits_for_numbers


@pytest.mark.parametrize(
    ("heard", "read"),
    [
        ("put on a ninety minute timer", "put on a 90 minute timer"),
        ("what is nine hundred minus three hundred and twelve", "what is 900 minus 312"),
        ("what is twenty two plus nineteen", "what is 22 plus 19"),
        ("dim the lamp to ten percent", "dim the lamp to 10 percent"),
        ("what is two point five plus three", "what is 2.5 plus 3"),
        # Clock times: after "at", after "alarm for", or before am/pm.
        ("remind me at nine thirty pm", "remind me at 9:30 pm"),
        ("set an alarm for seven fifteen tomorrow", "set an alarm for 7:15 tomorrow"),
        ("wake me at six thirty a.m.", "wake me at 6:30 a.m."),
        # Two numbers that are not a time stay two numbers.
        ("roll two twenty sided dice", "roll 2 20 sided dice"),
        # Small isolated numbers and early ordinals read better as words.
        ("play one more song", "play one more song"),
        ("book a table for two", "book a table for two"),
        ("the second of march", "the second of march"),
        # Words that sound like a number, beside a unit or an operator.
        ("set a timer for too minutes", "set a timer for two minutes"),
        ("what's ate times nine", "what's 8 times 9"),
        ("what's for plus for", "what's 4 plus 4"),
        ("add eggs to my list", "add eggs to my list"),
        ("timer for 5 minutes", "timer for 5 minutes"),
        ("", ""),
        ("hello there", "hello there"),
    ],
)
def test_spoken_numbers_become_digits(heard: str, read: str) -> None:
    assert digits_for_numbers(heard) == read
