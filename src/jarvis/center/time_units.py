"""Units of time as people say and write them: the one vocabulary that the readers of
lengths of time (durations said, a parameter counted in minutes), of dates ("in two
weeks") and of rates ("kilometres an hour") share.

    >>> unit_named("hrs"), unit_named("Minutes"), unit_named("house")
    ('hour', 'minute', None)
    >>> SECONDS["hour"]
    3600.0
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CALENDAR_UNITS", "CLOCK_UNITS", "SECONDS", "SHORT_FORMS", "UNITS", "spellings",
           "unit_named", "unit_pattern"]

# Every unit, shortest first. A month and a year have no fixed length: dates move by them
# on the calendar.
UNITS = ("millisecond", "second", "minute", "hour", "day", "week", "fortnight", "month",
         "year")
# Units a clock counts in, as a length of time is said ("1 hour 30 minutes").
CLOCK_UNITS = ("second", "minute", "hour")
# Units a day is moved by ("in two weeks", "a month from now").
CALENDAR_UNITS = ("day", "week", "fortnight", "month", "year")
SECONDS: dict[str, float] = {"millisecond": 0.001, "second": 1.0, "minute": 60.0,
                             "hour": 3600.0, "day": 86400.0, "week": 604800.0,
                             "fortnight": 1209600.0}
# Short forms, as typed and as speech recognition writes them ("5 mins", "2 hrs").
SHORT_FORMS = {"ms": "millisecond", "sec": "second", "secs": "second", "min": "minute",
               "mins": "minute", "hr": "hour", "hrs": "hour"}


def spellings(units: Iterable[str], *, short: bool = True) -> dict[str, str]:
    """Each way of writing `units` (the name, its plural and, with `short`, the short
    forms) -> the unit."""
    chosen = tuple(dict.fromkeys(units))
    found = {form: unit for unit in chosen for form in (unit, f"{unit}s")}
    if short:
        found |= {form: unit for form, unit in SHORT_FORMS.items() if unit in chosen}
    return found


def unit_pattern(units: Iterable[str], *, short: bool = True) -> str:
    """A regular expression alternation of the `spellings` of `units`, longest first."""
    return "|".join(sorted(spellings(units, short=short), key=len, reverse=True))


_ALL = spellings(UNITS)


def unit_named(word: str) -> str | None:
    """The unit `word` names ("hrs" -> "hour"), or None."""
    return _ALL.get(word.lower())
