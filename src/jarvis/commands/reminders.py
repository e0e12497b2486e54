"""`reminder`: set, list and delete reminders that the node announces when they are due.

Each reminder is one entry in the storage namespace `reminders` (key = id):
`{"id", "text", "due_at", "created_at", "fired", "announcement", "tool_call_id"}` with
ISO-8601 UTC times. A call that refines the call which set a reminder (`tool_call_id`)
moves that reminder instead of setting another.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any
from zoneinfo import ZoneInfo

from rapidfuzz import fuzz

from jarvis.commands._schedule import (
    iso_utc,
    made_by,
    parse_utc,
    reminder_announcement,
    speak_clock,
    speak_day,
    to_the_user,
)
from jarvis.commands._when import drop_said_when, parse_clock_text
from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    RequestInformation,
    ValidationResult,
)

__all__ = ["ACTIONS", "DEFAULT_TIME", "NAMESPACE", "ReminderCommand", "parse_clock_text"]

NAMESPACE = "reminders"
ACTIONS = ("set", "list", "delete")
# A day without a time ("remind me tomorrow") means this time of that day.
DEFAULT_TIME = dt.time(9, 0)
_ACTION_ALIASES = {
    "add": "set", "create": "set", "new": "set", "remind": "set", "schedule": "set",
    "read": "list", "show": "list", "get": "list", "check": "list", "what": "list",
    "remove": "delete", "cancel": "delete", "clear": "delete", "erase": "delete",
}
# What people say for each action; the center favours the action whose words were said.
_SAID_ACTIONS = {
    "set": ["remind me", "set a reminder", "new reminder", "don't let me forget"],
    "list": ["what reminders", "any reminders", "what are my reminders", "list", "show",
             "read"],
    "delete": ["delete", "cancel", "remove", "get rid of", "clear"],
}
_ALL = {"all", "all reminders", "everything", "every reminder", "all of them", "*"}
_NAIVE_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?)?")


def _zone(name: str | None) -> dt.tzinfo:
    return ZoneInfo(name) if name else dt.datetime.now().astimezone().tzinfo or dt.UTC


def _about(text: str) -> str:
    """ " to call mom", " about the dentist", or nothing for a reminder without words."""
    if not text:
        return ""
    text = to_the_user(text)
    return f" {text}" if text.lower().startswith(("to ", "about ")) else f" to {text}"


class ReminderCommand(IJarvisCommand):
    """Reminders at a date and time, read back in the node's time zone."""

    @property
    def command_name(self) -> str:
        return "reminder"

    @property
    def description(self) -> str:
        return (
            "Set a reminder for a date and/or clock time ('remind me tomorrow at 8 to call "
            "mom'), list reminders, or delete one."
        )

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("action", "string", required=True, enum_values=list(ACTIONS),
                            description="set a new reminder, list reminders, or delete one",
                            enum_synonyms=_SAID_ACTIONS),
            JarvisParameter("text", "string",
                            description="What to remind about, e.g. 'call mom'; for delete, "
                                        "words of the reminder to delete"),
            JarvisParameter("resolved_datetimes", "array<datetime>", refinable=True,
                            description="The day (and time) of the reminder as ISO-8601 "
                                        "date-times with offset; from resolve_relative_date"),
            JarvisParameter("time", "time", refinable=True,
                            description="Clock time of day as HH:MM (24 hour), e.g. 17:30",
                            example="08:00"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("remind me at 5 pm to take out the trash",
                           {"action": "set", "text": "take out the trash", "time": "17:00"},
                           is_primary=True),
            CommandExample("remind me tomorrow at 8 am to call mom",
                           {"action": "set", "text": "call mom",
                            "resolved_datetimes": ["2026-01-19T00:00:00-05:00"],
                            "time": "08:00"}),
            CommandExample("what are my reminders", {"action": "list"}),
            CommandExample("delete the reminder about the dentist",
                           {"action": "delete", "text": "dentist"}),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return [
            "time is the clock time as HH:MM in 24 hours: 5 pm -> 17:00, 8 am -> 08:00",
            "A day ('tomorrow', 'friday') goes in resolved_datetimes; resolve it first",
            "text is only the thing to remember, without 'remind me to'",
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("set_timer", "'Set a timer for 10 minutes' (a length of time, "
                               "counting down) is set_timer, not reminder."),
            CommandAntipattern("todo_list", "A task with no time ('add call mom to my to-do "
                               "list') is todo_list."),
        ]

    @property
    def keywords(self) -> list[str]:
        # Its own verbs too: "cancel the reminder" must not lose to cancel_timer's "cancel".
        return ["remind", "reminder", "reminders", "don't forget", "forget", "remember",
                "cancel"]

    # --- small-model fixes -------------------------------------------------------------------
    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        action = fixed.get("action")
        if isinstance(action, str):
            key = action.strip().lower()
            fixed["action"] = key if key in ACTIONS else _ACTION_ALIASES.get(key, action)
        text = fixed.get("text")
        if isinstance(text, str):
            # "about" stays: "remind you about the dentist", never "remind you to the dentist".
            fixed["text"] = re.sub(r"^(?:remind me (?:to )?|to )", "",
                                   text.strip(), flags=re.I).strip()
        clock = fixed.get("time")
        if isinstance(clock, str) and parse_clock_text(clock):
            fixed["time"] = parse_clock_text(clock)
        dates = fixed.get("resolved_datetimes")
        if isinstance(dates, str):
            dates = [dates]
        if isinstance(dates, list):
            fixed["resolved_datetimes"] = [self._with_offset(d) for d in dates]
        return fixed

    def _with_offset(self, value: Any) -> Any:
        """A naive "2026-01-18T09:00" means the node's local time; give it the offset."""
        if not isinstance(value, str) or not _NAIVE_DATETIME.fullmatch(value.strip()):
            return value
        moment = dt.datetime.fromisoformat(value.strip())
        return moment.replace(tzinfo=_zone(self.context.timezone)).isoformat()

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        action = kwargs.get("action")
        if action == "set" and not kwargs.get("text"):
            results.append(ValidationResult(
                success=False, param_name="text", command_name=self.command_name,
                message="What should I remind you about?",
            ))
        if action == "set" and not kwargs.get("resolved_datetimes") and not kwargs.get("time"):
            results.append(ValidationResult(
                success=False, param_name="time", command_name=self.command_name,
                message="When should I remind you? Give a time or a day",
            ))
        return results

    # --- actions -------------------------------------------------------------------------------
    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        zone = _zone(request_info.timezone or self.context.timezone)
        action: str = kwargs["action"]
        if action == "set":
            return self._set(zone, request_info, **kwargs)
        if action == "list":
            return self._list(zone)
        return self._delete(zone, kwargs.get("text"))

    def _due(
        self, zone: dt.tzinfo, now: dt.datetime, voice_command: str,
        dates: list[dt.datetime] | None, clock: dt.time | None,
    ) -> tuple[dt.datetime, bool]:
        """The local due time, and whether the day was given explicitly."""
        if dates:
            day = min(dates).astimezone(zone)
            if clock is not None:
                wall = clock.replace(tzinfo=None)
                return day.replace(hour=wall.hour, minute=wall.minute, second=wall.second,
                                   microsecond=0), True
            if day.time() == dt.time(0, 0) and "midnight" not in voice_command.lower():
                return day.replace(hour=DEFAULT_TIME.hour, minute=DEFAULT_TIME.minute), True
            return day, True
        assert clock is not None
        wall = clock.replace(tzinfo=None)
        due = now.replace(hour=wall.hour, minute=wall.minute, second=wall.second, microsecond=0)
        if due <= now:
            due += dt.timedelta(days=1)  # "at 7" said at 8 pm means tomorrow
        return due, False

    def _set(self, zone: dt.tzinfo, info: RequestInformation, **kwargs: Any) -> CommandResponse:
        now = dt.datetime.now(zone)
        due, explicit = self._due(zone, now, info.voice_command,
                                  kwargs.get("resolved_datetimes"), kwargs.get("time"))
        when = f"{speak_day(due.date(), now.date())} at {speak_clock(due)}"
        # The confirmation says `when` itself: the text keeps only what to remember.
        text = drop_said_when(str(kwargs["text"]).strip().rstrip("."), due, now)
        if explicit and due <= now:
            return CommandResponse.error_response(
                f"That time, {when}, has already passed.",
                {"due_at": iso_utc(due), "error": "in_the_past"},
            )
        # "actually make it 6 pm": the reminder the refined call set moves.
        earlier = made_by(self.context.storage, NAMESPACE, info.refines_tool_call_id)
        entry: dict[str, Any] = {
            "id": earlier["id"] if earlier else uuid.uuid4().hex[:12],
            "text": text,
            "due_at": iso_utc(due),
            "created_at": earlier["created_at"] if earlier else iso_utc(now),
            "fired": False,
            "tool_call_id": info.tool_call_id,
        }
        entry["announcement"] = reminder_announcement(entry)
        self.context.storage.set(NAMESPACE, entry["id"], entry)
        context = {"reminder": entry, "local_due": due.isoformat(timespec="minutes")}
        if earlier is not None:
            return CommandResponse.success_response(
                {**context, "changed": True},
                message=f"OK, the reminder{_about(text)} is now {when}.")
        return CommandResponse.success_response(
            context, message=f"OK, I'll remind you{_about(text)} {when}.")

    def _pending(self) -> list[dict[str, Any]]:
        entries = [
            e for e in self.context.storage.items(NAMESPACE).values()
            if isinstance(e, dict) and not e.get("fired") and "due_at" in e
        ]
        return sorted(entries, key=lambda e: parse_utc(e["due_at"]))

    def _list(self, zone: dt.tzinfo) -> CommandResponse:
        now = dt.datetime.now(zone)
        pending = self._pending()
        spoken = []
        listed = []
        for entry in pending:
            local = parse_utc(entry["due_at"]).astimezone(zone)
            when = f"{speak_day(local.date(), now.date())} at {speak_clock(local)}"
            spoken.append(f"{to_the_user(entry['text'])} {when}".strip())
            listed.append({**entry, "local_due": local.isoformat(timespec="minutes"),
                           "when": when})
        if not spoken:
            message = "You have no reminders."
        elif len(spoken) == 1:
            message = f"You have one reminder: {spoken[0]}."
        else:
            message = (f"You have {len(spoken)} reminders: " + "; ".join(spoken[:-1])
                       + f"; and {spoken[-1]}.")
        return CommandResponse.success_response({"reminders": listed}, message=message)

    def _delete(self, zone: dt.tzinfo, text: str | None) -> CommandResponse:
        pending = self._pending()
        if not pending:
            return CommandResponse.success_response({"deleted": []},
                                                    message="You have no reminders.")
        wanted = (text or "").strip().lower()
        if wanted in _ALL:
            chosen = pending
        elif not wanted:
            if len(pending) != 1:
                return self._which(pending, "Which reminder should I delete?")
            chosen = pending
        else:
            chosen = [e for e in pending if wanted in e["text"].lower()]
            if not chosen:
                scored = [(fuzz.WRatio(wanted, e["text"].lower()), e) for e in pending]
                best_score, best = max(scored, key=lambda pair: pair[0])
                if best_score < 75:
                    return self._which(pending, f"I couldn't find a reminder about {text}")
                chosen = [best]
        for entry in chosen:
            self.context.storage.delete(NAMESPACE, entry["id"])
        if len(chosen) == 1:
            message = f"Deleted the reminder{_about(chosen[0]['text'])}."
        else:
            message = f"Deleted {len(chosen)} reminders."
        return CommandResponse.success_response({"deleted": chosen}, message=message)

    def _which(self, pending: list[dict[str, Any]], message: str) -> CommandResponse:
        return CommandResponse.validation_error([ValidationResult(
            success=False, param_name="text", command_name=self.command_name,
            message=message, valid_values=[e["text"] for e in pending],
        )])
