"""A call that refines an earlier one changes what that call made: the timer or reminder
it created, found by the call id stored with it. Other built-ins are idempotent."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from command_helpers import TZ, make_context
from test_cmd_confirmations import repeated_when

from jarvis.commands._schedule import iso_utc, parse_utc
from jarvis.commands.reminders import ReminderCommand
from jarvis.commands.timers import NAMESPACE, CheckTimersCommand, SetTimerCommand
from jarvis.sdk import CommandResponse, RequestInformation


def _call(command: Any, call_id: str, refines: str | None = None, said: str = "",
          **arguments: Any) -> CommandResponse:
    info = RequestInformation(voice_command=said, timezone=TZ, tool_call_id=call_id,
                              refines_tool_call_id=refines)
    response = command.execute(info, **command.post_process_tool_call(arguments, said))
    assert response.success, response.message
    return response


def _timers(command: Any) -> list[dict[str, Any]]:
    return list(command.context.storage.items(NAMESPACE).values())


def test_a_refined_timer_changes_its_length_and_keeps_its_start_and_label() -> None:
    timer = SetTimerCommand().bind(make_context())
    first = _call(timer, "a", duration="PT10M", label="pasta")
    assert first.message == "Pasta timer set for 10 minutes."
    second = _call(timer, "b", refines="a", duration="PT20M", label="pasta")
    assert second.message == "OK, the pasta timer is now 20 minutes."
    assert repeated_when(second.message) == []
    [entry] = _timers(timer)
    assert entry["id"] == first.context_data["timer"]["id"]
    assert entry["created_at"] == first.context_data["timer"]["created_at"]
    assert parse_utc(entry["due_at"]) - parse_utc(entry["created_at"]) == dt.timedelta(
        minutes=20)
    assert entry["tool_call_id"] == "b"  # the next refinement names the newest call
    assert entry["announcement"] == "Your 20 minute pasta timer is done."
    assert second.context_data["changed"] is True


def test_a_timer_shortened_below_its_running_time_is_due_now() -> None:
    timer = SetTimerCommand().bind(make_context())
    _call(timer, "a", duration="PT10M")
    [entry] = _timers(timer)
    # Started 8 minutes ago: 5 minutes is past already.
    started = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=8)
    timer.context.storage.set(NAMESPACE, entry["id"], {**entry, "created_at": iso_utc(started)})
    _call(timer, "b", refines="a", duration="PT5M")
    [changed] = _timers(timer)
    assert parse_utc(changed["due_at"]) <= dt.datetime.now(dt.UTC)


@pytest.mark.parametrize("earlier", ["unknown", "fired", "cancelled"])
def test_a_refinement_with_nothing_left_to_change_starts_a_timer(earlier: str) -> None:
    timer = SetTimerCommand().bind(make_context())
    _call(timer, "a", duration="PT10M")
    [entry] = _timers(timer)
    if earlier == "fired":
        timer.context.storage.set(NAMESPACE, entry["id"], {**entry, "fired": True})
    elif earlier == "cancelled":
        timer.context.storage.delete(NAMESPACE, entry["id"])
    refines = "nobody" if earlier == "unknown" else "a"
    assert _call(timer, "b", refines=refines, duration="PT20M").message == (
        "Timer set for 20 minutes.")
    check = CheckTimersCommand().bind(timer.context)
    running = check.execute(RequestInformation()).context_data["timers"]
    assert len(running) == (2 if earlier == "unknown" else 1)


def test_a_refined_reminder_moves_and_says_the_when_once() -> None:
    reminder = ReminderCommand().bind(make_context())
    tomorrow = dt.datetime.now(ZoneInfo(TZ)).date() + dt.timedelta(days=1)
    day = [dt.datetime.combine(tomorrow, dt.time(0), ZoneInfo(TZ)).isoformat()]
    first = _call(reminder, "a", action="set", text="call mom tomorrow at 5pm",
                  resolved_datetimes=day, time="17:00", said="remind me to call mom "
                  "tomorrow at 5pm")
    second = _call(reminder, "b", refines="a", action="set", text="call mom",
                   resolved_datetimes=day, time="18:00", said="actually make it 6 pm")
    assert second.message == "OK, the reminder to call mom is now tomorrow at 6 PM."
    assert repeated_when(second.message) == []
    [entry] = reminder.context.storage.items("reminders").values()
    assert entry["id"] == first.context_data["reminder"]["id"]
    assert entry["tool_call_id"] == "b" and entry["announcement"] == "Reminder: call mom."


def test_a_refined_reminder_in_the_past_leaves_the_first_one() -> None:
    reminder = ReminderCommand().bind(make_context())
    tomorrow = dt.datetime.now(ZoneInfo(TZ)).date() + dt.timedelta(days=1)
    _call(reminder, "a", action="set", text="call mom", time="17:00",
          resolved_datetimes=[dt.datetime.combine(tomorrow, dt.time(0), ZoneInfo(TZ)).isoformat()])
    info = RequestInformation(timezone=TZ, tool_call_id="b", refines_tool_call_id="a")
    failed = reminder.execute(info, action="set", text="call mom",
                              resolved_datetimes=["2020-01-01T00:00:00-05:00"], time="18:00")
    assert not failed.success
    [entry] = reminder.context.storage.items("reminders").values()
    assert entry["tool_call_id"] == "a"
