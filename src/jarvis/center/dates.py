"""Resolve spoken relative dates ("tomorrow at 7:30", "next friday") to ISO-8601 datetimes.

The center exposes these functions as server-side tools (`resolve_relative_date`,
`get_current_datetime`) and pastes `common_date_table` into the system prompt, so that a
small model copies absolute dates instead of computing them. Pure standard library.

Choices (also in docs/relative-dates.md):

- Every result is a local wall time in the requested IANA zone, written with its offset.
  Day phrases without a time ("friday") give 00:00, the start of that day.
- Parts of the day: morning 09:00, afternoon 15:00, evening 19:00, night/tonight 21:00.
- A bare weekday ("friday") is its next occurrence, today excluded (1-7 days ahead);
  "this friday" includes today (0-6 days ahead); "next friday" is the friday of next
  week (weeks run Monday..Sunday); "last friday" is the most recent one before today.
- "this weekend" is Saturday and Sunday of this week; on a Sunday it is today only.
- "this week" is today..Sunday, "next week" is Monday..Sunday of next week.
- A time without a day ("at 5 pm", "noon") is its next occurrence: today if still ahead,
  otherwise tomorrow. A bare hour 1-6 without am/pm means the afternoon ("at 5" = 17:00).
- "midnight" attached to a day is the end of that day ("friday at midnight" = Saturday
  00:00); alone it is the coming midnight.
- "in 2 hours"/"30 minutes ago" count elapsed time from now; "in 3 days"/"a week ago" are
  calendar days and resolve to 00:00 like any other day phrase.
- Dates without a year ("march 3rd", "the 15th", "christmas") are the next occurrence,
  today included.
- A wall time inside a spring-forward gap moves forward by the gap; an ambiguous
  fall-back time takes its first (daylight) occurrence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jarvis.center.time_units import CALENDAR_UNITS, CLOCK_UNITS, unit_named, unit_pattern

__all__ = [
    "GET_CURRENT_DATETIME_TOOL",
    "RESOLVE_RELATIVE_DATE_TOOL",
    "SUPPORTED_EXAMPLES",
    "UnresolvableDateError",
    "common_date_table",
    "current_datetime_info",
    "render_date_table",
    "resolve_relative_date",
]

SUPPORTED_EXAMPLES: tuple[str, ...] = (
    "today",
    "tonight",
    "tomorrow morning",
    "the day after tomorrow",
    "this weekend",
    "next week",
    "friday",
    "next friday at noon",
    "in 2 hours",
    "in 3 days",
    "a week from now",
    "2 days ago",
    "at 5 pm",
    "next month",
    "end of the month",
    "christmas",
    "march 3rd",
    "the 15th",
    "2026-12-01",
)


class UnresolvableDateError(ValueError):
    """The phrase is not one the resolver understands; the message lists supported ones."""

    def __init__(self, phrase: str, reason: str | None = None) -> None:
        self.phrase = phrase
        detail = f" ({reason})" if reason else ""
        examples = ", ".join(repr(e) for e in SUPPORTED_EXAMPLES)
        super().__init__(
            f"cannot resolve the date phrase {phrase!r}{detail}; "
            f"supported phrases include {examples}"
        )


RESOLVE_RELATIVE_DATE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "resolve_relative_date",
        "description": (
            "Turn a relative date phrase the user said (e.g. 'tomorrow', 'next friday at "
            "noon', 'this weekend', 'in 2 hours') into absolute ISO-8601 datetimes with "
            "timezone offset. Returns a list: one item per day the phrase covers."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "phrase": {
                    "type": "string",
                    "description": "The date phrase exactly as the user said it.",
                },
                "timezone": {
                    "type": "string",
                    "description": "IANA timezone, e.g. 'America/New_York'. "
                    "Defaults to the user's timezone.",
                },
            },
            "required": ["phrase"],
        },
    },
}

GET_CURRENT_DATETIME_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_current_datetime",
        "description": "Get the current date, time and weekday in the user's timezone.",
        "parameters": {
            "type": "object",
            "properties": {
                "timezone": {
                    "type": "string",
                    "description": "IANA timezone, e.g. 'Europe/Berlin'. "
                    "Defaults to the user's timezone.",
                },
            },
            "required": [],
        },
    },
}

# --- vocabulary -------------------------------------------------------------------------

_WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0,
    "tuesday": 1, "tue": 1, "tues": 1,
    "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3,
    "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5,
    "sunday": 6, "sun": 6,
}  # fmt: skip
_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3,
    "april": 4, "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7,
    "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10,
    "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip

# Speech recognisers and hurried typists produce these; map them before parsing.
_TYPOS: dict[str, str] = {
    "tomorow": "tomorrow", "tommorow": "tomorrow", "tommorrow": "tomorrow",
    "tomorro": "tomorrow", "tomorrows": "tomorrow", "tmrw": "tomorrow", "tmr": "tomorrow",
    "2morrow": "tomorrow", "tonite": "tonight", "2nite": "tonight", "tonights": "tonight",
    "todays": "today", "yesterdays": "yesterday", "yesteday": "yesterday",
    "wensday": "wednesday", "wendsday": "wednesday", "wednsday": "wednesday",
    "wedensday": "wednesday", "wednessday": "wednesday", "thurday": "thursday",
    "thursdsay": "thursday", "thrusday": "thursday", "thirsday": "thursday",
    "tuseday": "tuesday", "teusday": "tuesday", "tuesay": "tuesday", "fryday": "friday",
    "firday": "friday", "saterday": "saturday", "satuday": "saturday", "sundy": "sunday",
    "mondy": "monday", "xmas": "christmas", "chrismas": "christmas",
    "christmass": "christmas", "weekends": "weekend", "mornin": "morning",
}  # fmt: skip

_UNIT_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS_WORDS: dict[str, int] = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
_ORDINAL_WORDS: dict[str, int] = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
    "thirteenth": 13, "fourteenth": 14, "fifteenth": 15, "sixteenth": 16,
    "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "thirtieth": 30,
}  # fmt: skip

_PART_HOURS: dict[str, int] = {"morning": 9, "afternoon": 15, "evening": 19, "night": 21}

# Words that carry no date meaning here; "in" and "a" are kept (they matter for "in a week").
_FILLER = frozenset(
    {"on", "the", "for", "at", "by", "of", "until", "till", "around", "about", "um", "uh",
     "please", "sometime"}
)  # fmt: skip


def _alternation(words: Any) -> str:
    # Longest first so "thursday" wins over "thu" inside one alternation.
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


_NUM_WORD_RE = (
    rf"(?:(?:{_alternation(_TENS_WORDS)})(?: (?:{_alternation(_UNIT_WORDS)}))?"
    rf"|{_alternation(_UNIT_WORDS)})"
)
_HOUR_RE = rf"(?:\d{{1,2}}|{_alternation(w for w, n in _UNIT_WORDS.items() if 1 <= n <= 12)})"
_WEEKDAY_RE = _alternation(_WEEKDAYS)
_MONTH_RE = _alternation(_MONTHS)
_ORDINAL_WORD_RE = (
    rf"(?:(?:twenty|thirty) (?:{_alternation(w for w, n in _ORDINAL_WORDS.items() if n < 10)})"
    rf"|{_alternation(_ORDINAL_WORDS)})"
)
_DAY_NUM_RE = rf"(?:\d{{1,2}}(?:st|nd|rd|th)?|{_ORDINAL_WORD_RE})"


def _number(text: str) -> float:
    """Digits or words ("12", "1.5", "twenty five", "a", "a couple of") as a number."""
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if text in ("a", "an", "one"):
        return 1.0
    if text in ("a couple of", "a couple", "couple of", "couple"):
        return 2.0
    if text in ("half an", "half a"):
        return 0.5
    parts = text.split()
    if len(parts) == 2 and parts[0] in _TENS_WORDS and parts[1] in _UNIT_WORDS:
        return float(_TENS_WORDS[parts[0]] + _UNIT_WORDS[parts[1]])
    if text in _TENS_WORDS:
        return float(_TENS_WORDS[text])
    return float(_UNIT_WORDS[text])


def _hour_number(text: str) -> int:
    return int(text) if text.isdigit() else _UNIT_WORDS[text]


def _day_number(text: str) -> int:
    """Day of month from "3rd", "15", "third" or "twenty first"."""
    digits = re.match(r"\d+", text)
    if digits:
        return int(digits.group())
    parts = text.split()
    if len(parts) == 2:
        return _TENS_WORDS[parts[0]] + _ORDINAL_WORDS[parts[1]]
    return _ORDINAL_WORDS[text]


# --- time zone and wall-time helpers ----------------------------------------------------


def _zone(name: str) -> ZoneInfo:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"invalid timezone {name!r}: expected an IANA name like 'Europe/Berlin'")
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(
            f"unknown timezone {name!r}: expected an IANA name like 'Europe/Berlin'"
        ) from exc


def _reference(now: datetime | None, zone: ZoneInfo) -> datetime:
    if now is None:
        return datetime.now(zone).replace(microsecond=0)
    if now.tzinfo is None or now.utcoffset() is None:
        # A naive reference is read as a wall time in the requested zone.
        return now.replace(tzinfo=zone, microsecond=0)
    return now.astimezone(zone).replace(microsecond=0)


def _local(day: date, at: time, zone: ZoneInfo) -> datetime:
    """The wall time `at` on `day` in `zone`, normalised across DST transitions."""
    aware = datetime.combine(day, at).replace(tzinfo=zone)
    # The round trip moves a time inside a spring-forward gap forward by the gap.
    return aware.astimezone(UTC).astimezone(zone)


def _iso(value: datetime) -> str:
    return value.isoformat(timespec="seconds")


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, min(day.day, _days_in_month(year, month)))


def _days_in_month(year: int, month: int) -> int:
    following = date(year + month // 12, month % 12 + 1, 1)
    return (following - timedelta(days=1)).day


def _next_annual(today: date, month: int, day: int) -> date:
    """The next `month`/`day`, today included; skips years where it does not exist."""
    for year in range(today.year, today.year + 9):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= today:
            return candidate
    raise ValueError(f"no date {month}-{day}")


def _thanksgiving(year: int) -> date:
    # US Thanksgiving: the fourth Thursday of November.
    first = date(year, 11, 1)
    return first + timedelta(days=(3 - first.weekday()) % 7 + 21)


# --- the parser -------------------------------------------------------------------------


def _normalize(phrase: str) -> str:
    text = phrase.lower().replace("\u2019", "'").strip()
    text = re.sub(r"\b([ap])\.\s?m\b\.?", r"\1m", text)  # "p.m." -> "pm"
    text = re.sub(r"\bo'?\s?clock\b", "oclock", text)
    text = re.sub(r"(\w)'s\b", r"\1", text)  # "thursday's" -> "thursday"
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)  # "twenty-five" -> "twenty five"
    text = re.sub(r"[^\w:\-./ ]", " ", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)  # keep only decimal points
    text = re.sub(r"(?<!\d)-|-(?!\d)", " ", text)  # keep only hyphens inside numbers
    words = [_TYPOS.get(w, w) for w in text.split()]
    text = " ".join(words)
    text = re.sub(r"\bto (day|night|morrow)\b", r"to\1", text)
    text = re.sub(r"\bweek end\b", "weekend", text)
    text = re.sub(r"\bafter noon\b", "afternoon", text)
    text = re.sub(r"\bmid (night|day)\b", r"mid\1", text)
    text = re.sub(r"\b(this|the) (upcoming|coming)\b", "this", text)
    text = re.sub(r"\b(upcoming|coming)\b", "this", text)
    # "the 9th of this month" is the 9th: this month's, or next month's once past.
    text = re.sub(rf"\b({_DAY_NUM_RE}) of (?:this|the) month\b", r"\1", text)
    return text


_TIME_PATTERNS: tuple[tuple[str, str], ...] = (
    ("named", r"\b(?:at )?(noon|midday|midnight)\b"),
    ("ampm", rf"\b(?:at )?({_HOUR_RE})(?:[:.](\d{{2}}))?\s?(am|pm)\b"),
    ("ampm_words", rf"\b(?:at )?({_HOUR_RE}) (fifteen|thirty|forty five) (am|pm)\b"),
    ("past", rf"\b(?:at )?(?:a )?(half|quarter) past ({_HOUR_RE})(?: oclock)?\b"),
    ("to", rf"\b(?:at )?(?:a )?quarter to ({_HOUR_RE})(?: oclock)?\b"),
    ("colon", r"\b(?:at )?(\d{1,2}):(\d{2})\b"),
    ("oclock", rf"\b(?:at )?({_HOUR_RE}) oclock\b"),
    # "8 in the evening": a bare hour is a time only when a part of the day follows.
    (
        "before_part",
        rf"\b({_HOUR_RE})(?::(\d{{2}}))?(?= in the (?:morning|afternoon|evening)\b"
        r"| at night\b| tonight\b)",
    ),
    ("at", rf"\bat ({_HOUR_RE})(?: (fifteen|thirty|forty five))?\b"),
)


class _ClockTime:
    """A time of day as said: hour/minute plus whether am/pm pinned it down."""

    def __init__(self, hour: int, minute: int, pinned: bool, literal: bool = False) -> None:
        self.hour = hour
        self.minute = minute
        # am/pm, noon/midnight or a 24-hour form ("17:00", "07:30") say which half of the day.
        self.pinned = pinned
        self.literal = literal


_MIDNIGHT = _ClockTime(24, 0, pinned=True)


def _time_match(text: str) -> tuple[str, re.Match[str]] | None:
    """The first time of day in `text` by pattern priority: the pattern's kind and match."""
    for kind, pattern in _TIME_PATTERNS:
        match = re.search(pattern, text)
        if match:
            return kind, match
    return None


