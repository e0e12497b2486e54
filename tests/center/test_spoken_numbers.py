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
        ("what's fore plus fore", "what's 4 plus 4"),
        # "to" and "for" are words, even beside an operator or a unit.
        ("remind me three times to take my pills", "remind me 3 times to take my pills"),
        ("what's ten plus for", "what's 10 plus for"),
        ("add eggs to my list", "add eggs to my list"),
        ("timer for 5 minutes", "timer for 5 minutes"),
        # Fractions of a unit: the number they mean, a length of time in whole units.
        ("two and a half minute timer", "2 minutes 30 seconds timer"),
        ("set a timer for an hour and a half", "set a timer for 1 hour 30 minutes"),
        ("wake me in half an hour", "wake me in 30 minutes"),
        ("a quarter of an hour", "15 minutes"),
        ("three quarters of an hour", "45 minutes"),
        ("how many tablespoons are in a quarter cup", "how many tablespoons are in 0.25 cup"),
        ("one and a half cups of flour", "1.5 cups of flour"),
        ("half a cup of milk", "0.5 cup of milk"),
        ("whats seven and a half times eight", "whats 7.5 times 8"),
        ("ninety second timer please", "90 seconds timer please"),
        ("the twenty second of march", "the 22nd of march"),
        # Not a fraction of a unit: a clock time, a dozen, arithmetic.
        ("remind me at quarter past seven", "remind me at quarter past 7"),
        ("add half a dozen eggs", "add half a dozen eggs"),
        ("what is half of 30", "what is half of 30"),
        # A negative number is signed; a subtraction is not.
        ("what's minus forty celsius in fahrenheit", "what's -40 celsius in fahrenheit"),
        ("what is five times negative three", "what is 5 times -3"),
        ("what is fifty minus forty", "what is 50 minus 40"),
        ("", ""),
        ("hello there", "hello there"),
    ],
)
def test_spoken_numbers_become_digits(heard: str, read: str) -> None:
    assert digits_for_numbers(heard) == read
