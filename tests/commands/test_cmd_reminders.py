from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from command_helpers import TZ, make_context, request

from jarvis.commands.reminders import ReminderCommand, parse_clock_text
from jarvis.commands.timers import due_items, parse_utc
from jarvis.sdk import CommandContext

ZONE = ZoneInfo(TZ)


@pytest.fixture
def ctx() -> CommandContext:
    return make_context()


def _cmd(ctx: CommandContext) -> ReminderCommand:
    return ReminderCommand().bind(ctx)


def _stored(ctx: CommandContext) -> list[dict]:
    return sorted(ctx.storage.items("reminders").values(), key=lambda e: e["due_at"])


def _days_ahead(days: int) -> dt.date:
    return dt.datetime.now(ZONE).date() + dt.timedelta(days=days)


def test_day_from_resolved_datetimes_time_from_time(ctx: CommandContext) -> None:
    day = _days_ahead(2)
    resolved = dt.datetime.combine(day, dt.time(0), ZONE).isoformat()
    response = _cmd(ctx).execute(request("remind me in two days at 8 am to call mom"),
                                 action="set", text="call mom", resolved_datetimes=[resolved],
                                 time="08:00")
    assert response.success, response.message
    (entry,) = _stored(ctx)
    local = parse_utc(entry["due_at"]).astimezone(ZONE)
    assert (local.date(), local.time()) == (day, dt.time(8, 0))
    assert entry["due_at"].endswith("Z") and entry["fired"] is False
    assert entry["text"] == "call mom"
    assert response.message.startswith("OK, I'll remind you to call mom ")
    assert response.message.endswith("at 8 AM.")


def test_day_only_defaults_to_nine_and_keeps_exact_times(ctx: CommandContext) -> None:
    day = _days_ahead(1)
    midnight = dt.datetime.combine(day, dt.time(0), ZONE).isoformat()
    exact = dt.datetime.combine(day, dt.time(14, 30), ZONE).isoformat()
    _cmd(ctx).execute(request("remind me tomorrow to water the plants"), action="set",
                      text="water the plants", resolved_datetimes=[midnight])
    _cmd(ctx).execute(request("remind me tomorrow at 2:30 pm to leave"), action="set",
                      text="leave", resolved_datetimes=[exact])
    times = [parse_utc(e["due_at"]).astimezone(ZONE).time() for e in _stored(ctx)]
    assert times == [dt.time(9, 0), dt.time(14, 30)]


def test_time_only_is_next_occurrence(ctx: CommandContext) -> None:
    now = dt.datetime.now(ZONE)
    past = (now - dt.timedelta(hours=1)).strftime("%H:%M")
    _cmd(ctx).execute(request(), action="set", text="stretch", time=past)
    (entry,) = _stored(ctx)
    due = parse_utc(entry["due_at"])
    assert dt.timedelta(hours=22) < due - now < dt.timedelta(hours=23, minutes=1)


def test_past_date_is_a_spoken_error(ctx: CommandContext) -> None:
    response = _cmd(ctx).execute(request(), action="set", text="x",
                                 resolved_datetimes=["2020-01-01T10:00:00-05:00"])
    assert not response.success and "already passed" in response.message
    assert _stored(ctx) == []


def test_set_needs_text_and_when(ctx: CommandContext) -> None:
    response = _cmd(ctx).execute(request(), action="set", text="call mom")
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == "time"
    response = _cmd(ctx).execute(request(), action="set", time="08:00")
    assert response.context_data["errors"][0]["param_name"] == "text"