def _extract_time(text: str, phrase: str) -> tuple[_ClockTime | None, str]:
    found = _time_match(text)
    if found is None:
        return None, text
    kind, match = found
    rest = (text[: match.start()] + " " + text[match.end() :]).strip()
    if re.search(r"\d{1,2}:\d{2}|\b\d{1,2}\s?(am|pm)\b|\bnoon\b|\bmidnight\b", rest):
        raise UnresolvableDateError(phrase, "more than one time of day")
    return _clock(kind, match.groups(), phrase), rest


_MINUTE_WORDS = {"fifteen": 15, "thirty": 30, "forty five": 45}


def _clock(kind: str, groups: tuple[Any, ...], phrase: str) -> _ClockTime:
    if kind == "named":
        return _MIDNIGHT if groups[0] == "midnight" else _ClockTime(12, 0, pinned=True)
    if kind in ("ampm", "ampm_words"):
        hour = _hour_number(groups[0])
        if kind == "ampm":
            minute = int(groups[1]) if groups[1] else 0
        else:
            minute = _MINUTE_WORDS[groups[1]]
        if not 1 <= hour <= 12 or minute > 59:
            raise UnresolvableDateError(phrase, "not a valid time of day")
        hour = hour % 12 + (12 if groups[2] == "pm" else 0)
        return _ClockTime(hour, minute, pinned=True)
    if kind == "past":
        hour = _hour_number(groups[1])
        return _checked(hour, 30 if groups[0] == "half" else 15, phrase)
    if kind == "to":
        hour = _hour_number(groups[0])
        return _checked((hour - 1) % 12 or 12, 45, phrase)
    if kind == "colon":
        hour, minute = int(groups[0]), int(groups[1])
        # A leading zero or an hour past 12 is a 24-hour clock reading: take it literally.
        literal = groups[0].startswith("0") or hour == 0 or hour > 12
        return _checked(hour, minute, phrase, literal=literal)
    if kind == "before_part":
        return _checked(_hour_number(groups[0]), int(groups[1] or 0), phrase)
    if kind == "oclock":
        return _checked(_hour_number(groups[0]), 0, phrase)
    hour = _hour_number(groups[0])
    minute = _MINUTE_WORDS[groups[1]] if groups[1] else 0
    return _checked(hour, minute, phrase, literal=hour == 0 or hour > 12)


