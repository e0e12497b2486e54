"""Durations as people and small models write them: "5 minutes", 300, "00:05:00", "pt5m"."""

from __future__ import annotations

import datetime as dt
import re

from jarvis.commands._numbers import parse_number
from jarvis.sdk import ParamTypeError, parse_type

__all__ = [
    "drop_duration",
    "is_pure_duration",
    "parse_duration",
    "speak_duration",
    "to_iso_duration",
    "unit_phrase",
]

_TIMEDELTA = parse_type("timedelta")
_UNIT_SECONDS = {
    "second": 1, "seconds": 1, "sec": 1, "secs": 1, "s": 1,
    "minute": 60, "minutes": 60, "min": 60, "mins": 60, "m": 60,
    "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600, "h": 3600,
    "day": 86400, "days": 86400, "d": 86400,
    "week": 604800, "weeks": 604800, "w": 604800,
}
_CLOCK = re.compile(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?")
_MAX = dt.timedelta(days=365)


def _from_clock(text: str) -> dt.timedelta | None:
    m = _CLOCK.fullmatch(text)
    if not m:
        return None
    a, b, c = int(m[1]), int(m[2]), m[3]
    if c is not None:
        return dt.timedelta(hours=a, minutes=b, seconds=int(c))
    return dt.timedelta(minutes=a, seconds=b)  # "05:00" on a timer reads as minutes:seconds


def _tokens(text: str) -> list[str]:
    text = text.lower().replace("-", " ")
    text = re.sub(r"([0-9])([a-z])", r"\1 \2", text)  # "5m", "1h30m"
    text = re.sub(r"([a-z])([0-9])", r"\1 \2", text)
    return re.findall(r"[0-9]+(?:\.[0-9]+)?|[a-z]+", text)


def _number_before(tokens: list[str], end: int) -> tuple[float, int] | None:
    """The number that ends just before `end`, and where it starts."""
    for width in (3, 2, 1):
        start = end - width
        if start < 0:
            continue
        value = parse_number(" ".join(tokens[start:end]), allow_article=True)
        if value is not None:
            return value, start
    return None


def _from_words(text: str) -> dt.timedelta | None:
    tokens = _tokens(text)
    total = 0.0
    found = False
    for index, token in enumerate(tokens):
        unit = _UNIT_SECONDS.get(token)
        if unit is None:
            continue
        if index >= 2 and tokens[index - 2 : index] in (["half", "an"], ["half", "a"]):
            total += unit / 2  # "half an hour"
            found = True
            continue
        end = index
        extra = 0.0
        if end >= 3 and tokens[end - 3 : end] == ["and", "a", "half"]:
            end -= 3  # "one and a half hours"
            extra = 0.5
        number = _number_before(tokens, end)
        if number is None:
            continue
        value, _ = number
        if tokens[index + 1 : index + 4] == ["and", "a", "half"]:
            extra += 0.5  # "an hour and a half"
        total += (value + extra) * unit
        found = True
    if not found or total <= 0:
        return None
    return dt.timedelta(seconds=round(total))


def is_pure_duration(text: str) -> bool:
    """True when every word of `text` belongs to a duration ("an hour and a half")."""
    fillers = {"and", "a", "an", "half", "point", "quarter", "of"}
    for token in _tokens(text):
        if token in _UNIT_SECONDS or token in fillers or parse_number(token) is not None:
            continue
        if parse_number(token.replace(" ", "")) is None:
            return False
    return bool(text.strip())


def parse_duration(value: object) -> dt.timedelta | None:
    """A positive timedelta from the usual forms, or None when there is none."""
    if isinstance(value, dt.timedelta):
        result: dt.timedelta | None = value
    elif isinstance(value, bool):
        return None
    elif isinstance(value, int | float):
        result = dt.timedelta(seconds=float(value))  # a bare number is seconds
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            result = _TIMEDELTA.coerce(text.upper().replace(" ", ""))
        except ParamTypeError:
            number = parse_number(text)
            if number is not None:
                result = dt.timedelta(seconds=number)
            else:
                result = _from_clock(text) or _from_words(text)
    else:
        return None
    if result is None or result <= dt.timedelta(0) or result > _MAX:
        return None
    return result


def _ends_in_unit(word: str) -> bool:
    tokens = _tokens(word)
    return bool(tokens) and (tokens[-1] in _UNIT_SECONDS or tokens[-1] == "half")


def drop_duration(text: str, duration: dt.timedelta) -> str:
    """`text` without the words that say `duration` ("5 minute pasta" -> "pasta")."""
    words = text.split()
    for width in range(min(len(words), 6), 0, -1):  # the longest span first: "an hour and a half"
        for start in range(len(words) - width + 1):
            span = " ".join(words[start:start + width])
            if (_ends_in_unit(words[start + width - 1]) and is_pure_duration(span)
                    and parse_duration(span) == duration):
                rest = " ".join(words[:start] + words[start + width:])
                return re.sub(r"^(?:for|of)\s+|\s+(?:for|of)$", "", rest, flags=re.I)
    return text


def to_iso_duration(value: dt.timedelta) -> str:
    """timedelta -> ISO-8601 duration text ("PT5M")."""
    return str(_TIMEDELTA.to_wire(value))


def _parts(value: dt.timedelta) -> list[tuple[int, str]]:
    total = round(value.total_seconds())
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    return [(n, unit) for n, unit in (
        (days, "day"), (hours, "hour"), (minutes, "minute"), (seconds, "second")
    ) if n]


def speak_duration(value: dt.timedelta) -> str:
    """ "5 minutes", "1 hour and 30 minutes", "2 days, 3 hours and 4 seconds"."""
    words = [f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in _parts(value)]
    if not words:
        return "0 seconds"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


def unit_phrase(value: dt.timedelta) -> str:
    """The duration as an adjective: "5 minute", "1 hour 30 minute"."""
    return " ".join(f"{n} {unit}" for n, unit in _parts(value)) or "0 second"
