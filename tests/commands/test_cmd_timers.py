from __future__ import annotations

import datetime as dt

import pytest
from command_helpers import make_context, request

from jarvis.commands.timers import (
    CancelTimerCommand,
    CheckTimersCommand,
    SetTimerCommand,
    due_items,
    mark_fired,
    parse_utc,
)
from jarvis.sdk import CommandContext, MemoryStorage


@pytest.fixture
def ctx() -> CommandContext:
    return make_context()


def _set(ctx: CommandContext, **args) -> dict:
    cmd = SetTimerCommand().bind(ctx)
    response = cmd.execute(request(), **args)
    assert response.success, response.message
    return response.context_data["timer"]


def test_set_timer_persists_the_agreed_format(ctx: CommandContext) -> None:
    before = dt.datetime.now(dt.UTC)
    response = SetTimerCommand().bind(ctx).execute(request(), duration="PT5M", label="pasta")
    assert response.message == "Pasta timer set for 5 minutes."
    stored = ctx.storage.items("timers")
    assert len(stored) == 1
    (key, entry), = stored.items()
    assert entry["id"] == key
    assert entry["label"] == "pasta"
    assert entry["fired"] is False
    assert entry["due_at"].endswith("Z") and entry["created_at"].endswith("Z")
    due = parse_utc(entry["due_at"])
    assert dt.timedelta(minutes=5) - dt.timedelta(seconds=2) <= due - before
    assert due - before <= dt.timedelta(minutes=5, seconds=2)
    assert entry["announcement"] == "Your 5 minute pasta timer is done."


@pytest.mark.parametrize("label", ["called laundry", "the timer called laundry", "laundry",
                                   "named laundry"])
def test_a_label_said_as_a_name_is_the_name(ctx: CommandContext, label: str) -> None:
    response = SetTimerCommand().bind(ctx).execute(request(), duration="PT45M", label=label)
    assert response.message == "Laundry timer set for 45 minutes."


def test_set_timer_without_label(ctx: CommandContext) -> None:
    response = SetTimerCommand().bind(ctx).execute(request(), duration="PT1H30M")
    assert response.message == "Timer set for 1 hour and 30 minutes."


@pytest.mark.parametrize("label", ["90 minutes", "the 90 minute timer", "an hour and a half",
                                   "another_timer", "another", "a new timer", "second timer"])
def test_a_label_that_only_restates_the_duration_is_no_label(
    ctx: CommandContext, label: str
) -> None:
    response = SetTimerCommand().bind(ctx).execute(request(), duration="PT1H30M", label=label)
    assert response.message == "Timer set for 1 hour and 30 minutes."


@pytest.mark.parametrize(
    ("raw", "utterance"),
    [("5 minutes", ""), (300, ""), ("00:05:00", ""), ("pt5m", ""), ("5m", ""),
     ("00:05", "set a timer for five minutes"), (5, "set a timer for 5 minutes")],
)
def test_post_process_turns_common_forms_into_iso(raw: object, utterance: str) -> None:
    fixed = SetTimerCommand().post_process_tool_call({"duration": raw}, utterance)
    assert fixed["duration"] == "PT5M"


def test_non_iso_duration_without_fix_is_a_validation_error(ctx: CommandContext) -> None:
    response = SetTimerCommand().bind(ctx).execute(request(), duration="five-ish minutes")
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == "duration"
    assert ctx.storage.items("timers") == {}


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("set a timer for 5 minutes", {"duration": "PT5M"}),
        ("Set a 10 minute pasta timer.", {"duration": "PT10M", "label": "pasta"}),
        ("set a timer for twenty minutes for the eggs", {"duration": "PT20M", "label": "eggs"}),
        ("start a 30 second timer", {"duration": "PT30S"}),
        ("timer for an hour and a half", {"duration": "PT1H30M"}),
    ],
)
def test_set_timer_pre_route_hits(text: str, arguments: dict) -> None:
    hit = SetTimerCommand().pre_route(text)
    assert hit is not None and hit.arguments == arguments


