"""Tests of the server-side relative date resolver (jarvis.center.dates)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from jarvis.center.dates import (
    GET_CURRENT_DATETIME_TOOL,
    RESOLVE_RELATIVE_DATE_TOOL,
    UnresolvableDateError,
    common_date_table,
    current_datetime_info,
    render_date_table,
    resolve_relative_date,
)

CORPUS = Path(__file__).parent / "data" / "relative_dates.yaml"
NY = "America/New_York"
# The corpus's main reference: Sunday 2026-11-22, 10:30 in New York (EST, -05:00).
SUNDAY = datetime(2026, 11, 22, 10, 30, tzinfo=ZoneInfo(NY))


def _corpus() -> list[tuple[str, str, datetime, str, list[str]]]:
    data = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    cases = []
    for group in data["groups"]:
        now = datetime.fromisoformat(group["now"])
        for phrase, expected in group["cases"].items():
            cases.append((group["name"], group["timezone"], now, phrase, expected))
    return cases


def test_corpus_is_large_enough() -> None:
    assert len(_corpus()) >= 80


def test_corpus_accuracy_is_total(capsys: pytest.CaptureFixture[str]) -> None:
    cases = _corpus()
    failures: list[str] = []
    for name, timezone, now, phrase, expected in cases:
        try:
            got: Any = resolve_relative_date(phrase, timezone, now)
        except ValueError as exc:
            got = f"{type(exc).__name__}: {exc}"
        if got != expected:
            failures.append(f"[{name}] {phrase!r}: expected {expected}, got {got}")
    passed = len(cases) - len(failures)
    with capsys.disabled():
        print(f"\nrelative date corpus: {passed}/{len(cases)} = {passed / len(cases):.1%}")
    assert not failures, "\n".join(failures)


def test_every_corpus_output_is_an_aware_iso_datetime() -> None:
    for _name, timezone, now, phrase, _expected in _corpus():
        for value in resolve_relative_date(phrase, timezone, now):
            parsed = datetime.fromisoformat(value)
            assert parsed.tzinfo is not None, (phrase, value)
            # The offset printed must be the zone's real offset at that instant.
            assert parsed.utcoffset() == parsed.astimezone(ZoneInfo(timezone)).utcoffset()


@pytest.mark.parametrize(
    "phrase", ["someday", "the day the music died", "every friday", "12/25", "in march"]
)
def test_unknown_phrase_raises_with_examples(phrase: str) -> None:
    with pytest.raises(UnresolvableDateError) as info:
        resolve_relative_date(phrase, NY, SUNDAY)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert repr(phrase) in message
    assert "tomorrow morning" in message and "next friday" in message


@pytest.mark.parametrize("phrase", ["", "   ", "?"])
def test_empty_phrase_raises(phrase: str) -> None:
    with pytest.raises(UnresolvableDateError):
        resolve_relative_date(phrase, NY, SUNDAY)


@pytest.mark.parametrize(
    "phrase",
    ["february 30", "the 32nd", "at 25 pm", "at 13 am", "tomorrow at 24:30", "2026-13-01"],
)
def test_impossible_dates_and_times_raise(phrase: str) -> None:
    with pytest.raises(UnresolvableDateError):
        resolve_relative_date(phrase, NY, SUNDAY)


@pytest.mark.parametrize(
    "phrase",
    [
        "in half a day",
        "tomorrow at 5 pm at 6 pm",
        "in 2 hours from tomorrow",
        "in 99999999 days",
        "in 99999999999 hours",
        "in 20000 years",
    ],
)
def test_contradictory_or_fractional_phrases_raise(phrase: str) -> None:
    with pytest.raises(UnresolvableDateError):
        resolve_relative_date(phrase, NY, SUNDAY)


@pytest.mark.parametrize("timezone", ["Mars/Olympus_Mons", "", "Not a zone", "../etc/passwd"])
def test_invalid_timezone_raises_value_error_naming_it(timezone: str) -> None:
    with pytest.raises(ValueError) as info:
        resolve_relative_date("tomorrow", timezone, SUNDAY)
    assert not isinstance(info.value, UnresolvableDateError)
    assert repr(timezone) in str(info.value)
    with pytest.raises(ValueError, match="timezone"):
        current_datetime_info(timezone, SUNDAY)


def test_timezones_with_half_hour_offsets() -> None:
    now = datetime(2026, 11, 22, 10, 30, tzinfo=ZoneInfo("Asia/Kolkata"))
    assert resolve_relative_date("tomorrow morning", "Asia/Kolkata", now) == [
        "2026-11-23T09:00:00+05:30"
    ]


def test_reference_in_another_zone_is_converted_first() -> None:
    # 03:00 UTC on Monday is still Sunday evening, 22:00, in New York.
    now = datetime(2026, 11, 23, 3, 0, tzinfo=UTC)
    assert resolve_relative_date("today", NY, now) == ["2026-11-22T00:00:00-05:00"]
    assert resolve_relative_date("tomorrow", NY, now) == ["2026-11-23T00:00:00-05:00"]
    # The same instant is already Monday morning in Berlin.
    assert resolve_relative_date("today", "Europe/Berlin", now) == ["2026-11-23T00:00:00+01:00"]


def test_naive_reference_is_wall_time_in_the_zone() -> None:
    naive = datetime(2026, 11, 22, 10, 30)
    assert resolve_relative_date("in 2 hours", "Europe/Berlin", naive) == [
        "2026-11-22T12:30:00+01:00"
    ]


def test_default_reference_is_the_current_time() -> None:
    zone = ZoneInfo("Asia/Kolkata")
    before = datetime.now(zone).date()
    (value,) = resolve_relative_date("today", "Asia/Kolkata")
    after = datetime.now(zone).date()
    assert datetime.fromisoformat(value).date() in (before, after)


def test_dst_gap_moves_forward_and_elapsed_hours_are_real_hours() -> None:
    before_gap = datetime(2026, 3, 8, 1, 30, tzinfo=ZoneInfo(NY))
    # One real hour after 01:30 EST is 03:30 EDT: the clock skipped 02:00-03:00.
    assert resolve_relative_date("in an hour", NY, before_gap) == ["2026-03-08T03:30:00-04:00"]
    assert resolve_relative_date("at 2:30 am", NY, before_gap) == ["2026-03-08T03:30:00-04:00"]
    # Calendar days keep the wall time: a day phrase is still local midnight.
    assert resolve_relative_date("tomorrow", NY, before_gap) == ["2026-03-09T00:00:00-04:00"]


def test_ambiguous_fall_back_time_takes_first_occurrence() -> None:
    now = datetime(2026, 11, 1, 0, 30, tzinfo=ZoneInfo(NY))
    assert resolve_relative_date("at 1:30 am", NY, now) == ["2026-11-01T01:30:00-04:00"]
    # Two real hours after 00:30 EDT is 01:30 EST, the second 01:30 of the night.
    assert resolve_relative_date("in 2 hours", NY, now) == ["2026-11-01T01:30:00-05:00"]


def test_iso_datetime_passes_through_in_the_zone() -> None:
    assert resolve_relative_date("2026-12-01T09:00", NY, SUNDAY) == ["2026-12-01T09:00:00-05:00"]
    assert resolve_relative_date("2026-12-01T14:00:00Z", NY, SUNDAY) == [
        "2026-12-01T09:00:00-05:00"
    ]


def test_current_datetime_info() -> None:
    assert current_datetime_info(NY, SUNDAY) == {
        "datetime": "2026-11-22T10:30:00-05:00",
        "date": "2026-11-22",
        "weekday": "Sunday",
        "time": "10:30",
        "timezone": NY,
    }
    berlin = current_datetime_info("Europe/Berlin", SUNDAY)
    assert berlin["datetime"] == "2026-11-22T16:30:00+01:00"
    assert berlin["time"] == "16:30"
    assert berlin["timezone"] == "Europe/Berlin"


def test_current_datetime_info_defaults_to_now() -> None:
    info = current_datetime_info("UTC")
    parsed = datetime.fromisoformat(info["datetime"])
    assert abs((datetime.now(UTC) - parsed).total_seconds()) < 5
    assert info["date"] == parsed.date().isoformat()
    assert info["weekday"] == parsed.strftime("%A")


def test_common_date_table_matches_resolver_and_is_compact() -> None:
    table = common_date_table(NY, SUNDAY)
    assert len(table) <= 20
    for phrase in ("today", "tonight", "tomorrow", "the day after tomorrow", "this weekend"):
        assert table[phrase] == resolve_relative_date(phrase, NY, SUNDAY)
    assert table["tomorrow"] == ["2026-11-23T00:00:00-05:00"]
    assert len(table["next week"]) == 7
    weekdays = [k for k in table if k.endswith("day") and k not in ("today", "yesterday")]
    # Weekday names run in calendar order from tomorrow (a Monday here).
    assert weekdays == [
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"
    ]  # fmt: skip
    assert table["friday"] == ["2026-11-27T00:00:00-05:00"]
    assert table["sunday"] == ["2026-11-29T00:00:00-05:00"]


def test_render_date_table_has_one_line_per_phrase() -> None:
    table = common_date_table(NY, SUNDAY)
    lines = render_date_table(table).splitlines()
    assert len(lines) == len(table)
    assert "tomorrow: 2026-11-23T00:00:00-05:00" in lines


def test_tool_schemas() -> None:
    resolve = RESOLVE_RELATIVE_DATE_TOOL["function"]
    assert RESOLVE_RELATIVE_DATE_TOOL["type"] == "function"
    assert resolve["name"] == "resolve_relative_date"
    assert resolve["parameters"]["required"] == ["phrase"]
    assert resolve["parameters"]["properties"]["phrase"]["type"] == "string"
    assert resolve["parameters"]["properties"]["timezone"]["type"] == "string"
    current = GET_CURRENT_DATETIME_TOOL["function"]
    assert current["name"] == "get_current_datetime"
    assert current["parameters"]["required"] == []
    assert set(current["parameters"]["properties"]) == {"timezone"}
    # The schemas go to the LLM as JSON.
    json.dumps([RESOLVE_RELATIVE_DATE_TOOL, GET_CURRENT_DATETIME_TOOL])
