"""Strict wire checks (`check`), conversion to Python values (`coerce`, `from_text`), `to_wire`.

The date/time checks are measured against the JSON-Schema-Test-Suite format cases kept in
the shared data folder beside the repository.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from jarvis.sdk import ParamTypeError, parse_type

DATA_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "json-schema-format"
SUITE_FILES = {"date": "date.json", "datetime": "date-time.json", "time": "time.json",
               "timedelta": "duration.json"}
# The one documented difference: a spoken clock time usually has no offset, so Jarvis
# accepts a time without one. Every other case agrees with the suite.
TIME_WITHOUT_OFFSET = {"12:00:00", "12:00:00.52"}


def _suite_cases() -> list[Any]:
    if not DATA_DIR.is_dir():
        raise RuntimeError(
            f"JSON-Schema-Test-Suite data missing: expected {DATA_DIR} "
            "(../shared/data/json-schema-format relative to the repository root)"
        )
    cases = []
    for kind, filename in SUITE_FILES.items():
        for group in json.loads((DATA_DIR / filename).read_text(encoding="utf-8")):
            for case in group["tests"]:
                cases.append(
                    pytest.param(kind, case["data"], case["valid"],
                                 id=f"{kind}: {case['description']}")
                )
    return cases


SUITE = _suite_cases()


def test_the_suite_was_found_and_is_not_empty() -> None:
    kinds = {case.values[0] for case in SUITE}
    assert kinds == set(SUITE_FILES)
    assert len(SUITE) > 200


@pytest.mark.parametrize(("kind", "data", "valid"), SUITE)
def test_check_agrees_with_the_json_schema_test_suite(kind: str, data: Any, valid: bool) -> None:
    ptype = parse_type(kind)
    problem = ptype.check(data)
    if not isinstance(data, str):
        # The suite's "all string formats ignore integers/objects/..." is about JSON Schema
        # `format`, which only constrains strings. A Jarvis type also fixes the JSON type:
        # a date parameter must be a string, so every non-string is refused.
        assert problem is not None and "expected" in problem
        return
    if kind == "time" and data in TIME_WITHOUT_OFFSET:
        assert valid is False  # the suite's view
        assert problem is None  # Jarvis's documented difference
        return
    assert (problem is None) is valid, problem
    # A string that passes the check also coerces, except durations longer than a
    # timedelta can hold (valid on the wire, refused with a clear error on the node).
    if valid:
        try:
            ptype.coerce(data)
        except ParamTypeError as exc:
            assert kind == "timedelta" and "too long a duration" in str(exc)


def test_a_valid_but_huge_duration_passes_the_wire_check_and_fails_coercion_clearly() -> None:
    huge = "P" + "9" * 78 + "D"
    td = parse_type("timedelta")
    assert td.check(huge) is None
    with pytest.raises(ParamTypeError, match="too long a duration"):
        td.coerce(huge)


@pytest.mark.parametrize(
    ("type_string", "value", "ok"),
    [
        ("string", "hello", True),
        ("string", 5, False),
        ("int", 5, True),
        ("int", -12, True),
        ("int", True, False),  # a bool is never an int
        ("int", 5.0, False),
        ("int", "5", False),
        ("float", 3, True),  # int accepted for float
        ("float", 2.5, True),
        ("float", False, False),
        ("float", float("nan"), False),
        ("float", float("inf"), False),
        ("float", 10**400, False),  # beyond the float range, refused without raising
        ("float", "2.5", False),
        ("bool", True, True),
        ("bool", "yes", False),
        ("bool", 1, False),
        ("dict", {"a": 1}, True),
        ("dict", [], False),
        ("array", [1, "a", None], True),
        ("list", {"a": 1}, False),
        ("date", "2026-01-18", True),
        ("date", "2026-1-18", False),
        ("datetime", "2026-01-18T05:00:00Z", True),
        ("datetime", "2026-01-18T05:00:00+01:00", True),
        ("datetime", "2026-01-18T05:00:00", False),  # the wire demands a timezone
        ("datetime", "2026-01-18", False),
        ("time", "07:30", True),
        ("time", "07:30:15+02:00", True),
        ("time", "7:30", False),
        ("timedelta", "PT5M", True),
        ("timedelta", "5 minutes", False),
        ("array<datetime>", ["2026-01-18T05:00:00Z", "2026-01-19T05:00:00Z"], True),
        ("array<datetime>", ["2026-01-18T05:00:00Z", "tomorrow"], False),
        ("array<datetime>", "2026-01-18T05:00:00Z", False),  # must be a list
        ("array<datetime>", [], True),
        ("int[]", [1, 2, True], False),
        ("float[]", [1, 2.5], True),
        ("array[bool]", [True, False], True),
        ("array<string>", ["a", 1], False),
    ],
)
def test_strict_wire_rules(type_string: str, value: Any, ok: bool) -> None:
    problem = parse_type(type_string).check(value)
    assert (problem is None) is ok, problem
    assert parse_type(type_string).is_valid(value) is ok


def test_array_error_names_the_bad_item() -> None:
    problem = parse_type("array<datetime>").check(["2026-01-18T05:00:00Z", "tomorrow"])
    assert problem is not None
    assert problem.startswith("item 1:") and "tomorrow" in problem


@pytest.mark.parametrize(
    ("type_string", "wire", "expected"),
    [
        ("date", "2026-01-18", dt.date(2026, 1, 18)),
        ("time", "07:30", dt.time(7, 30)),
        ("time", "07:30:15.25", dt.time(7, 30, 15, 250000)),
        ("time", "07:30:15+02:00",
         dt.time(7, 30, 15, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
        ("timedelta", "PT5M", dt.timedelta(minutes=5)),
        ("timedelta", "P1DT2H", dt.timedelta(days=1, hours=2)),
        ("timedelta", "P2W", dt.timedelta(days=14)),
        ("timedelta", "P1Y2M3DT4H5M6S",
         dt.timedelta(days=365 + 60 + 3, hours=4, minutes=5, seconds=6)),
        ("float", 3, 3.0),
        ("int", 7, 7),
        ("array<date>", ["2026-01-18", "2026-01-19"],
         [dt.date(2026, 1, 18), dt.date(2026, 1, 19)]),
        ("timedelta[]", ["PT1H", "PT30M"], [dt.timedelta(hours=1), dt.timedelta(minutes=30)]),
    ],
)
def test_coerce_gives_python_values(type_string: str, wire: Any, expected: Any) -> None:
    value = parse_type(type_string).coerce(wire)
    assert value == expected
    assert type(value) is type(expected)


def test_coerce_float_returns_a_float_even_for_an_int() -> None:
    assert isinstance(parse_type("float").coerce(3), float)


def test_datetime_coerces_to_an_aware_datetime_in_the_node_timezone() -> None:
    ptype = parse_type("datetime")
    value = ptype.coerce("2026-01-18T05:00:00Z")
    assert value == dt.datetime(2026, 1, 18, 5, tzinfo=dt.UTC)
    assert value.utcoffset() == dt.timedelta(0)

    local = ptype.coerce("2026-01-18T05:00:00Z", "Europe/Berlin")
    assert local.tzinfo == ZoneInfo("Europe/Berlin")
    assert (local.hour, local.utcoffset()) == (6, dt.timedelta(hours=1))
    assert local == value  # the same instant

    items = parse_type("datetime[]").coerce(["2026-07-01T12:00:00+02:00"], ZoneInfo("UTC"))
    assert items == [dt.datetime(2026, 7, 1, 10, tzinfo=dt.UTC)]


def test_a_leap_second_and_a_long_fraction_still_coerce() -> None:
    ptype = parse_type("datetime")
    leap = ptype.coerce("1998-12-31T23:59:60Z")
    assert leap == dt.datetime(1998, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.UTC)
    long_fraction = ptype.coerce("1985-04-12T00:59:59.999999999999999Z")
    assert long_fraction.microsecond == 999_999


def test_node_side_coercion_reads_naive_datetimes_as_local_time() -> None:
    # pre_route results, defaults and typed CLI values may leave the zone out.
    ptype = parse_type("datetime")
    berlin = ZoneInfo("Europe/Berlin")
    assert ptype.coerce("2026-01-18", "Europe/Berlin") == dt.datetime(2026, 1, 18, tzinfo=berlin)
    assert ptype.coerce("2026-01-18T10:30", berlin) == dt.datetime(
        2026, 1, 18, 10, 30, tzinfo=berlin
    )
    naive = dt.datetime(2026, 1, 18, 10, 30)
    assert ptype.coerce(naive, berlin) == dt.datetime(2026, 1, 18, 10, 30, tzinfo=berlin)
    # Without a known zone a naive value is refused rather than guessed.
    with pytest.raises(ParamTypeError, match="no timezone"):
        ptype.coerce("2026-01-18T10:30")
    with pytest.raises(ParamTypeError, match="no timezone"):
        ptype.coerce(naive)
    # The center's wire check stays strict.
    assert ptype.check("2026-01-18T10:30") is not None


def test_a_datetime_beyond_the_supported_range_is_a_param_type_error() -> None:
    with pytest.raises(ParamTypeError, match="out of the supported range"):
        parse_type("datetime").coerce("9999-12-31T23:59:59-23:59", "UTC")


def test_an_unknown_timezone_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="Unknown timezone 'Mars/Olympus'"):
        parse_type("datetime").coerce("2026-01-18T05:00:00Z", "Mars/Olympus")


@pytest.mark.parametrize(
    ("type_string", "value"),
    [
        ("date", dt.datetime(2026, 1, 1, tzinfo=dt.UTC)),  # a datetime is not a date here
        ("date", "tomorrow"),
        ("time", dt.date(2026, 1, 1)),
        ("timedelta", 300),
        ("int", "five"),
        ("bool", "yes"),
        ("array<int>", (1, "x")),
        ("dict", "{}"),
    ],
)
def test_coerce_refuses_what_does_not_fit_with_a_param_type_error(
    type_string: str, value: Any
) -> None:
    with pytest.raises(ParamTypeError):
        parse_type(type_string).coerce(value)


@pytest.mark.parametrize(
    ("type_string", "text", "expected"),
    [
        ("int", "5", 5),
        ("int", " -3 ", -3),
        ("float", "2.5", 2.5),
        ("float", "1e3", 1000.0),
        ("bool", "true", True),
        ("bool", "False", False),
        ("string", "42", "42"),  # a string stays a string whatever it looks like
        ("dict", '{"a": 1}', {"a": 1}),
        ("array<int>", "[1, 2]", [1, 2]),
        ("date", "2026-01-18", dt.date(2026, 1, 18)),
        ("timedelta", "PT1H", dt.timedelta(hours=1)),
    ],
)
def test_from_text_reads_defaults_and_typed_values(
    type_string: str, text: str, expected: Any
) -> None:
    assert parse_type(type_string).from_text(text) == expected


@pytest.mark.parametrize(
    ("type_string", "text"),
    [
        ("int", "5.5"),
        ("int", "1" * 5000),  # more digits than int() takes
        ("float", "1_000"),  # Python's float() would take it
        ("float", "١٢"),  # non-ASCII digits
        ("float", "nan"),
        ("bool", "yes"),
        ("dict", "[1]"),
        ("dict", "[" * 5000),  # nesting deeper than the JSON decoder goes
        ("array<int>", "1, 2"),
    ],
)
def test_from_text_refuses_with_a_param_type_error(type_string: str, text: str) -> None:
    with pytest.raises(ParamTypeError):
        parse_type(type_string).from_text(text)


@pytest.mark.parametrize(
    ("type_string", "value", "wire"),
    [
        ("date", dt.date(2026, 1, 18), "2026-01-18"),
        ("datetime", dt.datetime(2026, 1, 18, 5, tzinfo=dt.UTC), "2026-01-18T05:00:00+00:00"),
        ("time", dt.time(7, 30), "07:30:00"),
        ("timedelta", dt.timedelta(0), "PT0S"),
        ("timedelta", dt.timedelta(minutes=5), "PT5M"),
        ("timedelta", dt.timedelta(days=1), "P1D"),
        ("timedelta", dt.timedelta(days=1, hours=2), "P1DT2H"),
        # RFC 3339 has no "1H5S": the gap is filled with 0M.
        ("timedelta", dt.timedelta(hours=1, seconds=5), "PT1H0M5S"),
        ("array<date>", [dt.date(2026, 1, 18)], ["2026-01-18"]),
        ("int", 5, 5),
    ],
)
def test_to_wire_gives_values_the_check_accepts(type_string: str, value: Any, wire: Any) -> None:
    ptype = parse_type(type_string)
    assert ptype.to_wire(value) == wire
    assert ptype.check(wire) is None
    assert ptype.coerce(wire) == value


def test_to_wire_sends_utc_for_offsets_with_seconds() -> None:
    # Old dates in a named zone have local-mean-time offsets such as +00:19:32.
    old = parse_type("datetime").coerce("1800-01-01T00:00:00Z", "Europe/Amsterdam")
    wire = parse_type("datetime").to_wire(old)
    assert wire == "1800-01-01T00:00:00+00:00"
    assert parse_type("datetime").check(wire) is None


@pytest.mark.parametrize("value", [dt.timedelta(seconds=-1), dt.timedelta(milliseconds=1500)])
def test_a_timedelta_without_a_duration_form_is_refused_not_rounded(value: dt.timedelta) -> None:
    with pytest.raises(ParamTypeError, match="no ISO-8601 duration form"):
        parse_type("timedelta").to_wire(value)
