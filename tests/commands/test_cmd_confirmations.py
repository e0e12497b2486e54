"""Every built-in's confirmation says each day, time and length once.

A model often leaves the when inside a free-text argument ("call mom tomorrow at 5pm")
while also passing it as a date, time or duration. Each call below is shaped that way;
the spoken answer (and the announcement a timer or reminder will make) must not say any
date or time phrase twice.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from command_helpers import TZ, LocalServer, Recorded, builtin_commands, make_context, request

from jarvis.commands._when import drop_said_when
from jarvis.commands.reminders import ReminderCommand
from jarvis.sdk import CommandResponse, IJarvisCommand, ParamType

ZONE = ZoneInfo(TZ)
DATA = Path(__file__).parent / "data"
TEMPORAL = {"date", "datetime", "time", "timedelta"}

_NUMBER = r"(?:[0-9]+(?:\.[0-9]+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_WHEN = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* [0-9]{1,2}"
    r"|[0-9]{1,2}(?::[0-9]{2})? ?[ap]\.?m\b\.?|[0-9]{1,2}:[0-9]{2}|noon|midnight"
    rf"|{_NUMBER}[ -](?:second|minute|hour|day|week)s?)\b",
    re.I,
)


def repeated_when(message: str) -> list[str]:
    """The date, time and duration phrases `message` says more than once."""
    said = Counter()
    for phrase in _WHEN.findall(message):
        key = re.sub(r"[\s.-]+", " ", phrase.lower()).strip()
        key = re.sub(r"^an? ", "1 ", re.sub(r"(\d) ?([ap]) ?m", r"\1 \2m", key))
        said[key.removesuffix("s") if key[-1:] == "s" and " " in key else key] += 1
    return sorted(phrase for phrase, count in said.items() if count > 1)


def test_the_detector_sees_the_repeats() -> None:
    assert repeated_when("OK, I'll remind you to call mom tomorrow at 5pm tomorrow at 5 PM.") \
        == ["5 pm", "tomorrow"]
    assert repeated_when("5 minute pasta timer set for 5 minutes.") == ["5 minute"]
    assert repeated_when("An hour roast timer set for 1 hour.") == ["1 hour"]
    assert repeated_when("OK, I'll remind you to call mom tomorrow at 5 PM.") == []


def _local(days: int, hour: int = 0, minute: int = 0) -> str:
    day = dt.datetime.now(ZONE).date() + dt.timedelta(days=days)
    return dt.datetime.combine(day, dt.time(hour, minute), ZONE).isoformat()


def _weekday_ahead(days: int) -> str:
    return f"{dt.datetime.now(ZONE) + dt.timedelta(days=days):%A}".lower()


def _in_two_hours() -> str:
    return (dt.datetime.now(ZONE) + dt.timedelta(hours=2)).isoformat(timespec="seconds")


Call = tuple[str, dict[str, Any] | Callable[[], dict[str, Any]]]

# Calls shaped like a model's, for the built-ins that take a date, time or duration, and a
# few for those that speak one.
CALLS: dict[str, list[Call]] = {
    "reminder": [
        ("remind me to call mom tomorrow at 5pm", lambda: {
            "action": "set", "text": "call mom tomorrow at 5pm",
            "resolved_datetimes": [_local(1)], "time": "17:00"}),
        ("remind me tomorrow at 8 am to take the bins out", lambda: {
            "action": "set", "text": "tomorrow at 8 am take the bins out",
            "resolved_datetimes": [_local(1, 8)]}),
        ("remind me to water the plants on friday morning", lambda: {
            "action": "set", "text": f"water the plants on {_weekday_ahead(3)} morning",
            "resolved_datetimes": [_local(3, 9)]}),
        ("remind me in 2 hours to check the oven", lambda: {
            "action": "set", "text": "check the oven in 2 hours",
            "resolved_datetimes": [_in_two_hours()]}),
        ("remind me tomorrow at noon about lunch with Sam", lambda: {
            "action": "set", "text": "about lunch with Sam tomorrow at noon",
            "resolved_datetimes": [_local(1)], "time": "12:00"}),
    ],
    "set_timer": [
        ("set a 5 minute pasta timer", {"duration": "PT5M", "label": "5 minute pasta"}),
        ("timer for the eggs for 10 minutes", {"duration": "PT10M",
                                               "label": "eggs for 10 minutes"}),
        ("an hour and a half roast timer", {"duration": "PT1H30M",
                                            "label": "an hour and a half roast"}),
        ("set a 20-minute laundry timer", {"duration": "PT20M", "label": "20-minute laundry"}),
    ],
    "check_timers": [("how long is left", {})],
    "cancel_timer": [("cancel the pasta timer", {"label": "pasta"})],
    "get_weather": [
        ("weather in Paris tomorrow", lambda: {"city": "Paris",
                                               "resolved_datetimes": [_local(1)]}),
        ("weather in Paris tomorrow and tomorrow night", lambda: {
            "city": "Paris", "resolved_datetimes": [_local(1), _local(1, 21)]}),
    ],
    "get_current_time": [("what time is it", {}),
                         ("what day is it tomorrow", lambda: {"day": _local(1)[:10]})],
    "todo_list": [("add call mom tomorrow to my to-do list",
                   {"action": "add", "items": ["call mom tomorrow"]})],
    "shopping_list": [("add milk to the shopping list", {"action": "add", "items": ["milk"]})],
}


def _temporal(command: IJarvisCommand) -> bool:
    types: list[ParamType] = [p.type for p in command.parameters]
    return any(t.kind in TEMPORAL or (t.item is not None and t.item.kind in TEMPORAL)
               for t in types)


def test_every_builtin_that_takes_a_when_is_covered() -> None:
    takes_when = {c.command_name for c in builtin_commands() if _temporal(c)}
    assert takes_when == {"reminder", "set_timer", "get_weather", "get_current_time"}
    assert takes_when <= set(CALLS)


def _forecast(record: Recorded) -> tuple[int, dict[str, Any]]:
    body = copy.deepcopy(json.loads((DATA / "open_meteo_forecast_template.json").read_text()))
    start = dt.date.fromisoformat(record.query["start_date"][0])
    end = dt.date.fromisoformat(record.query["end_date"][0])
    count = (end - start).days + 1
    body["daily"] = {k: v[:count] for k, v in body["daily"].items()}
    body["daily"]["time"] = [(start + dt.timedelta(days=i)).isoformat() for i in range(count)]
    return 200, body


@pytest.fixture
def open_meteo(local_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> LocalServer:
    geocoding = json.loads((DATA / "open_meteo_geocoding_paris.json").read_text())
    local_server.route("GET", "/v1/search", (200, geocoding))
    local_server.route("GET", "/v1/forecast", _forecast)
    monkeypatch.setenv("JARVIS_OPEN_METEO_URL", local_server.url)
    monkeypatch.setenv("JARVIS_OPEN_METEO_GEOCODING_URL", local_server.url)
    return local_server


def _spoken(command: IJarvisCommand, utterance: str, arguments: dict[str, Any]) -> list[str]:
    """The answer, and every announcement the call stored for later."""
    fixed = command.post_process_tool_call(dict(arguments), utterance)
    response = command.execute(request(utterance), **fixed)
    assert isinstance(response, CommandResponse)
    assert response.success, (utterance, response.message)
    stored = response.context_data or {}
    entries = [stored.get("timer"), stored.get("reminder")]
    return [response.message or ""] + [e["announcement"] for e in entries if e]


@pytest.mark.usefixtures("open_meteo")
def test_no_confirmation_repeats_a_date_or_time_phrase() -> None:
    faults = []
    for name, calls in CALLS.items():
        # A store per command; the timer commands find one timer set the way a model does.
        context = make_context()
        commands = {c.command_name: c.bind(context) for c in builtin_commands()}
        if name in ("check_timers", "cancel_timer"):
            utterance, arguments = CALLS["set_timer"][0]
            assert isinstance(arguments, dict)
            _spoken(commands["set_timer"], utterance, arguments)
        for utterance, arguments in calls:
            args = arguments() if callable(arguments) else arguments
            for message in _spoken(commands[name], utterance, args):
                if repeated_when(message):
                    faults.append(f"{name}: {utterance!r} -> {message!r}")
    assert faults == []


def test_the_reminder_keeps_what_to_remember_and_says_when_once() -> None:
    command = ReminderCommand().bind(make_context())
    messages = _spoken(command, "remind me to call mom tomorrow at 5pm", {
        "action": "set", "text": "call mom tomorrow at 5pm",
        "resolved_datetimes": [_local(1)], "time": "17:00"})
    assert messages == ["OK, I'll remind you to call mom tomorrow at 5 PM.", "Reminder: call mom."]


NOW = dt.datetime(2026, 1, 20, 10, 0, tzinfo=ZONE)  # a Tuesday morning
TOMORROW_AT_5 = dt.datetime(2026, 1, 21, 17, 0, tzinfo=ZONE)


@pytest.mark.parametrize(("text", "due", "left"), [
    ("call mom tomorrow at 5pm", TOMORROW_AT_5, "call mom"),
    ("at 5 p.m. tomorrow, call mom", TOMORROW_AT_5, "call mom"),
    ("call mom on wednesday at 5", TOMORROW_AT_5, "call mom"),
    ("call mom on the 21st at 17:00", TOMORROW_AT_5, "call mom"),
    ("call mom on January 21st in the evening", TOMORROW_AT_5, "call mom"),
    ("check the oven in 20 minutes", NOW + dt.timedelta(minutes=20), "check the oven"),
    # Phrases naming another moment are what to remember, not when.
    ("tell Sam the party is on friday", TOMORROW_AT_5, "tell Sam the party is on friday"),
    ("call mom at 9 tomorrow", TOMORROW_AT_5, "call mom at 9"),
    ("book the 6pm train", TOMORROW_AT_5, "book the 6pm train"),
    ("water the plants in the morning", TOMORROW_AT_5, "water the plants in the morning"),
    ("tomorrow at 5 pm", TOMORROW_AT_5, ""),
])
def test_drop_said_when(text: str, due: dt.datetime, left: str) -> None:
    assert drop_said_when(text, due, NOW) == left


def test_a_reminder_about_something_stays_about_it() -> None:
    command = ReminderCommand().bind(make_context())
    messages = _spoken(command, "remind me tomorrow at noon about lunch with Sam", {
        "action": "set", "text": "remind me about lunch with Sam tomorrow at noon",
        "resolved_datetimes": [_local(1)], "time": "12:00"})
    assert messages == ["OK, I'll remind you about lunch with Sam tomorrow at 12 noon.",
                        "Reminder about lunch with Sam."]
