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
from dataclasses import dataclass
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
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"Unknown timezone '{tz}'") from exc


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
        raise ParamTypeError(f"'{text}' is not a date in YYYY-MM-DD form")
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError as exc:
        raise ParamTypeError(f"'{text}' is not a real calendar date") from exc


def _micro(frac: str | None) -> int:
    return int((frac or "0")[:6].ljust(6, "0"))


def _parse_datetime(text: str) -> dt.datetime:
    m = _DATETIME_RE.fullmatch(text)
    if not m:
        raise ParamTypeError(
            f"'{text}' is not an ISO-8601 date-time with timezone (e.g. 2026-01-18T05:00:00Z)"
        )
    h, mi, s = int(m["h"]), int(m["mi"]), int(m["s"])
    problem = _time_fields_error(h, mi, s, m["offset"])
    if problem:
        raise ParamTypeError(f"'{text}': {problem}")
    day = _parse_date(f"{m['y']}-{m['mo']}-{m['d']}")
    offset = dt.timedelta(minutes=_offset_minutes(m["offset"]) or 0)
    # Python has no second 60: a leap second becomes the last microsecond before it.
    micro = 999_999 if s == 60 else _micro(m["frac"])
    return dt.datetime(
        day.year, day.month, day.day, h, mi, min(s, 59), micro, tzinfo=dt.timezone(offset)
    )


def _parse_time(text: str) -> dt.time:
    m = _TIME_RE.fullmatch(text)
    if not m:
        raise ParamTypeError(f"'{text}' is not a time in HH:MM or HH:MM:SS form")
    h, mi, s = int(m["h"]), int(m["mi"]), int(m["s"] or 0)
    problem = _time_fields_error(h, mi, s, m["offset"])
    if problem:
        raise ParamTypeError(f"'{text}': {problem}")
    tz = None
    if m["offset"] is not None:
        tz = dt.timezone(dt.timedelta(minutes=_offset_minutes(m["offset"]) or 0))
    micro = 999_999 if s == 60 else _micro(m["frac"])
    return dt.time(h, mi, min(s, 59), micro, tzinfo=tz)


def _parse_duration(text: str) -> dt.timedelta:
    m = _DURATION_RE.fullmatch(text)
    if not m or text == "P":
        raise ParamTypeError(f"'{text}' is not an ISO-8601 duration (e.g. PT5M, P1DT2H, P2W)")

    def num(*names: str) -> int:
        return sum(int(m[n]) for n in names if m[n] is not None)

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
    try:
        return dt.timedelta(days=days, seconds=seconds)
    except OverflowError as exc:
        raise ParamTypeError(f"'{text}' is too long a duration") from exc


def _format_timedelta(value: dt.timedelta) -> str:
    total = int(value.total_seconds())
    sign, total = ("-", -total) if total < 0 else ("", total)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    out = f"{sign}P" + (f"{days}D" if days else "")
    if hours or minutes or seconds or not days:
        out += "T" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
        out += f"{seconds}S" if seconds or not (hours or minutes) else ""
    return out


_PARSERS = {
    "date": _parse_date,
    "datetime": _parse_datetime,
    "time": _parse_time,
    "timedelta": _parse_duration,
}
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
    spelling: str = ""

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
            ok = (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
            )
        elif kind == "bool":
            ok = isinstance(value, bool)
        elif kind == "dict":
            ok = isinstance(value, dict)
        else:
            if not isinstance(value, str):
                return f"expected {self.describe()}, got {_json_name(value)}"
            try:
                _PARSERS[kind](value)
            except ParamTypeError as exc:
                return f"expected {self.describe()}: {exc}"
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
        naive value (from a `pre_route` or a direct call) is taken as local to `tz`.
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
                return self._localize(_parse_datetime(value), zone)
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
        if value.tzinfo is None:
            if zone is None:
                raise ParamTypeError(f"'{value.isoformat()}' has no timezone")
            return value.replace(tzinfo=zone)
        return value.astimezone(zone) if zone is not None else value

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
            if re.fullmatch(r"[+-]?[0-9]+", text):
                return int(text)
        elif self.kind == "float":
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if math.isfinite(number):
                return number
        elif self.kind == "bool":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
        elif self.kind in ("dict", "array"):
            try:
                decoded = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParamTypeError(f"expected {self.describe()} as JSON: {exc.msg}") from exc
            return self.coerce(decoded, tz)
        else:
            return self.coerce(text, tz)
        raise ParamTypeError(f"expected {self.describe()}, got '{value}'")

    def to_wire(self, value: Any) -> Any:
        """A Python value -> its JSON wire form (the inverse of `coerce`)."""
        if self.is_array and isinstance(value, list | tuple):
            return [self.item.to_wire(v) if self.item else v for v in value]
        if isinstance(value, dt.timedelta):
            return _format_timedelta(value)
        if isinstance(value, dt.date | dt.time):
            return value.isoformat()
        return value


def _json_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string '{shown}'"
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
