"""`get_current_time`: the time here, or in a named city, country or US state."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from jarvis.commands._places import zone_for_place
from jarvis.commands._schedule import speak_clock
from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    PreRouteResult,
    RequestInformation,
)

__all__ = ["GetCurrentTimeCommand"]

_HERE_WORDS = {"here", "local", "home", "my location", "current location", "this location"}


def _speak_date(moment: dt.datetime | dt.date) -> str:
    return f"{moment:%A}, {moment:%B} {moment.day}"


def _speak_other_day(day: dt.date, today: dt.date) -> str:
    """ "Tomorrow is Saturday, December 5.", "December 25 is a Friday, 21 days from today." """
    delta = (day - today).days
    if delta == 1:
        return f"Tomorrow is {_speak_date(day)}."
    if delta == -1:
        return f"Yesterday was {_speak_date(day)}."
    year = f", {day.year}" if day.year != today.year else ""
    if delta > 0:
        return f"{day:%B} {day.day}{year} is a {day:%A}, {delta} days from today."
    return f"{day:%B} {day.day}{year} was a {day:%A}, {-delta} days ago."


class GetCurrentTimeCommand(IJarvisCommand):
    """The current local time, or the time somewhere else."""

    @property
    def command_name(self) -> str:
        return "get_current_time"

    @property
    def description(self) -> str:
        return (
            "Tell the current time (and date), here or in another city, country or US state."
        )

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("location", "string", refinable=True,
                            description="City, country or US state; omit for the local time",
                            example="Tokyo"),
            JarvisParameter("day", "date", refinable=True,
                            description="The day asked about; omit for today"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("what time is it", {}, is_primary=True),
            CommandExample("what time is it in Tokyo", {"location": "Tokyo"}),
            CommandExample("what's the time in London right now", {"location": "London"}),
            CommandExample("what's today's date", {}),
            CommandExample("what's the date tomorrow", {"day": "2026-01-19"}),
        ]

    @property
    def rules(self) -> list[str]:
        return ["Omit location when the user asks about the time where they are"]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("get_weather", "Temperature, rain or forecast questions are "
                               "get_weather, even when they mention today."),
            CommandAntipattern("check_timers", "'How much time is left on my timer' is "
                               "check_timers."),
        ]

    @property
    def keywords(self) -> list[str]:
        # Phrases, not the bare words: "time", "day" and "date" are in "the best movie of
        # all time", "a rough day at work" and "the date of the concert" as often as in a
        # question about the clock or the calendar.
        return ["what time", "the time", "current time", "time is it", "time it is", "clock",
                "today's date", "what date", "the date today", "date is it", "what day",
                "how late"]

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        text = voice_command.lower().strip().rstrip("?.!").strip()
        if text in ("what time is it", "what's the time", "whats the time", "what is the time",
                    "what time is it now", "what time is it right now", "tell me the time"):
            return PreRouteResult(arguments={})
        return None

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        location = fixed.get("location")
        if isinstance(location, str) and location.strip().lower() in _HERE_WORDS:
            fixed.pop("location")
        return fixed

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        location = kwargs.get("location")
        if location:
            zone_name = zone_for_place(location)
            if zone_name is None:
                return CommandResponse.error_response(
                    f"I don't know the time zone of {location}.",
                    {"location": location, "error": "unknown_location"},
                )
            now = dt.datetime.now(ZoneInfo(zone_name))
            message = f"It's {speak_clock(now)} in {location.strip()}, on {_speak_date(now)}."
        else:
            zone_name = request_info.timezone or self.context.timezone
            now = (
                dt.datetime.now(ZoneInfo(zone_name)) if zone_name
                else dt.datetime.now().astimezone()
            )
            message = f"It's {speak_clock(now)} on {_speak_date(now)}."
        day = kwargs.get("day")
        asked: dict[str, Any] = {}
        if isinstance(day, dt.date) and day != now.date():
            message = _speak_other_day(day, now.date())
            asked = {"day": day.isoformat(), "day_weekday": f"{day:%A}"}
        return CommandResponse.success_response(
            {
                **asked,
                "location": location,
                "timezone": zone_name or str(now.tzinfo),
                "datetime": now.isoformat(timespec="seconds"),
                "time": speak_clock(now),
                "date": now.date().isoformat(),
                "weekday": f"{now:%A}",
            },
            message=message,
        )
