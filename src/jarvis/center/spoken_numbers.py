"""Numbers as digits in what the LLM reads: "a ninety minute timer" -> "a 90 minute timer".

Speech recognition writes numbers as words. A small model copies digits reliably but
turns "ninety" into 9 or "three hundred and twelve" into 3; a larger one gains nothing
from words either. `text2num` does the conversion; small isolated numbers ("one more
song", "book a table for two") stay words, as do ordinals below fourth ("the second of
March"), and "seven thirty" after "at" or before "pm" becomes a clock time, 7:30.
Speech recognisers also write a number as a word that sounds the same ("set a timer for
too minutes", "what's ate times nine"); next to a unit or an operator those are read as
the number.
"""

from __future__ import annotations

import re

from text_to_num import alpha2digit

# Words heard for a number, and what must stand next to them for it to be that number.
_SOUNDS_LIKE = {"too": "two", "to": "two", "for": "four", "fore": "four", "ate": "eight",
                "won": "one"}
_HOMOPHONE = r"\b(too|to|for|fore|ate|won)\b"
_BESIDE = r"(?:seconds?|minutes?|hours?|dice|percent|plus|minus|times|divided)\b"
_BEFORE_UNIT = re.compile(rf"{_HOMOPHONE}(?= {_BESIDE})", re.IGNORECASE)
_AFTER_OPERATOR = re.compile(rf"\b(plus|minus|times) {_HOMOPHONE}", re.IGNORECASE)


def _number_word(match: re.Match[str]) -> str:
    return _SOUNDS_LIKE[match[1].lower()]


def _operand(match: re.Match[str]) -> str:
    return f"{match[1]} {_SOUNDS_LIKE[match[2].lower()]}"


# "at 7 30", "alarm for 7 15", "9 30 pm": two numbers that read as hour and minutes.
_CLOCK = re.compile(
    r"(?P<lead>\b(?:at|alarm (?:for|at))\s+)?"
    r"\b(?P<hour>1[0-2]|0?[1-9]) (?P<minute>[0-5]\d)\b"
    r"(?P<meridiem>\s*[ap]\.?\s?m\b\.?)?",
    re.IGNORECASE,
)


def _clock(match: re.Match[str]) -> str:
    if not match["lead"] and not match["meridiem"]:
        return match[0]
    return f"{match['lead'] or ''}{match['hour']}:{match['minute']}{match['meridiem'] or ''}"


def digits_for_numbers(text: str) -> str:
    """`text` with its spelled-out numbers written as digits (English)."""
    text = _AFTER_OPERATOR.sub(_operand, _BEFORE_UNIT.sub(_number_word, text))
    try:
        converted = alpha2digit(text, "en")
    except Exception:  # text2num is a native module; never let it cost a user request
        return text
    return _CLOCK.sub(_clock, converted)