def _checked(hour: int, minute: int, phrase: str, literal: bool = False) -> _ClockTime:
    if hour > 23 or minute > 59:
        raise UnresolvableDateError(phrase, "not a valid time of day")
    return _ClockTime(hour, minute, pinned=literal, literal=literal)


def _wall_time(clock: _ClockTime | None, part: str | None) -> tuple[int, time]:
    """(days to add, time of day) for a spoken time and part of the day."""
    if clock is None:
        return 0, time(_PART_HOURS[part] if part else 0)
    if clock is _MIDNIGHT:
        # "friday at midnight" is said of friday night: the end of that day.
        return 1, time(0)
    hour = clock.hour
    if not clock.pinned:
        if part == "night" and hour == 12:
            return 1, time(0, clock.minute)
        if part == "night" and 1 <= hour <= 5:
            # "tonight at 2" is the small hours after tonight, not 2 pm.
            return 1, time(hour, clock.minute)
        if part in ("afternoon", "evening", "night") and 1 <= hour <= 11:
            hour += 12
        elif part is None and 1 <= hour <= 6:
            # Nobody means 5 a.m. by a bare "at 5"; an explicit "5 am" still works.
            hour += 12
    return 0, time(hour, clock.minute)


def _extract_part(text: str, phrase: str) -> tuple[str | None, str]:
    text = re.sub(r"\blast night\b", "yesterday night", text)
    text = re.sub(r"\btonight\b", "today night", text)
    text = re.sub(r"\bthis (morning|afternoon|evening)\b", r"today \1", text)
    text = re.sub(r"\b(?:in the|at) (morning|afternoon|evening|night)\b", r"\1", text)
    found = re.findall(r"\b(morning|afternoon|evening|night)\b", text)
    if len(set(found)) > 1:
        raise UnresolvableDateError(phrase, "more than one part of the day")
    if not found:
        return None, text
    rest = re.sub(r"\b(morning|afternoon|evening|night)\b", " ", text)
    return found[0], " ".join(rest.split())


