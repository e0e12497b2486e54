"""Day and time phrases inside free text, compared with the moment a command settled on.

A model often leaves the when inside a reminder's text ("call mom tomorrow at 5pm") while
also passing it as a date and a time; a confirmation that speaks both says it twice.
`drop_said_when(text, due, now)` removes the phrases that name the moment the command will
speak itself and keeps the others ("tell Sam the party is on friday", due today at 5).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from jarvis.commands._durations import parse_duration

__all__ = ["drop_said_when", "parse_clock_text"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = r"(?P<month>" + "|".join(m[:3] + f"(?:{m[3:]})?" for m in _MONTHS) + r")\.?"
_ORDINAL = r"(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?"
_CLOCK_TEXT = re.compile(
    r"(?P<h>[0-9]{1,2})(?::(?P<m>[0-9]{2}))?(?::[0-9]{2})?\s*(?P<ampm>[ap]\.?\s?m\.?)?"
)
# Hours of each part of the day, as people use the words.
_PARTS = {"morning": range(5, 12), "afternoon": range(12, 17), "evening": range(17, 22),
          "night": (*range(20, 24), *range(0, 5))}
# A due time computed from "in 10 minutes" a moment ago still names the same moment.
_SLACK = dt.timedelta(minutes=5)


def parse_clock_text(text: str) -> str | None:
    """"5 pm", "5:30pm", "17:00", "noon" -> "HH:MM"; None when it is no clock time."""
    cleaned = text.strip().lower()
    if cleaned in ("noon", "midday"):
        return "12:00"
    if cleaned == "midnight":
        return "00:00"
    m = _CLOCK_TEXT.fullmatch(cleaned)
    if not m:
        return None
    hour, minute = int(m["h"]), int(m["m"] or 0)
    if m["ampm"]:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m["ampm"].startswith("p") else 0)
    elif m["m"] is None:
        return None  # a bare number is not clearly a time
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


Matcher = Callable[[re.Match[str], dt.datetime, dt.datetime], bool]


def _weekday(m: re.Match[str], due: dt.datetime, now: dt.datetime) -> bool:
    return _WEEKDAYS[due.weekday()] == m["weekday"].lower()


def _days_ahead(days: int) -> Matcher:
    return lambda m, due, now: (due.date() - now.date()).days == days


def _calendar_day(m: re.Match[str], due: dt.datetime, now: dt.datetime) -> bool:
    month = m.groupdict().get("month")
    if month and _MONTHS[due.month - 1][:3] != month.lower()[:3]:
        return False
    return int(m["day"]) == due.day


def _clock(m: re.Match[str], due: dt.datetime, now: dt.datetime) -> bool:
    return parse_clock_text(m["clock"]) == f"{due.hour:02d}:{due.minute:02d}"


def _hour(m: re.Match[str], due: dt.datetime, now: dt.datetime) -> bool:
    # "at 5" is 5 or 17 o'clock; either names a due time of 17:00.
    return due.minute == 0 and int(m["hour"]) % 12 == due.hour % 12


def _part_of_day(m: re.Match[str], due: dt.datetime, now: dt.datetime) -> bool:
    return due.hour in _PARTS[m["part"].lower()]


def _from_now(m: re.Match[str], due: dt.datetime, now: dt.datetime) -> bool:
    span = parse_duration(m["span"])
    if span is None:
        return False
    if span >= dt.timedelta(days=1):
        return due.date() == (now + span).date()
    return abs(due - now - span) <= _SLACK


_PHRASES: list[tuple[re.Pattern[str], Matcher]] = [(re.compile(p, re.I), f) for p, f in [
    (r"\b(?:on |this |next |coming )?(?P<weekday>" + "|".join(_WEEKDAYS) + r")s?\b", _weekday),
    (r"\b(?:today|tonight)\b", _days_ahead(0)),
    (r"\btomorrow\b", _days_ahead(1)),
    (r"\b(?:the )?day after tomorrow\b", _days_ahead(2)),
    (rf"\b(?:on )?(?:the )?{_MONTH} (?:the )?{_ORDINAL}\b", _calendar_day),
    (rf"\b(?:on )?the {_ORDINAL}(?: of {_MONTH})?\b", _calendar_day),
    (r"\b(?:at |by |around )?(?P<clock>[0-9]{1,2}(?::[0-9]{2})?\s*[ap]\.?\s?m\b\.?"
     r"|[0-9]{1,2}:[0-9]{2}|noon|midday|midnight)", _clock),
    (r"\bat (?P<hour>[0-9]{1,2})(?: o'?clock)?\b(?![:0-9]|\s*[ap]\.?\s?m\b)", _hour),
    (r"\b(?:in the |this |at )?(?P<part>morning|afternoon|evening|night)\b", _part_of_day),
    (r"\bin (?P<span>(?:[\w.-]+ ){1,3}?(?:seconds?|minutes?|hours?|days?|weeks?))\b",
     _from_now),
]]
_LOOSE_ENDS = re.compile(r"^(?:(?:at|on|by|in|and|then)\b|[\s,;:.-])+|(?:\b(?:at|on|by|in|and|"
                         r"then)|[\s,;:-])+$", re.I)


def _said_spans(text: str, due: dt.datetime, now: dt.datetime) -> list[tuple[int, int]]:
    """Where `text` names `due` (merged, in order)."""
    spans = sorted(
        m.span() for pattern, agrees in _PHRASES for m in pattern.finditer(text)
        if agrees(m, due, now)
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def drop_said_when(text: str, due: dt.datetime, now: dt.datetime) -> str:
    """`text` without the day and time phrases that name `due` (both in the same zone)."""
    kept, position = [], 0
    for start, end in _said_spans(text, due, now):
        kept.append(text[position:start])
        position = end
    if not position:
        return text
    kept.append(text[position:])
    joined = re.sub(r"\s+", " ", " ".join(part.strip() for part in kept))
    return _LOOSE_ENDS.sub("", joined).strip()
