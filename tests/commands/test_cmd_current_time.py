from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest
from command_helpers import make_context, request

from jarvis.center.keywords import keyword_hints
from jarvis.commands._places import PLACE_ZONES, zone_for_place
from jarvis.commands._schedule import speak_clock
from jarvis.commands.current_time import GetCurrentTimeCommand


def test_table_is_large_and_valid() -> None:
    assert len(PLACE_ZONES) >= 100
    for zone in set(PLACE_ZONES.values()):
        ZoneInfo(zone)


@pytest.mark.parametrize(
    ("place", "zone"),
    [("Tokyo", "Asia/Tokyo"), ("in Paris", "Europe/Paris"), ("California", "America/Los_Angeles"),
     ("Austin, Texas", "America/Chicago"), ("the UK", "Europe/London"),
     ("Europe/Lisbon", "Europe/Lisbon"), ("Kinshasa", "Africa/Kinshasa"),
     ("San Fransisco", "America/Los_Angeles"), ("Indiana", "America/Indiana/Indianapolis")],
)
def test_places(place: str, zone: str) -> None:
    assert zone_for_place(place) == zone


def test_local_time_uses_request_timezone() -> None:
    cmd = GetCurrentTimeCommand().bind(make_context(tz="UTC"))
    response = cmd.execute(request(tz="Asia/Tokyo"))
    assert response.context_data["timezone"] == "Asia/Tokyo"
    now = dt.datetime.now(ZoneInfo("Asia/Tokyo"))
    assert response.context_data["date"] in (now.date().isoformat(),
                                             (now - dt.timedelta(minutes=1)).date().isoformat())
    assert re.fullmatch(r"It's (\d{1,2}(:\d\d)? [AP]M|12 noon|12 midnight) on \w+day, \w+ \d+\.",
                        response.message)


def test_context_timezone_is_the_fallback() -> None:
    cmd = GetCurrentTimeCommand().bind(make_context(tz="Europe/Berlin"))
    assert cmd.execute(request(tz=None)).context_data["timezone"] == "Europe/Berlin"


def test_remote_location() -> None:
    cmd = GetCurrentTimeCommand().bind(make_context())
    response = cmd.execute(request(), location="Tokyo")
    assert response.success
    assert response.context_data["timezone"] == "Asia/Tokyo"
    assert response.message.startswith("It's ") and " in Tokyo, on " in response.message
    stamp = dt.datetime.fromisoformat(response.context_data["datetime"])
    assert stamp.utcoffset() == dt.timedelta(hours=9)


def test_unknown_location_is_a_clear_error() -> None:
    response = GetCurrentTimeCommand().bind(make_context()).execute(request(),
                                                                    location="Atlantis")
    assert not response.success
    assert response.message == "I don't know the time zone of Atlantis."


def test_here_words_mean_local() -> None:
    cmd = GetCurrentTimeCommand()
    assert cmd.post_process_tool_call({"location": "here"}, "what time is it here") == {}
    assert cmd.pre_route("What time is it?") is not None
    assert cmd.pre_route("what time is it in Tokyo") is None


def test_speak_clock() -> None:
    assert speak_clock(dt.time(15, 5)) == "3:05 PM"
    assert speak_clock(dt.time(9, 0)) == "9 AM"
    assert speak_clock(dt.time(12, 0)) == "12 noon"
    assert speak_clock(dt.time(0, 0)) == "12 midnight"
    assert speak_clock(dt.time(0, 30)) == "12:30 AM"


@pytest.mark.parametrize(("said", "named"), [
    ("what's today's date", True),
    ("what date is it", True),
    ("what's the date today", True),
    ("I'm looking for the date of an event", False),
    ("save the date for the wedding", False),
])
def test_the_calendar_question_names_the_clock_not_any_date(said: str, named: bool) -> None:
    hints = keyword_hints(said, {"get_current_time": GetCurrentTimeCommand().keywords})
    assert bool(hints) == named


def test_a_day_other_than_today_is_named_with_its_weekday() -> None:
    cmd = GetCurrentTimeCommand().bind(make_context(tz="UTC"))
    today = dt.datetime.now(ZoneInfo("UTC")).date()
    said = {delta: cmd.execute(request(tz="UTC"), day=today + dt.timedelta(days=delta))
            for delta in (-1, 0, 1, 21)}
    after = today + dt.timedelta(days=1)
    assert said[1].message == f"Tomorrow is {after:%A}, {after:%B} {after.day}."
    assert said[1].context_data["day"] == after.isoformat()
    assert said[-1].message.startswith("Yesterday was ")
    assert said[0].message.startswith("It's ") and "day" not in said[0].context_data
    later = today + dt.timedelta(days=21)
    year = f", {later.year}" if later.year != today.year else ""
    assert said[21].message == (f"{later:%B} {later.day}{year} is a {later:%A}, "
                                "21 days from today.")
