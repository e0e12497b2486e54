"""The parameter type grammar: type strings such as "int" or "array<datetime>" -> ParamType.

A `ParamType` knows three things about its values:

- `json_schema()`: the JSON schema the LLM sees;
- `check(value)`: the strict wire rules the center applies to an LLM tool call
  (returns an error text or None, never raises);
- `coerce(value, tz)`: turns a valid wire value into the Python value `run()` receives
  (raises `ParamTypeError`, a `ValueError`, when it cannot).

Grammar: scalars `string|str`, `integer|int`, `float`, `boolean|bool`, `dict`, `datetime`,
`date`, `time`, `timedelta`; untyped arrays `array|list`; typed arrays `array<T>`,
`array[T]` and `T[]` for every scalar T except dict. Spaces around the tokens are
tolerated (`array< int >`); case is not (`Int` is an error). No nested arrays.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "VALID_TYPES_HELP",
    "ParamType",
    "ParamTypeError",
    "parse_type",
    "resolve_timezone",
]


class ParamTypeError(ValueError):
    """A value does not fit its declared parameter type."""


# Canonical scalar name for every accepted spelling.
_SCALAR_ALIASES: dict[str, str] = {
    "string": "string",
    "str": "string",
    "integer": "int",
    "int": "int",
    "float": "float",
    "boolean": "bool",
    "bool": "bool",
    "dict": "dict",
    "datetime": "datetime",
    "date": "date",
    "time": "time",
    "timedelta": "timedelta",
}
_ITEM_KINDS = {"string", "int", "float", "bool", "datetime", "date", "time", "timedelta"}
_UNTYPED_ARRAYS = {"array", "list"}

VALID_TYPES_HELP = (
    "string|str, integer|int, float, boolean|bool, dict, datetime, date, time, timedelta, "
    "array|list, and typed arrays array<T>, array[T] or T[] where T is one of "
    "string, str, int, integer, float, bool, boolean, datetime, date, time, timedelta"
)

_ANGLE = re.compile(r"\s*array\s*<\s*(\w+)\s*>\s*")
_SQUARE = re.compile(r"\s*array\s*\[\s*(\w+)\s*\]\s*")
_SUFFIX = re.compile(r"\s*(\w+)\s*\[\s*\]\s*")

_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")

_FORMATS = {"date": "date", "datetime": "date-time", "time": "time", "timedelta": "duration"}
_JSON_TYPES = {
    "string": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "date": "string",
    "datetime": "string",
    "time": "string",
    "timedelta": "string",
}
_DESCRIBE = {
    "string": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean (true or false)",
    "dict": "a JSON object",
    "date": "a date as YYYY-MM-DD",
    "datetime": "an ISO-8601 date-time with timezone, e.g. 2026-01-18T05:00:00Z",
    "time": "a time as HH:MM or HH:MM:SS, optionally with an offset",
    "timedelta": "an ISO-8601 duration, e.g. PT5M or P1DT2H",
}

# RFC 3339 pieces; [0-9] rather than \d so that non-ASCII digits are refused.
_DATE_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_OFFSET = r"(?P<offset>[Zz]|[+-][0-9]{2}:[0-9]{2})"
_DATETIME_RE = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})[Tt]"
    r"(?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})(?:\.(?P<frac>[0-9]+))?" + _OFFSET
)
_TIME_RE = re.compile(
    r"(?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<frac>[0-9]+))?)?"
    r"(?P<offset>[Zz]|[+-][0-9]{2}:[0-9]{2})?"
)
_NAIVE_DATETIME_RE = re.compile(r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ](?P<time>[0-9:.]+)")
# RFC 3339 appendix A: dur-date / dur-time / dur-week, whole numbers only.
_DURATION_RE = re.compile(
    r"P(?:"
    r"(?P<weeks>[0-9]+)W"
    r"|(?:(?P<years>[0-9]+)Y(?:(?P<months>[0-9]+)M(?:(?P<days>[0-9]+)D)?)?"
    r"|(?P<months2>[0-9]+)M(?:(?P<days2>[0-9]+)D)?"
    r"|(?P<days3>[0-9]+)D)?"
    r"(?:T(?:(?P<hours>[0-9]+)H(?:(?P<minutes>[0-9]+)M(?:(?P<seconds>[0-9]+)S)?)?"
    r"|(?P<minutes2>[0-9]+)M(?:(?P<seconds2>[0-9]+)S)?"
    r"|(?P<seconds3>[0-9]+)S))?"
    r")"
)


def resolve_timezone(tz: str | dt.tzinfo | None) -> dt.tzinfo | None:
    """An IANA name or tzinfo -> tzinfo; raises ValueError naming an unknown zone."""
    if tz is None or isinstance(tz, dt.tzinfo):
        return tz
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:  # OSError: name too long
        raise ValueError(f"Unknown timezone '{_shorten(tz)}'") from exc


def _offset_minutes(text: str) -> int | None:
    """Minutes east of UTC for an RFC 3339 offset, None when out of range."""
    if text in ("Z", "z"):
        return 0
    hours, minutes = int(text[1:3]), int(text[4:6])
    if hours > 23 or minutes > 59:
        return None
    total = hours * 60 + minutes
    return -total if text[0] == "-" else total


def _time_fields_error(h: int, mi: int, s: int, offset: str | None) -> str | None:
    """Range checks shared by time and date-time, leap seconds included."""
    if h > 23 or mi > 59 or s > 60:
        return "hour, minute or second out of range"
    off = 0 if offset is None else _offset_minutes(offset)
    if off is None:
        return "timezone offset out of range"
    if s == 60:
        # A leap second exists only at 23:59:60 UTC, and a local time has no known UTC.
        if offset is None:
            return "a leap second needs a timezone offset"
        utc_minutes = (h * 60 + mi - off) % (24 * 60)
        if utc_minutes != 23 * 60 + 59:
            return "a leap second is only valid at 23:59:60 UTC"
    return None


def _parse_date(text: str) -> dt.date:
    m = _DATE_RE.fullmatch(text)
    if not m:
        raise ParamTypeError(f"'{_shorten(text)}' is not a date in YYYY-MM-DD form")
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError as exc:
        raise ParamTypeError(f"'{_shorten(text)}' is not a real calendar date") from exc


def _micro(frac: str | None) -> int:
    return int((frac or "0")[:6].ljust(6, "0"))


def _parse_datetime(text: str) -> dt.datetime:
    m = _DATETIME_RE.fullmatch(text)
    if not m:
        raise ParamTypeError(
            f"'{_shorten(text)}' is not an ISO-8601 date-time with timezone "
            "(e.g. 2026-01-18T05:00:00Z)"
        )
    h, mi, s = int(m["h"]), int(m["mi"]), int(m["s"])
    problem = _time_fields_error(h, mi, s, m["offset"])
    if problem:
        raise ParamTypeError(f"'{_shorten(text)}' is not a valid date-time: {problem}")
    day = _parse_date(f"{m['y']}-{m['mo']}-{m['d']}")
    offset = dt.timedelta(minutes=_offset_minutes(m["offset"]) or 0)
    # Python has no second 60: a leap second becomes the last microsecond before it.
    micro = 999_999 if s == 60 else _micro(m["frac"])
    return dt.datetime(
        day.year, day.month, day.day, h, mi, min(s, 59), micro, tzinfo=dt.timezone(offset)
    )


def _parse_local_datetime(text: str) -> dt.datetime:
    """The wire form, or (node side only) a naive `YYYY-MM-DD[THH:MM[:SS]]` read as local time.

    The center's `check` stays strict; this lets a `pre_route`, a default or a typed CLI value
    say "2025-01-01" and mean midnight where the node is.
    """
    if _DATETIME_RE.fullmatch(text):
        return _parse_datetime(text)
    if _DATE_RE.fullmatch(text):
        day = _parse_date(text)
        return dt.datetime(day.year, day.month, day.day)
    m = _NAIVE_DATETIME_RE.fullmatch(text)
    if m:  # the pattern admits no offset, so the time is naive
        return dt.datetime.combine(_parse_date(m["date"]), _parse_time(m["time"]))
    return _parse_datetime(text)  # raises with the wire-format message


def _parse_time(text: str) -> dt.time:
    m = _TIME_RE.fullmatch(text)
    if not m:
        raise ParamTypeError(f"'{_shorten(text)}' is not a time in HH:MM or HH:MM:SS form")
    h, mi, s = int(m["h"]), int(m["mi"]), int(m["s"] or 0)
    problem = _time_fields_error(h, mi, s, m["offset"])
    if problem:
        raise ParamTypeError(f"'{_shorten(text)}' is not a valid time: {problem}")
    tz = None
    if m["offset"] is not None:
        tz = dt.timezone(dt.timedelta(minutes=_offset_minutes(m["offset"]) or 0))
    micro = 999_999 if s == 60 else _micro(m["frac"])
    return dt.time(h, mi, min(s, 59), micro, tzinfo=tz)


def _match_duration(text: str) -> re.Match[str]:
    m = _DURATION_RE.fullmatch(text)
    if not m or text == "P":
        raise ParamTypeError(
            f"'{_shorten(text)}' is not an ISO-8601 duration (e.g. PT5M, P1DT2H, P2W)"
        )
    return m


def _parse_duration(text: str) -> dt.timedelta:
    m = _match_duration(text)

    def num(*names: str) -> int:
        return sum(int(m[n]) for n in names if m[n] is not None)

    try:
        # Calendar units have no fixed length; Jarvis counts a year as 365 and a month as 30 days.
        days = (
            num("weeks") * 7
            + num("years") * 365
            + num("months", "months2") * 30
            + num("days", "days2", "days3")
        )
        seconds = num("hours") * 3600 + num("minutes", "minutes2") * 60 + num(
            "seconds", "seconds2", "seconds3"
        )
        return dt.timedelta(days=days, seconds=seconds)
    except (OverflowError, ValueError) as exc:  # ValueError: more digits than int() takes
        raise ParamTypeError(f"'{_shorten(text)}' is too long a duration") from exc


def _format_timedelta(value: dt.timedelta) -> str:
    """A timedelta -> an RFC 3339 duration; negative or sub-second values have none."""
    if value < dt.timedelta(0) or value.microseconds:
        raise ParamTypeError(
            f"{value!r} has no ISO-8601 duration form (only whole, non-negative seconds)"
        )
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    out = f"P{value.days}D" if value.days else "P"
    parts = [(hours, "H"), (minutes, "M"), (seconds, "S")]
    used = [i for i, (n, _) in enumerate(parts) if n]
    if not used and not value.days:
        return "PT0S"
    if used:
        # The ABNF allows H, HM, HMS, M, MS, S: fill the gap between the first and last unit.
        out += "T" + "".join(f"{n}{u}" for n, u in parts[used[0] : used[-1] + 1])
    return out


_PARSERS = {
    "date": _parse_date,
    "datetime": _parse_datetime,
    "time": _parse_time,
    "timedelta": _parse_duration,
}
# A duration is checked by syntax only: a valid one may be longer than a timedelta holds.
_CHECKERS = {**_PARSERS, "timedelta": _match_duration}
_PY_TYPES: dict[str, type | tuple[type, ...]] = {
    "date": dt.date,
    "datetime": dt.datetime,
    "time": dt.time,
    "timedelta": dt.timedelta,
}


@dataclass(frozen=True)
class ParamType:
    """A parsed parameter type: a scalar kind, or an array with an optional item type."""

    kind: str  # string int float bool dict datetime date time timedelta array
    item: ParamType | None = None
    # How the author wrote it; "int" and "integer" are the same type.
    spelling: str = field(default="", compare=False)

    @property
    def is_array(self) -> bool:
        return self.kind == "array"

    @property
    def name(self) -> str:
        """Canonical spelling, e.g. 'array<datetime>'."""
        if self.is_array:
            return f"array<{self.item.kind}>" if self.item else "array"
        return self.kind

    def describe(self) -> str:
        """Plain words for error messages and retry prompts."""
        if self.is_array:
            return f"a list of {_DESCRIBE[self.item.kind]}" if self.item else "a list"
        return _DESCRIBE[self.kind]

    # --- schema -----------------------------------------------------------------------
    def json_schema(self) -> dict[str, Any]:
        if self.is_array:
            schema: dict[str, Any] = {"type": "array"}
            if self.item is not None:
                schema["items"] = self.item.json_schema()
            return schema
        schema = {"type": _JSON_TYPES[self.kind]}
        if self.kind in _FORMATS:
            schema["format"] = _FORMATS[self.kind]
        return schema

    # --- strict wire check ------------------------------------------------------------
    def check(self, value: Any) -> str | None:
        """The error in `value` under the strict wire rules, or None when it is valid."""
        if self.is_array:
            if not isinstance(value, list):
                return f"expected {self.describe()}, got {_json_name(value)}"
            if self.item is None:
                return None
            for index, element in enumerate(value):
                problem = self.item.check(element)
                if problem:
                    return f"item {index}: {problem}"
            return None
        kind = self.kind
        ok: bool
        if kind == "string":
            ok = isinstance(value, str)
        elif kind == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind == "float":
            ok = isinstance(value, int | float) and not isinstance(value, bool) and _finite(value)
        elif kind == "bool":
            ok = isinstance(value, bool)
        elif kind == "dict":
            ok = isinstance(value, dict)
        else:
            if not isinstance(value, str):
                return f"expected {self.describe()}, got {_json_name(value)}"
            try:
                _CHECKERS[kind](value)
            except ParamTypeError as exc:
                return str(exc)
            return None
        return None if ok else f"expected {self.describe()}, got {_json_name(value)}"

    def is_valid(self, value: Any) -> bool:
        return self.check(value) is None

    # --- lenient check used by JarvisParameter.validate ---------------------------------
    def accepts(self, value: Any) -> bool:
        """The node-side type check: Python values, or strings for the date/time kinds."""
        if self.is_array:
            if not isinstance(value, list | tuple):
                return False
            return self.item is None or all(self.item.accepts(v) for v in value)
        if self.kind in _PY_TYPES:
            if isinstance(value, str):
                return True
            if self.kind == "date":
                return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
            return isinstance(value, _PY_TYPES[self.kind])
        return self.check(value) is None

    # --- coercion to Python values ----------------------------------------------------
    def coerce(self, value: Any, tz: str | dt.tzinfo | None = None) -> Any:
        """A valid wire value (or an already-Python value) -> what `run()` receives.

        Date-times come back aware; with `tz` they are converted to that zone, and a
        naive value (a `datetime`, "2025-01-01" or "2025-01-01T09:30", as a `pre_route` or
        a default may give) is taken as local to `tz`, and refused when there is no `tz`.
        """
        zone = resolve_timezone(tz)
        if self.is_array:
            if not isinstance(value, list | tuple):
                raise ParamTypeError(f"expected {self.describe()}, got {_json_name(value)}")
            if self.item is None:
                return list(value)
            return [self.item.coerce(v, zone) for v in value]
        kind = self.kind
        if kind in _PY_TYPES:
            return self._coerce_temporal(value, zone)
        problem = self.check(value)
        if problem:
            raise ParamTypeError(problem)
        return float(value) if kind == "float" else value

    def _coerce_temporal(self, value: Any, zone: dt.tzinfo | None) -> Any:
        kind = self.kind
        if isinstance(value, str):
            if kind == "datetime":
                return self._localize(_parse_local_datetime(value), zone)
            return _PARSERS[kind](value)
        if kind == "datetime" and isinstance(value, dt.datetime):
            return self._localize(value, zone)
        if kind == "date" and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        if kind != "date" and isinstance(value, _PY_TYPES[kind]):
            return value
        raise ParamTypeError(f"expected {self.describe()}, got {_json_name(value)}")

    @staticmethod
    def _localize(value: dt.datetime, zone: dt.tzinfo | None) -> dt.datetime:
        try:
            if value.tzinfo is None:
                if zone is None:
                    raise ParamTypeError(
                        f"'{value.isoformat()}' has no timezone and no local timezone is known"
                    )
                return value.replace(tzinfo=zone)
            return value.astimezone(zone) if zone is not None else value
        except OverflowError as exc:  # e.g. 9999-12-31T23:59-12:00 moved to UTC
            raise ParamTypeError(f"'{value.isoformat()}' is out of the supported range") from exc

    # --- text -> value, for defaults and hand-typed values ------------------------------
    def from_text(self, value: Any, tz: str | dt.tzinfo | None = None) -> Any:
        """Lossless conversion from text ("5" -> 5, "true" -> True, '["a"]' -> ["a"]).

        Used for declared defaults and command-line values; a string parameter stays a
        string whatever it looks like. Non-strings go through `coerce`.
        """
        if not isinstance(value, str) or self.kind == "string":
            return self.coerce(value, tz)
        text = value.strip()
        if self.kind == "int":
            if re.fullmatch(r"[+-]?[0-9]{1,4000}", text):
                return int(text)
        elif self.kind == "float":
            # ASCII only: Python's float() also takes "1_0" and non-ASCII digits.
            if _FLOAT_TEXT.fullmatch(text) and math.isfinite(number := float(text)):
                return number
        elif self.kind == "bool":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
        elif self.kind in ("dict", "array"):
            try:
                decoded = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParamTypeError(f"expected {self.describe()} as JSON: {exc.msg}") from exc
            except (ValueError, RecursionError) as exc:  # huge numbers, deep nesting
                raise ParamTypeError(f"expected {self.describe()} as JSON: {exc}") from exc
            return self.coerce(decoded, tz)
        else:
            return self.coerce(text, tz)
        raise ParamTypeError(f"expected {self.describe()}, got '{_shorten(value)}'")

    def to_wire(self, value: Any) -> Any:
        """A Python value -> its JSON wire form (the inverse of `coerce`)."""
        if self.is_array and isinstance(value, list | tuple):
            return [self.item.to_wire(v) if self.item else v for v in value]
        if isinstance(value, dt.timedelta):
            return _format_timedelta(value)
        if isinstance(value, dt.datetime):
            offset = value.utcoffset()
            if offset is not None and offset % dt.timedelta(minutes=1):
                # RFC 3339 offsets have no seconds (old local mean times do): send UTC.
                try:
                    value = value.astimezone(dt.UTC)
                except OverflowError as exc:
                    raise ParamTypeError(f"{value!r} has no RFC 3339 form") from exc
            return value.isoformat()
        if isinstance(value, dt.date | dt.time):
            return value.isoformat()
        return value


def _finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an int beyond the float range
        return False


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show_value(value: Any, limit: int = 60) -> str:
    """A short repr for error messages, safe for huge ints and long strings."""
    try:
        return _shorten(repr(value), limit)
    except ValueError:  # int repr beyond sys.get_int_max_str_digits()
        return f"a {type(value).__name__} too large to show"


def _json_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, int | float):
        return f"number {show_value(value)}"
    if isinstance(value, str):
        return f"string '{_shorten(value)}'"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def parse_type(type_string: str) -> ParamType:
    """Parse a type string; raises ValueError listing the valid types for anything else."""
    if not isinstance(type_string, str):
        raise ValueError(
            f"Parameter type must be a string, got {type(type_string).__name__}. "
            f"Valid types: {VALID_TYPES_HELP}"
        )
    text = type_string.strip()
    if text in _SCALAR_ALIASES:
        return ParamType(_SCALAR_ALIASES[text], spelling=type_string)
    if text in _UNTYPED_ARRAYS:
        return ParamType("array", spelling=type_string)
    for pattern in (_ANGLE, _SQUARE, _SUFFIX):
        m = pattern.fullmatch(type_string)
        if m and _SCALAR_ALIASES.get(m[1]) in _ITEM_KINDS:
            item = ParamType(_SCALAR_ALIASES[m[1]], spelling=m[1])
            return ParamType("array", item=item, spelling=type_string)
    raise ValueError(f"Unknown parameter type '{type_string}'. Valid types: {VALID_TYPES_HELP}")
