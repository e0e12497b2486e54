"""Matching a tool call's argument values against the words an SGD user said.

Used by bench/sgd.py. The dataset gives, for each slot the user said, the words said
("the 8th", "11:30 am", "two", "NYC") and, for dates, the ISO date they mean. A produced
value matches by meaning: numbers as numbers, booleans as booleans, dates as days, times
as clock times, text case-insensitively with one contained in the other.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from text_to_num import alpha2digit, text2num

# "dontcare": the user said any value will do; the tool may get any value or none.
DONTCARE = "dontcare"

_ARTICLES = {"a", "an", "the"}
_CURRENCY = re.compile(r"[$€£]|\b(?:us\s*)?(?:dollars?|bucks|usd|euros?)\b", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SMALL = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
# Short names people say for places the dataset's dialogues travel to.
_ALIASES = {
    "nyc": ("new york",), "ny": ("new york",), "sf": ("san francisco",),
    "san fran": ("san francisco",), "sfo": ("san francisco",), "la": ("los angeles",),
    "lax": ("los angeles",), "sd": ("san diego",), "atl": ("atlanta",),
    "philly": ("philadelphia",), "vegas": ("las vegas",), "dc": ("washington",),
    "cdmx": ("mexico city", "ciudad de mexico"), "chi town": ("chicago",),
}


def filled(value: Any) -> bool:
    """A value that says something (not null, not an empty string, list or object)."""
    if value is None:
        return False
    if isinstance(value, str | list | dict):
        return bool(value.strip() if isinstance(value, str) else value)
    return True


def normalize(text: str) -> str:
    """Lowercase words without punctuation or articles."""
    words = re.sub(r"[^\w\s]", " ", text.casefold().replace("'", "")).split()
    return " ".join(w for w in words if w not in _ARTICLES)


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


# --- numbers ----------------------------------------------------------------------------------
def _number_text(text: str) -> str:
    text = _CURRENCY.sub(" ", re.sub(r"(?<=\d),(?=\d{3})", "", text.casefold()))
    text = " ".join(text.split())
    try:
        return str(text2num(text, "en"))
    except ValueError:
        return alpha2digit(text, "en", threshold=0)


def said_number(text: str) -> float | None:
    """The number the words are, when they are nothing but a number (and a currency)."""
    converted = _number_text(text).strip()
    return float(converted) if _NUMBER.fullmatch(converted) else None


def value_number(value: Any) -> float | None:
    """The one number a produced value holds (5, "5", "five", "$5", "5 people")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    found = _NUMBER.findall(_number_text(str(value)))
    return float(found[0]) if len(found) == 1 else None


# --- times ------------------------------------------------------------------------------------
_PM_WORDS = ("pm", "p m", "afternoon", "evening", "night", "tonight")
_AM_WORDS = ("am", "a m", "morning")


def _meridiem(text: str) -> str | None:
    words = f" {text} "
    if any(f" {w} " in words for w in _PM_WORDS):
        return "pm"
    if any(f" {w} " in words for w in _AM_WORDS):
        return "am"
    return None


def _clock(text: str) -> tuple[int, int] | None:
    """Hour and minute written in `text` ("6:45", "half past 7", "quarter to 8", "5")."""
    if re.search(r"\bnoon\b", text):
        return 12, 0
    if re.search(r"\bmidnight\b", text):
        return 0, 0
    words = " ".join(str(_SMALL.get(w, w)) for w in text.split())
    match = re.search(r"(half|quarter) (past|to) (\d{1,2})", words)
    if match:
        hour, minutes = int(match[3]), 30 if match[1] == "half" else 15
        return (hour, minutes) if match[2] == "past" else ((hour - 1) % 24, 60 - minutes)
    match = re.search(r"(?<!\d)(\d{1,2})[:.](\d{2})", words) or re.search(
        r"(?<![\d-])(\d{1,2})(?![\d:-])", words)
    if not match:
        return None
    minute = int(match[2]) if match.lastindex and match.lastindex >= 2 else 0
    return int(match[1]), minute


def parse_time(value: Any) -> tuple[int, int, bool] | None:
    """(hour 0-23, minute, whether am/pm is known) of a spoken or written clock time."""
    text = str(value).casefold()
    iso = re.search(r"t(\d{2}):(\d{2})", text)
    if iso:  # 2019-03-01T18:00:00
        return int(iso[1]), int(iso[2]), True
    text = re.sub(r"o[\"'’ ]?\s*clock", " ", text).replace(".", " ")
    text = " ".join(re.sub(r"(\d)(am|pm)\b", r"\1 \2", text).split())
    clock = _clock(text)
    if clock is None:
        return None
    hour, minute = clock
    if hour > 23 or minute > 59:
        return None
    meridiem = _meridiem(text)
    if meridiem == "pm" and hour < 12:
        hour += 12
    elif meridiem == "am" and hour == 12:
        hour = 0
    return hour, minute, meridiem is not None or hour >= 13 or hour == 0


