"""Numbers as digits in what the LLM reads: "a ninety minute timer" -> "a 90 minute timer".

Speech recognition writes numbers as words. A small model copies digits reliably but
turns "ninety" into 9 or "three hundred and twelve" into 3; a larger one gains nothing
from words either. `text2num` does the conversion; small isolated numbers ("one more
song", "book a table for two") stay words, as do ordinals below fourth ("the second of
March"), and "seven thirty" after "at" or before "pm" becomes a clock time, 7:30.
Speech recognisers also write a number as a word that sounds the same ("set a timer for
too minutes", "what's ate times nine"); next to a unit or an operator those are read as
the number. Fractions of a unit become the number they mean: "two and a half cups" ->
"2.5 cups", "a quarter of an hour" -> "15 minutes" (a small model writes PT2H30M for "two
and a half minutes" and 1 for "a quarter cup"), and a number said negative is written so,
"minus 40 celsius" -> "-40 celsius" (but "50 minus 40" is a subtraction).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from text_to_num import alpha2digit

from jarvis.center.time_units import CLOCK_UNITS, SECONDS, unit_named, unit_pattern

# Words heard for a number, and what must stand next to them for it to be that number.
# Not "to" and "for": as words they are everywhere ("remind me three times to ...").
_SOUNDS_LIKE = {"too": "two", "fore": "four", "ate": "eight", "won": "one"}
_HOMOPHONE = r"\b(too|fore|ate|won)\b"
_BESIDE = rf"(?:{unit_pattern(CLOCK_UNITS, short=False)}|percent|plus|minus|times|divided)\b"
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


# Whole numbers a fraction is added to: digits, or the words text2num leaves alone.
_WHOLE = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_WHOLE_RE = rf"(?P<whole>\d+|{'|'.join(_WHOLE)})"
# Without the articles: "7 and a half", not "a day and a half".
_NUMBER_RE = rf"(?P<whole>\d+|{'|'.join(w for w in _WHOLE if w not in ('a', 'an'))})"
# Units a bare fraction may stand before ("half a cup", "a quarter pound"); not "past" or
# "to" ("quarter past seven" is a clock time), nor every noun ("half a dozen eggs").
UNITS = (r"(?:cup|pound|ounce|teaspoon|tablespoon|liter|litre|gallon|pint|quart|"
          r"kilo|kilogram|gram|mile|kilometer|kilometre|meter|metre|foot|feet|inch|yard|"
          r"stick|degree)(?:e?s)?")
_Replacement = str | Callable[[re.Match[str]], str]
_PART = {"half": 0.5, "quarter": 0.25}
# A part of an hour or a minute is said in the next smaller unit: "1 hour 30 minutes".
_SMALLER = {"hour": "minute", "minute": "second"}
_TIME_UNIT_RE = unit_pattern(_SMALLER, short=False)


def _whole(match: re.Match[str]) -> float:
    word = match["whole"].lower()
    return float(word) if word.isdigit() else float(_WHOLE[word])


def _time_and_part(whole: float, unit: str, part: float) -> str:
    name = unit_named(unit) or unit
    smaller = _SMALLER[name]
    count = part * SECONDS[name] / SECONDS[smaller]
    return f"{whole:g} {name if whole == 1 else name + 's'} {count:g} {smaller}s"


def _fraction_rules() -> list[tuple[re.Pattern[str], _Replacement]]:
    def rule(pattern: str, replace: _Replacement) -> tuple[re.Pattern[str], _Replacement]:
        return re.compile(pattern, re.IGNORECASE), replace

    return [
        # "an hour and a half", "2 minutes and a half"
        rule(rf"\b{_WHOLE_RE} (?P<unit>{_TIME_UNIT_RE}) and a half\b",
             lambda m: _time_and_part(_whole(m), m["unit"], 0.5)),
        # "2 and a half hours", "two and a half minute timer"
        rule(rf"\b{_WHOLE_RE} and a (?P<part>half|quarter) (?P<unit>{_TIME_UNIT_RE})\b",
             lambda m: _time_and_part(_whole(m), m["unit"], _PART[m["part"].lower()])),
        rule(r"\b(?:half an|a half|half) hour\b", "30 minutes"),
        rule(r"\b(?:half a|a half|half) minute\b", "30 seconds"),
        rule(r"\b(?:three|3) quarters of an hour\b", "45 minutes"),
        rule(r"\b(?:(?:a|one) )?quarter (?:of an )?hour\b", "15 minutes"),
        # "one and a half cups", "2 and a quarter miles"
        rule(rf"\b{_WHOLE_RE} and a (?P<part>half|quarter) (?P<unit>{UNITS})\b",
             lambda m: f"{_whole(m) + _PART[m['part'].lower()]:g} {m['unit']}"),
        # "7 and a half times 8": any number, not "a day and a half"
        rule(rf"\b{_NUMBER_RE} and a half\b",
             lambda m: f"{_whole(m) + 0.5:g}"),
        rule(rf"\b(?:three|3) quarters (?:of )?(?:a |an )?(?P<unit>{UNITS})\b",
             lambda m: f"0.75 {m['unit']}"),
        rule(rf"\b(?:half (?:a |an )?|a half )(?P<unit>{UNITS})\b",
             lambda m: f"0.5 {m['unit']}"),
        rule(rf"\b(?:a |one )?quarter (?:of )?(?:a |an )?(?P<unit>{UNITS})\b",
             lambda m: f"0.25 {m['unit']}"),
    ]


_FRACTIONS = _fraction_rules()


def fractions_as_numbers(text: str) -> str:
    """"two and a half cups" -> "2.5 cups", "half an hour" -> "30 minutes" (see module)."""
    for pattern, replace in _FRACTIONS:
        text = pattern.sub(replace, text)
    return text


_SIGNED = re.compile(r"\b(?:minus|negative) (?=\d)", re.IGNORECASE)


def negatives_as_numbers(text: str) -> str:
    """"minus 40 celsius" -> "-40 celsius"; "50 minus 40" stays a subtraction."""
    def sign(match: re.Match[str]) -> str:
        before = text[: match.start()].rstrip()
        return match[0] if before[-1:].isdigit() else "-"

    return _SIGNED.sub(sign, text)


# "ninety second timer" is 90 seconds, not the 92nd (but "the twenty second of may" is).
_TENS_SECOND = re.compile(
    r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety) second\b(?! of\b)",
    re.IGNORECASE)


def digits_for_numbers(text: str) -> str:
    """`text` with its spelled-out numbers written as digits (English)."""
    text = _AFTER_OPERATOR.sub(_operand, _BEFORE_UNIT.sub(_number_word, text))
    text = _TENS_SECOND.sub(r"\1 seconds", text)
    try:
        converted = alpha2digit(text, "en")
    except Exception:  # text2num is a native module; never let it cost a user request
        return negatives_as_numbers(fractions_as_numbers(text))
    return negatives_as_numbers(fractions_as_numbers(_CLOCK.sub(_clock, converted)))