_DAY_UNITS = unit_pattern(CALENDAR_UNITS, short=False)
_TIME_UNITS = unit_pattern(CLOCK_UNITS)
_QTY_RE = rf"(?:\d+(?:\.\d+)?|a couple of|a couple|couple of|half an|half a|an|a|{_NUM_WORD_RE})"
_OFFSET_RE = re.compile(
    rf"^(?:(?P<in>in|within) )?(?:(?P<qty>{_QTY_RE})(?P<half1> and a half)? )?"
    rf"(?P<unit>{_DAY_UNITS}|{_TIME_UNITS})(?P<half2> and a half)?(?: time)?"
    rf"(?: (?P<dir>from now|later|ago|from (?P<base>.+)|after (?P<after>.+)"
    rf"|before (?P<before>.+)))?$"
)


def _offset(text: str, phrase: str) -> tuple[str, float, str | None] | None:
    """(unit, signed amount, base day phrase or None) for "in 3 days", "2 hours ago"."""
    match = _OFFSET_RE.match(text)
    if not match or not (match.group("in") or match.group("dir")):
        return None
    if match.group("qty") is None and (match.group("in") or match.group("unit").endswith("s")):
        # "week from friday" means one week; "in week" or "days ago" say no amount.
        return None
    if match.group("in") and match.group("dir") in ("ago",):
        raise UnresolvableDateError(phrase, "both 'in' and 'ago'")
    amount = _number(match.group("qty") or "one")
    if match.group("half1") or match.group("half2"):
        amount += 0.5
    unit = unit_named(match.group("unit")) or match.group("unit")
    if unit == "fortnight":
        unit, amount = "day", amount * 14
    sign = -1.0 if match.group("dir") == "ago" or match.group("before") else 1.0
    base = match.group("base") or match.group("after") or match.group("before")
    if base in ("now", "right now"):
        base = None
    return unit, sign * amount, base