@pytest.mark.parametrize("text", ["set a timer", "set a timer for 5 minutes and call mom",
                                  "remind me in 5 minutes", "what time is it"])
def test_set_timer_pre_route_misses(text: str) -> None:
    assert SetTimerCommand().pre_route(text) is None


def test_check_timers_reports_time_left(ctx: CommandContext) -> None:
    check = CheckTimersCommand().bind(ctx)
    assert check.execute(request()).message == "You have no timers running."
    _set(ctx, duration="PT10M", label="pasta")
    one = check.execute(request())
    assert one.message.startswith("The pasta timer has 9 minutes and 5") or one.message.startswith(
        "The pasta timer has 10 minutes")
    _set(ctx, duration="PT1H")
    two = check.execute(request())
    assert two.message.startswith("You have 2 timers: the pasta timer has")
    assert "the 1 hour timer has" in two.message
    assert [t["label"] for t in two.context_data["timers"]] == ["pasta", None]


def test_cancel_timer_by_label_and_all(ctx: CommandContext) -> None:
    _set(ctx, duration="PT10M", label="pasta")
    _set(ctx, duration="PT20M", label="laundry")
    cancel = CancelTimerCommand().bind(ctx)
    ambiguous = cancel.execute(request())
    assert ambiguous.is_validation_error
    assert sorted(ambiguous.context_data["valid_values"]["label"]) == ["laundry", "pasta"]
    assert cancel.execute(request(), label="pasta").message == "Cancelled the pasta timer."
    assert [t["label"] for t in ctx.storage.items("timers").values()] == ["laundry"]
    unknown = cancel.execute(request(), label="eggs")
    assert unknown.is_validation_error and unknown.context_data["valid_values"] == {
        "label": ["laundry"]}
    assert cancel.execute(request(), label="landry").message == "Cancelled the laundry timer."
    assert ctx.storage.items("timers") == {}


def test_cancel_all_from_small_model_forms(ctx: CommandContext) -> None:
    _set(ctx, duration="PT1M")
    _set(ctx, duration="PT2M")
    cancel = CancelTimerCommand().bind(ctx)
    args = cancel.post_process_tool_call({"label": "all"}, "cancel all timers")
    assert args == {"all_timers": True}
    assert cancel.execute(request(), **args).message == "Cancelled all 2 timers."
    assert cancel.execute(request()).message == "You have no timers running."


def test_due_items_and_mark_fired() -> None:
    storage = MemoryStorage()
    now = dt.datetime(2026, 1, 18, 12, 0, tzinfo=dt.UTC)
    storage.set("timers", "a", {"id": "a", "label": "pasta", "duration_seconds": 300,
                                "due_at": "2026-01-18T11:59:00Z", "created_at": "x",
                                "fired": False})
    storage.set("timers", "b", {"id": "b", "label": None, "due_at": "2026-01-18T12:05:00Z",
                                "fired": False})
    storage.set("timers", "c", {"id": "c", "label": "old", "due_at": "2026-01-18T11:00:00Z",
                                "fired": True})
    storage.set("timers", "d", {"id": "d", "due_at": "garbage", "fired": False})
    due = due_items(storage, "timers", now)
    assert [d["id"] for d in due] == ["a"]
    assert due[0]["announcement"] == "Your 5 minute pasta timer is done."
    mark_fired(storage, "timers", "a")
    assert due_items(storage, "timers", now) == []
    later = due_items(storage, "timers", dt.datetime(2026, 1, 18, 12, 5))  # naive = UTC
    assert [d["id"] for d in later] == ["b"]


def test_set_timer_then_due_items_finds_it_when_time_comes(ctx: CommandContext) -> None:
    entry = _set(ctx, duration="PT45S", label="tea")
    now = dt.datetime.now(dt.UTC)
    assert due_items(ctx.storage, "timers", now) == []
    due = due_items(ctx.storage, "timers", now + dt.timedelta(minutes=1))
    assert [d["id"] for d in due] == [entry["id"]]
    assert due[0]["announcement"] == "Your 45 second tea timer is done."