def same_time(actual: Any, said: str) -> bool | None:
    """Whether two clock times agree (None: one of them is not a clock time)."""
    a, s = parse_time(actual), parse_time(said)
    if a is None or s is None:
        return None
    if a[2] and s[2]:
        return a[:2] == s[:2]
    return (a[0] % 12, a[1]) == (s[0] % 12, s[1])


# --- dates ------------------------------------------------------------------------------------
def same_date(actual: Any, said: str, iso: str, timezone: str, reference: datetime) -> bool:
    """The value holds the ISO date, or the words said, or words that resolve to the date."""
    from jarvis.center.dates import resolve_relative_date

    for item in _items(actual):
        text = str(item)
        if iso in text or (normalize(said) and normalize(said) in normalize(text)):
            return True
        try:
            days = resolve_relative_date(text, timezone, reference)
        except ValueError:  # UnresolvableDateError is a ValueError
            continue
        if days and days[0][:10] == iso:
            return True
    return False


# --- booleans and text ------------------------------------------------------------------------
def same_bool(actual: Any, said: str) -> bool:
    wanted = said.strip().casefold() in ("true", "yes", "1")
    if isinstance(actual, bool):
        return actual == wanted
    return str(actual).strip().casefold() in (("true", "yes", "1") if wanted
                                               else ("false", "no", "0"))


def same_text(actual: Any, said: str) -> bool:
    """One contains the other, case, punctuation and articles aside (or a known alias)."""
    wanted = normalize(said)
    options = (wanted, *_ALIASES.get(wanted, ()))
    for item in _items(actual):
        value = normalize(str(item))
        if value and any(o in value or value in o for o in options):
            return True
    return False


def is_time_slot(name: str) -> bool:
    return name == "time" or name.endswith("_time")


def matches(name: str, said: str, actual: Any, schema: dict[str, Any], iso: str | None,
            timezone: str, reference: datetime) -> bool:
    """Whether `actual`, the value produced for slot `name`, means the words `said`."""
    if said == DONTCARE:
        return True
    if not filled(actual):
        return False
    if iso:
        return same_date(actual, said, iso, timezone, reference)
    if schema.get("type") == "boolean" or said in ("True", "False"):
        return same_bool(actual, said)
    if is_time_slot(name):
        timed = same_time(actual, said)
        if timed is not None:
            return timed
    number = said_number(said)
    if number is not None or schema.get("type") in ("integer", "number"):
        produced = value_number(actual)
        if number is not None and produced is not None:
            return abs(produced - number) < 1e-6
    return same_text(actual, said)


# --- answers in words that state what only a tool could know ----------------------------------
_MONTHS = ("january|february|march|april|june|july|august|september|october|november|"
           "december")
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_FACT = re.compile(
    # "am" alone is the verb ("Yes, I am"); with a number the digit counts already.
    rf"\d|[$€£¥°]|\b(?:dollars?|bucks|euros?|usd)\b|\b(?:a\.m\.|p\.m\.|o'clock)|"
    rf"\b(?:{_MONTHS}|{_DAYS})\b|\bdegrees?\b|\b(?:sunny|cloudy|raining|snowing)\b",
    re.IGNORECASE,
)
_CLAIM = re.compile(
    r"\b(?:booked|reserved|i(?:'ve| have)? found|here are|is playing|now playing|transferred|"
    r"your balance is|scheduled|confirmed|purchased|it is sunny|it's sunny|"
    r"your (?:ride|table|reservation|booking|appointment|tickets?|car) (?:is|are|has|will))\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:can't|cannot|can not|unable|not able|don't have (?:access|the ability|a way)|"
    r"no access|i'm not sure|i don't know)\b",
    re.IGNORECASE,
)


def states_tool_fact(answer: str | None) -> bool:
    """An answer that claims a result only a tool could give: a claim of something done or
    found, or a number, price, time, date or temperature that is not part of a refusal."""
    text = (answer or "").replace("’", "'")
    if _CLAIM.search(text):
        return True
    return bool(_FACT.search(text)) and not _REFUSAL.search(text)