def _weekend(today: date, which: str) -> list[date]:
    weekday = today.weekday()
    saturday = today - timedelta(days=1) if weekday == 6 else today + timedelta(days=5 - weekday)
    if which == "this":
        # On a Sunday the weekend's Saturday is over: "this weekend" is what is left, today.
        return [today] if weekday == 6 else [saturday, saturday + timedelta(days=1)]
    shift = 7 if which == "next" else -7
    return [saturday + timedelta(days=shift), saturday + timedelta(days=shift + 1)]


def _week(today: date, which: str) -> list[date]:
    monday = today - timedelta(days=today.weekday())
    if which == "this":
        return [today + timedelta(days=i) for i in range(7 - today.weekday())]
    start = monday + timedelta(days=7 if which == "next" else -7)
    return [start + timedelta(days=i) for i in range(7)]


def _weekday(today: date, target: int, modifier: str | None) -> date:
    current = today.weekday()
    if modifier in (None, ""):
        return today + timedelta(days=(target - current) % 7 or 7)
    if modifier == "this":
        return today + timedelta(days=(target - current) % 7)
    if modifier == "next":
        return today + timedelta(days=7 - current + target)
    if modifier == "last":
        return today - timedelta(days=(current - target) % 7 or 7)
    monday = today - timedelta(days=current)
    shift = {"this week": 0, "next week": 7, "last week": -7}[modifier]
    return monday + timedelta(days=shift + target)


_HOLIDAYS: dict[str, Callable[[date], date]] = {
    "christmas eve": lambda t: _next_annual(t, 12, 24),
    "christmas": lambda t: _next_annual(t, 12, 25),
    "christmas day": lambda t: _next_annual(t, 12, 25),
    "boxing day": lambda t: _next_annual(t, 12, 26),
    "new year eve": lambda t: _next_annual(t, 12, 31),
    "new years eve": lambda t: _next_annual(t, 12, 31),
    "new year": lambda t: _next_annual(t, 1, 1),
    "new years": lambda t: _next_annual(t, 1, 1),
    "new year day": lambda t: _next_annual(t, 1, 1),
    "new years day": lambda t: _next_annual(t, 1, 1),
    "halloween": lambda t: _next_annual(t, 10, 31),
    "valentine": lambda t: _next_annual(t, 2, 14),
    "valentine day": lambda t: _next_annual(t, 2, 14),
    "valentines day": lambda t: _next_annual(t, 2, 14),
    "independence day": lambda t: _next_annual(t, 7, 4),
    "thanksgiving day": lambda t: _HOLIDAYS["thanksgiving"](t),
    "thanksgiving": lambda t: (
        _thanksgiving(t.year) if _thanksgiving(t.year) >= t else _thanksgiving(t.year + 1)
    ),
}


def _explicit_date(text: str, today: date, phrase: str) -> date | None:
    match = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
    if match:
        return _valid_date(int(match[1]), int(match[2]), int(match[3]), phrase)
    match = re.fullmatch(rf"({_MONTH_RE}) ({_DAY_NUM_RE})(?: (\d{{4}}))?", text)
    month_first = match is not None
    if match is None:
        match = re.fullmatch(rf"({_DAY_NUM_RE}) ({_MONTH_RE})(?: (\d{{4}}))?", text)
    if match:
        month_word, day_word = (match[1], match[2]) if month_first else (match[2], match[1])
        month, day = _MONTHS[month_word], _day_number(day_word)
        if match[3]:
            return _valid_date(int(match[3]), month, day, phrase)
        _valid_date(2028, month, day, phrase)  # a leap year: rejects only impossible dates
        return _next_annual(today, month, day)
    match = re.fullmatch(rf"(\d{{1,2}}(?:st|nd|rd|th)|{_ORDINAL_WORD_RE})", text)
    if match:
        day = _day_number(match[1])
        if not 1 <= day <= 31:
            raise UnresolvableDateError(phrase, f"there is no day {day} in a month")
        # The next month (this one included) that has this day and where it is not past.
        candidate = date(today.year, today.month, 1)
        while True:
            if day <= _days_in_month(candidate.year, candidate.month):
                found = candidate.replace(day=day)
                if found >= today:
                    return found
            candidate = _add_months(candidate, 1)
    return None


