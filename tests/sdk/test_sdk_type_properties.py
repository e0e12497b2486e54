"""Property tests: no input makes the type system raise anything unexpected, and valid
values survive coerce -> to_wire -> check."""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jarvis.sdk import ParamTypeError, parse_type

ALL_TYPES = [
    "string", "str", "integer", "int", "float", "boolean", "bool", "array", "list", "dict",
    "datetime", "date", "time", "timedelta",
    *[f"{tmpl.format(t)}" for t in ("datetime", "date", "time", "timedelta", "string", "int",
                                     "float", "bool")
      for tmpl in ("array<{}>", "array[{}]", "{}[]")],
]
ZONES = [None, "UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
# Strings shaped like the wire formats, so the parsers' deeper branches get exercised too.
format_like = st.from_regex(
    r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,12})?)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})?)?\Z"
    r"|\A[0-9]{2}:[0-9]{2}(:[0-9]{2})?([Zz]|[+-][0-9]{2}:[0-9]{2})?\Z"
    r"|\AP([0-9]{1,30}[YMWD]){0,3}(T([0-9]{1,30}[HMS]){0,3})?\Z"
)
anything = json_values | format_like | st.lists(format_like, max_size=3)


@settings(max_examples=300, deadline=None)
@given(type_string=st.sampled_from(ALL_TYPES), value=anything, tz=st.sampled_from(ZONES))
def test_check_never_raises_and_coerce_raises_only_param_type_errors(
    type_string: str, value: Any, tz: str | None
) -> None:
    ptype = parse_type(type_string)
    problem = ptype.check(value)
    assert problem is None or isinstance(problem, str)
    for convert in (ptype.coerce, ptype.from_text):
        with contextlib.suppress(ParamTypeError):  # the one exception allowed
            convert(value, tz)
    ptype.accepts(value)


# --- valid values per type ------------------------------------------------------------
offsets = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
    lambda m: dt.timezone(dt.timedelta(minutes=m))
)
aware_datetimes = st.datetimes(
    min_value=dt.datetime(1000, 1, 2), max_value=dt.datetime(9998, 12, 30), timezones=offsets
)
durations = st.integers(min_value=0, max_value=10**6).flatmap(
    lambda days: st.integers(0, 86399).map(lambda secs: dt.timedelta(days=days, seconds=secs))
)
SCALAR_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(),
    "int": st.integers(),
    "float": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**15), 10**15),
    "bool": st.booleans(),
    "dict": st.dictionaries(st.text(max_size=5), st.integers() | st.text(), max_size=3),
    "date": st.dates(min_value=dt.date(1, 1, 1)),
    "datetime": aware_datetimes,
    "time": st.times() | st.times(timezones=offsets),
    "timedelta": durations,
}


@st.composite
def typed_python_value(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(sorted(SCALAR_VALUES)))
    if kind != "dict" and draw(st.booleans()):
        spelling = draw(st.sampled_from(["array<{}>", "array[{}]", "{}[]"])).format(kind)
        return spelling, draw(st.lists(SCALAR_VALUES[kind], max_size=3))
    return kind, draw(SCALAR_VALUES[kind])


@settings(max_examples=400, deadline=None)
@given(case=typed_python_value(), tz=st.sampled_from(ZONES))
def test_valid_values_round_trip_through_the_wire(case: tuple[str, Any], tz: str | None) -> None:
    type_string, value = case
    ptype = parse_type(type_string)
    wire = ptype.to_wire(value)
    assert ptype.check(wire) is None, (wire, ptype.check(wire))
    python = ptype.coerce(wire, tz)
    again = ptype.to_wire(python)
    assert ptype.check(again) is None
    # The value itself survives: datetimes as the same instant in whatever zone, ints given
    # for a float as the equal float.
    assert python == value