def test_list_reads_back_in_node_timezone(ctx: CommandContext) -> None:
    cmd = _cmd(ctx)
    assert cmd.execute(request(), action="list").message == "You have no reminders."
    day = _days_ahead(3)
    cmd.execute(request(), action="set", text="dentist",
                resolved_datetimes=[dt.datetime.combine(day, dt.time(0), ZONE).isoformat()],
                time="15:00")
    cmd.execute(request(), action="set", text="pay rent",
                resolved_datetimes=[dt.datetime.combine(day, dt.time(0), ZONE).isoformat()],
                time="10:15")
    listed = cmd.execute(request(), action="list")
    assert listed.message == (f"You have 2 reminders: pay rent on {day:%A} at 10:15 AM; "
                              f"and dentist on {day:%A} at 3 PM.")
    # the same reminders read by a node in another zone
    other = ReminderCommand().bind(CommandContext(storage=ctx.storage, timezone="UTC"))
    assert "at 3:15 PM" in other.execute(request(tz=None), action="list").message or (
        "at 2:15 PM" in other.execute(request(tz=None), action="list").message)


def test_delete_by_text_match(ctx: CommandContext) -> None:
    cmd = _cmd(ctx)
    for text in ("call mom", "buy milk"):
        cmd.execute(request(), action="set", text=text, time="23:59")
    ambiguous = cmd.execute(request(), action="delete")
    assert ambiguous.is_validation_error
    assert sorted(ambiguous.context_data["valid_values"]["text"]) == ["buy milk", "call mom"]
    assert cmd.execute(request(), action="delete", text="mom").message == (
        "Deleted the reminder to call mom.")
    assert cmd.execute(request(), action="delete", text="by milk").message == (
        "Deleted the reminder to buy milk.")
    assert _stored(ctx) == []


def test_delete_unknown_lists_valid_values(ctx: CommandContext) -> None:
    cmd = _cmd(ctx)
    cmd.execute(request(), action="set", text="call mom", time="23:59")
    response = cmd.execute(request(), action="delete", text="dentist")
    assert response.is_validation_error
    assert response.context_data["valid_values"] == {"text": ["call mom"]}
    assert len(_stored(ctx)) == 1


def test_post_process_fixes(ctx: CommandContext) -> None:
    cmd = _cmd(ctx)
    fixed = cmd.post_process_tool_call(
        {"action": "create", "text": "remind me to call mom", "time": "5:30 pm",
         "resolved_datetimes": "2030-05-01T00:00:00"}, "")
    assert fixed["action"] == "set" and fixed["text"] == "call mom"
    assert fixed["time"] == "17:30"
    assert fixed["resolved_datetimes"] == ["2030-05-01T00:00:00-04:00"]
    assert cmd.execute(request(), **fixed).success


def test_what_the_user_said_of_themselves_is_said_back_to_them(ctx: CommandContext) -> None:
    cmd = _cmd(ctx)
    set_ = cmd.execute(request("remind me to take my vitamins at 11:59 pm"), action="set",
                       text="take my vitamins", time="23:59")
    assert set_.message.startswith("OK, I'll remind you to take your vitamins ")
    (entry,) = _stored(ctx)
    assert entry["text"] == "take my vitamins"  # kept as said
    assert cmd.execute(request(), action="list").message.startswith(
        "You have one reminder: take your vitamins ")
    later = parse_utc(entry["due_at"]) + dt.timedelta(seconds=1)
    assert [d["announcement"] for d in due_items(ctx.storage, "reminders", later)] == [
        "Reminder: take your vitamins."]
    assert cmd.execute(request(), action="delete", text="vitamins").message == (
        "Deleted the reminder to take your vitamins.")


def test_due_items_for_reminders(ctx: CommandContext) -> None:
    _cmd(ctx).execute(request(), action="set", text="call mom", time="23:59")
    (entry,) = _stored(ctx)
    later = parse_utc(entry["due_at"]) + dt.timedelta(seconds=1)
    due = due_items(ctx.storage, "reminders", later)
    assert [d["announcement"] for d in due] == ["Reminder: call mom."]


@pytest.mark.parametrize(("text", "clock"), [("5 pm", "17:00"), ("5:30pm", "17:30"),
                                             ("12 am", "00:00"), ("noon", "12:00"),
                                             ("17:45", "17:45"), ("7", None), ("25:00", None)])
def test_parse_clock_text(text: str, clock: str | None) -> None:
    assert parse_clock_text(text) == clock