def _valid_date(year: int, month: int, day: int, phrase: str) -> date:
    try:
        return date(year, month, day)
    except ValueError as exc:
        raise UnresolvableDateError(phrase, f"no such date: {exc}") from exc


def _days(text: str, today: date, phrase: str) -> list[date] | None:
    """The days a day phrase covers; None when no day was said at all."""
    if text == "":
        return None
    simple = {
        "today": 0, "tomorrow": 1, "yesterday": -1,
        "day after tomorrow": 2, "day before yesterday": -2,
    }  # fmt: skip
    if text in simple:
        return [today + timedelta(days=simple[text])]
    match = re.fullmatch(r"(?:(this|next|last) )?weekend", text)
    if match:
        return _weekend(today, match[1] or "this")
    match = re.fullmatch(r"(this|next|last|rest) week", text)
    if match:
        return _week(today, "this" if match[1] == "rest" else match[1])
    match = re.fullmatch(
        rf"(?:(this|next|last) )?({_WEEKDAY_RE})(?: (this week|next week|last week))?", text
    ) or re.fullmatch(rf"()((?:this|next|last) week) ({_WEEKDAY_RE})", text)
    if match and match[2] in _WEEKDAYS:
        if match[1] and match[3]:
            raise UnresolvableDateError(phrase, "two different week references")
        return [_weekday(today, _WEEKDAYS[match[2]], match[1] or match[3])]
    if match:
        # "next week monday": the same as "monday next week".
        return [_weekday(today, _WEEKDAYS[match[3]], match[2])]
    first_of_month = today.replace(day=1)
    months = {
        "next month": _add_months(first_of_month, 1),
        "beginning next month": _add_months(first_of_month, 1),
        "start next month": _add_months(first_of_month, 1),
        "last month": _add_months(first_of_month, -1),
        "end month": _add_months(first_of_month, 1) - timedelta(days=1),
        "end this month": _add_months(first_of_month, 1) - timedelta(days=1),
        "end next month": _add_months(first_of_month, 2) - timedelta(days=1),
        "next year": date(today.year + 1, 1, 1),
        "end year": date(today.year, 12, 31),
        "end this year": date(today.year, 12, 31),
    }
    if text in months:
        return [months[text]]
    if text in _HOLIDAYS:
        return [_HOLIDAYS[text](today)]
    explicit = _explicit_date(text, today, phrase)
    if explicit is not None:
        return [explicit]
    offset = _offset(text, phrase)
    if offset is not None:
        unit, amount, base = offset
        if unit not in ("day", "week", "month", "year"):
            raise UnresolvableDateError(phrase, "an hour offset cannot be combined with a day")
        start = today
        if base is not None:
            base_days = _days(base, today, phrase)
            if not base_days or len(base_days) != 1:
                raise UnresolvableDateError(phrase, f"{base!r} is not a single day")
            start = base_days[0]
        return [_shift_days(start, unit, amount, phrase)]
    raise UnresolvableDateError(phrase)


def _shift_days(start: date, unit: str, amount: float, phrase: str) -> date:
    if amount != int(amount):
        raise UnresolvableDateError(phrase, f"a fraction of a {unit} is not a calendar date")
    count = int(amount)
    try:
        if unit == "day":
            return start + timedelta(days=count)
        if unit == "week":
            return start + timedelta(weeks=count)
        return _add_months(start, count * (12 if unit == "year" else 1))
    except (OverflowError, ValueError) as exc:
        raise UnresolvableDateError(phrase, "too far away for the calendar") from exc


