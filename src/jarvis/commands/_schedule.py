"""What timers and reminders share: UTC text, due entries for the scheduler, spoken times."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from jarvis.commands._durations import unit_phrase
from jarvis.sdk import CommandStorage

__all__ = [
    "due_items",
    "iso_utc",
    "made_by",
    "mark_fired",
    "parse_utc",
    "speak_clock",
    "speak_day",
    "timer_announcement",
    "to_the_user",
]

# What the user said of themselves, as Jarvis says it back ("take my pills" -> "your").
_FIRST_PERSON = {"i am": "you are", "i'm": "you're", "i've": "you've", "i'll": "you'll",
                 "i'd": "you'd", "i": "you", "me": "you", "my": "your", "mine": "yours",
                 "myself": "yourself"}
_SAID_OF_ONESELF = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _FIRST_PERSON), key=len, reverse=True)) + r")\b",
    re.IGNORECASE)


def to_the_user(text: str) -> str:
    """`text` as said back to the user who said it: "take my vitamins" -> "take your
    vitamins"."""
    return _SAID_OF_ONESELF.sub(lambda m: _FIRST_PERSON[m[1].lower()], text)


def iso_utc(moment: dt.datetime) -> str:
    """An aware datetime as ISO-8601 UTC text, e.g. 2026-01-18T05:00:00Z."""
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_utc(text: str) -> dt.datetime:
    """Stored ISO text -> aware UTC datetime (a naive value is taken as UTC)."""
    moment = dt.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def timer_announcement(entry: dict[str, Any]) -> str:
    """ "Your 5 minute pasta timer is done." """
    seconds = entry.get("duration_seconds")
    label = (entry.get("label") or "").strip()
    size = f"{unit_phrase(dt.timedelta(seconds=seconds))} " if seconds else ""
    return f"Your {size}{label + ' ' if label else ''}timer is done."


def reminder_announcement(entry: dict[str, Any]) -> str:
    """ "Reminder: call mom.", "Reminder about the dentist." """
    text = to_the_user((entry.get("text") or "").strip().rstrip("."))
    if not text:
        return "This is your reminder."
    return f"Reminder {text}." if text.lower().startswith("about ") else f"Reminder: {text}."


def due_items(storage: CommandStorage, namespace: str, now: dt.datetime) -> list[dict[str, Any]]:
    """Entries of `namespace` that are due at `now` and not yet fired, oldest first.

    Works for `timers` and `reminders` alike; every returned entry carries its `id` and
    an `announcement` to speak. A naive `now` is taken as UTC; unreadable entries are skipped.
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=dt.UTC)
    due: list[tuple[dt.datetime, dict[str, Any]]] = []
    for key, entry in storage.items(namespace).items():
        if not isinstance(entry, dict) or entry.get("fired"):
            continue
        try:
            due_at = parse_utc(str(entry["due_at"]))
        except (KeyError, ValueError):
            continue
        if due_at <= now:
            item = dict(entry)
            item.setdefault("id", key)
            if not item.get("announcement"):
                item["announcement"] = (
                    timer_announcement(item) if namespace == "timers"
                    else reminder_announcement(item)
                )
            due.append((due_at, item))
    due.sort(key=lambda pair: pair[0])
    return [item for _, item in due]


def made_by(storage: CommandStorage, namespace: str, call_id: str | None) -> dict[str, Any] | None:
    """The entry of `namespace` the tool call `call_id` made (its `tool_call_id`), while it
    is still to come; None when there is none (never made, fired or deleted since)."""
    if not call_id:
        return None
    for entry in storage.items(namespace).values():
        if isinstance(entry, dict) and entry.get("tool_call_id") == call_id and not entry.get(
                "fired"):
            return entry
    return None


def mark_fired(storage: CommandStorage, namespace: str, item_id: str) -> None:
    """Record that an entry was announced, so it is not announced again."""
    entry = storage.get(namespace, item_id)
    if isinstance(entry, dict):
        storage.set(namespace, item_id, {**entry, "fired": True})


def speak_clock(moment: dt.datetime | dt.time) -> str:
    """ "3:05 PM", "9 AM" (no leading zero; noon and midnight as people say them)."""
    if moment.hour == 12 and moment.minute == 0:
        return "12 noon"
    if moment.hour == 0 and moment.minute == 0:
        return "12 midnight"
    hour = moment.hour % 12 or 12
    suffix = "AM" if moment.hour < 12 else "PM"
    return f"{hour} {suffix}" if moment.minute == 0 else f"{hour}:{moment.minute:02d} {suffix}"


def speak_day(day: dt.date, today: dt.date) -> str:
    """ "today", "tomorrow", "on Friday", "on March 3"."""
    delta = (day - today).days
    if delta == 0:
        return "today"
    if delta == 1:
        return "tomorrow"
    if delta == -1:
        return "yesterday"
    if 1 < delta < 7:
        return f"on {day:%A}"
    return f"on {day:%B} {day.day}" + (f", {day.year}" if day.year != today.year else "")