def resolve_relative_date(phrase: str, timezone: str, now: datetime | None = None) -> list[str]:
    """Resolve a spoken date phrase to ISO-8601 datetimes with offset in `timezone`.

    `now` is the reference instant (aware; a naive one is read as wall time in `timezone`;
    default: the current time). Returns one datetime per day the phrase covers, in order.
    Raises `UnresolvableDateError` for phrases it does not understand and `ValueError`
    for an unknown timezone.
    """
    zone = _zone(timezone)
    reference = _reference(now, zone)
    if not isinstance(phrase, str) or not phrase.strip():
        raise UnresolvableDateError(str(phrase), "empty phrase")
    iso = _iso_literal(phrase.strip(), zone)
    if iso is not None:
        return [_iso(iso)]
    text = _normalize(phrase)
    if text in ("now", "right now", "just now"):
        return [_iso(reference)]
    # Elapsed-time offsets ("in 2 hours") are instants: no day or time of day may follow.
    offset = _offset(" ".join(w for w in text.split() if w not in _FILLER), phrase)
    if offset is not None and offset[0] in ("hour", "minute", "second"):
        unit, amount, base = offset
        if base is not None:
            raise UnresolvableDateError(phrase, "hour offsets count from now only")
        try:
            moment = reference.astimezone(UTC) + timedelta(**{f"{unit}s": amount})
        except OverflowError as exc:
            raise UnresolvableDateError(phrase, "too far away for the calendar") from exc
        return [_iso(moment.astimezone(zone))]
    clock, text = _extract_time(text, phrase)
    part, text = _extract_part(text, phrase)
    text = " ".join(w for w in text.split() if w not in _FILLER)
    days = _days(text, reference.date(), phrase)
    extra_days, at = _wall_time(clock, part)
    if days is None:
        if clock is None and part is None:
            raise UnresolvableDateError(phrase)
        # A time with no day is its next occurrence: today if still ahead, else tomorrow.
        first = _local(reference.date() + timedelta(days=extra_days), at, zone)
        if first <= reference:
            first = _local(reference.date() + timedelta(days=extra_days + 1), at, zone)
        return [_iso(first)]
    return [_iso(_local(day + timedelta(days=extra_days), at, zone)) for day in days]


def _iso_literal(text: str, zone: ZoneInfo) -> datetime | None:
    """An ISO datetime the model passed through as is ("2026-12-01T09:00")."""
    if not re.fullmatch(
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?",
        text,
        flags=re.IGNORECASE,
    ):
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        return _local(value.date(), value.time().replace(microsecond=0), zone)
    return value.astimezone(zone).replace(microsecond=0)


def current_datetime_info(timezone: str, now: datetime | None = None) -> dict[str, str]:
    """What the `get_current_datetime` server tool returns."""
    zone = _zone(timezone)
    reference = _reference(now, zone)
    return {
        "datetime": _iso(reference),
        "date": reference.date().isoformat(),
        "weekday": _WEEKDAY_NAMES[reference.weekday()].capitalize(),
        "time": reference.strftime("%H:%M"),
        "timezone": timezone.strip(),
    }


_TABLE_PHRASES: tuple[str, ...] = (
    "today",
    "tonight",
    "tomorrow",
    "tomorrow morning",
    "the day after tomorrow",
    "yesterday",
    "this weekend",
    "next weekend",
    "this week",
    "next week",
    "next month",
)


def common_date_table(timezone: str, now: datetime | None = None) -> dict[str, list[str]]:
    """The resolved values of the most common phrases, for the system prompt.

    Weekday names come in the order they next occur (tomorrow first), so that the model
    reads them as a calendar of the coming week.
    """
    reference = _reference(now, _zone(timezone))
    return {phrase: list(values) for phrase, values in _date_table(timezone, reference).items()}


@lru_cache(maxsize=64)
def _date_table(timezone: str, reference: datetime) -> dict[str, list[str]]:
    # Cached: one request reads the table for its prompt and for every date it weighs.
    table = {p: resolve_relative_date(p, timezone, reference) for p in _TABLE_PHRASES}
    for ahead in range(1, 8):
        name = _WEEKDAY_NAMES[(reference.weekday() + ahead) % 7]
        table[name] = resolve_relative_date(name, timezone, reference)
    return table


def render_date_table(table: dict[str, list[str]]) -> str:
    """One line per phrase ("tomorrow: 2026-11-23T00:00:00-05:00"), for the prompt."""
    return "\n".join(f"{phrase}: {', '.join(values)}" for phrase, values in table.items())


def _time_said(text: str) -> str | None:
    """The time of day said in `text` ("at 5 pm"), as written there."""
    found = _time_match(text)
    return found[1].group(0).strip() if found else None


def times_heard(utterance: str) -> list[str]:
    """The clock time said in `utterance` ("at 7:30 pm") as HH:MM; [] when none.

    Without am/pm ("at 7") both halves of the day are possible and both are returned.
    """
    text = " " + " ".join(re.findall(r"[a-z0-9:]+", utterance.lower().replace("'", ""))) + " "
    try:
        clock, _ = _extract_time(text, utterance)
    except UnresolvableDateError:  # two times, or none that exists: nothing to offer
        return []
    if clock is None:
        return []
    hours = [clock.hour % 24]
    if not clock.pinned and not clock.literal and clock.hour < 12:
        hours.append(clock.hour + 12)
    return [f"{hour:02d}:{clock.minute:02d}" for hour in hours]


def dates_heard(utterance: str, timezone: str, now: datetime | None = None) -> list[list[str]]:
    """The values of the common date phrases `utterance` contains, one list per phrase.

    Longest phrases first and without overlap ("tomorrow morning" is not also "tomorrow"),
    in the order they are said; "next"/"last"/"this" before a phrase and a time of day
    said anywhere ("at 5 pm") are resolved with it. A small model copies one of these
    instead of picking a line of the date table (measured: it takes the wrong weekday
    when left to choose).
    """
    zone = _zone(timezone)
    reference = _reference(now, zone)
    table = common_date_table(timezone, reference)
    words = [_TYPOS.get(w, w) for w in re.findall(r"[a-z0-9':]+", utterance.lower())]
    text = " " + " ".join(words) + " "
    clock = _time_said(text.replace("'", ""))
    found: list[tuple[int, list[str]]] = []
    # Phrases that hold a table phrase: "monday next week" is one day, not two phrases.
    text = _take_phrases(_COMPOUND_DATES, text, clock, timezone, reference, found)
    for phrase in sorted(table, key=len, reverse=True):
        needle = f" {phrase} "
        start = text.find(needle)
        while start >= 0:
            before = text[:start].split()[-1:]
            said = phrase
            if before and before[0] in ("next", "last", "this") and not phrase.startswith(
                    ("next", "last", "this")):
                said = f"{before[0]} {phrase}"
            if clock:
                said = f"{said} {clock}"
            try:
                values = resolve_relative_date(said, timezone, reference)
            except ValueError:
                values = table[phrase]
            text = text[:start] + " " + "#" * (len(needle) - 2) + " " + text[start + len(needle):]
            found.append((start, values))
            start = text.find(needle)
    # Phrases no table holds: "in 3 days", "march 3rd", "the 5th of june".
    _take_phrases(_SPOKEN_DATES, text, clock, timezone, reference, found)
    return [values for _, values in sorted(found, key=lambda item: item[0])]


def _take_phrases(
    patterns: tuple[re.Pattern[str], ...], text: str, clock: str | None, timezone: str,
    reference: datetime, found: list[tuple[int, list[str]]],
) -> str:
    """Resolve each phrase `patterns` find in `text` into `found` (position, values);
    returns `text` with them masked ("#"), so a shorter pattern does not take them again."""
    for pattern in patterns:
        for match in list(pattern.finditer(text)):
            said = f"{match.group(0).strip()} {clock}" if clock else match.group(0).strip()
            try:
                found.append((match.start(), resolve_relative_date(said, timezone, reference)))
            except ValueError:
                continue
            text = text[:match.start()] + "#" * len(match.group(0)) + text[match.end():]
    return text


def offsets_reach(utterance: str, timezone: str, now: datetime | None = None) -> list[str]:
    """The clock times (HH:MM) the elapsed times said reach: "in 20 minutes" said at
    18:35 is 18:55."""
    text = " " + " ".join(re.findall(r"[a-z0-9':]+", utterance.lower())) + " "
    reached: list[str] = []
    for match in _ELAPSED.finditer(text):
        try:
            [value] = resolve_relative_date(match.group(0).strip(), timezone, now)
        except ValueError:  # too far away, or no offset after all
            continue
        reached.append(value[11:16])
    return reached


# Matched before the table phrases they hold, then masked with "#".
_COMPOUND_DATES = (
    re.compile(rf"(?<= )(?:{_WEEKDAY_RE}) (?:this|next) week(?= )"),
    re.compile(rf"(?<= )(?:this|next) week (?:{_WEEKDAY_RE})(?= )"),
    re.compile(rf"(?<= )(?:the )?{_DAY_NUM_RE} of (?:this|the) month(?= )"),
)
_ELAPSED = re.compile(rf"(?<= )in (?:{_QTY_RE}) (?:{_TIME_UNITS})(?= )")
# Matched on the words left after the table phrases (masked with "#"), so never twice.
_SPOKEN_DATES = (
    re.compile(rf"(?<= )in (?:{_QTY_RE}) (?:{_DAY_UNITS}|{_TIME_UNITS})(?= )"),
    re.compile(rf"(?<= )(?:the )?{_DAY_NUM_RE} of (?:{_MONTH_RE})(?= )"),
    re.compile(rf"(?<= )(?:{_MONTH_RE}) (?:the )?{_DAY_NUM_RE}(?= )"),
    # "for the 12th": a day of the month in digits; "the first" is as often no date.
    re.compile(r"(?<= )the \d{1,2}(?:st|nd|rd|th)(?= )"),
)
