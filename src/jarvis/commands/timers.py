"""Timers: `set_timer`, `check_timers`, `cancel_timer`, and `due_items` for the node's scheduler.

Each timer is one entry in the storage namespace `timers` (key = id):
`{"id", "label", "duration_seconds", "due_at", "created_at", "fired", "announcement",
"tool_call_id"}`, with `due_at` and `created_at` as ISO-8601 UTC text. The node announces
due entries (their `announcement`) and sets `fired: true`. A call that refines the call
which started a timer (`tool_call_id`) changes that timer instead of starting another.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any

from rapidfuzz import fuzz, process

from jarvis.commands._durations import (
    drop_duration,
    is_pure_duration,
    parse_duration,
    speak_duration,
    to_iso_duration,
    unit_phrase,
)
from jarvis.commands._schedule import (
    due_items,
    iso_utc,
    made_by,
    mark_fired,
    parse_utc,
    timer_announcement,
)
from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    CommandStorage,
    IJarvisCommand,
    JarvisParameter,
    PreRouteResult,
    RequestInformation,
    ValidationResult,
)

__all__ = [
    "NAMESPACE",
    "CancelTimerCommand",
    "CheckTimersCommand",
    "SetTimerCommand",
    "due_items",
    "iso_utc",
    "mark_fired",
    "parse_utc",
]

NAMESPACE = "timers"
_ALL_WORDS = {"all", "all timers", "every", "every timer", "everything", "all of them", "*"}
# Words around a label that name no timer: "the", "another", "called", "timer".
_LABEL_JUNK = re.compile(
    r"^(?:the|my|a|an|another|other|second)(?:\s+|$)|^(?:timer\s+)?(?:called|named)(?:\s+|$)"
    r"|^new$|(?:^|\s+)timer$")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _active_timers(storage: CommandStorage) -> list[dict[str, Any]]:
    timers = [
        entry for entry in storage.items(NAMESPACE).values()
        if isinstance(entry, dict) and not entry.get("fired") and "due_at" in entry
    ]
    return sorted(timers, key=lambda entry: entry["due_at"])


def _clean_label(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    label = _LABEL_JUNK.sub("", value.strip().lower().replace("_", " ")).strip()
    label = _LABEL_JUNK.sub("", label).strip()
    return label or None


def _new_label(value: object, duration: dt.timedelta | None = None) -> str | None:
    """A new timer's label, without the words saying its `duration` ("5 minute pasta")."""
    label = _clean_label(value)
    said = value.strip().lower() if isinstance(value, str) else ""
    for text in (said, label or ""):
        if text and is_pure_duration(text) and parse_duration(text) is not None:
            return None  # it would be announced as "the 90 minutes timer"
    if said and duration is not None:
        # The confirmation and the announcement say the length themselves.
        label = _clean_label(drop_duration(said, duration))
    return label


def _describe(entry: dict[str, Any]) -> str:
    label = entry.get("label")
    if label:
        return f"the {label} timer"
    seconds = entry.get("duration_seconds")
    return f"the {unit_phrase(dt.timedelta(seconds=seconds))} timer" if seconds else "a timer"


_SET_PATTERNS = (
    # "set a timer for 5 minutes (for pasta)"
    re.compile(r"^(?:set|start|create)(?: a| an)? timer for (?P<dur>.+?)(?: for (?P<label>.+))?$"),
    # "set a 5 minute (pasta) timer"
    re.compile(r"^(?:set|start|create)(?: a| an)? (?P<dur>.+? (?:seconds?|minutes?|hours?)) "
               r"(?P<label>.+? )?timer$"),
    # "timer for 10 minutes"
    re.compile(r"^timer for (?P<dur>.+)$"),
)


class SetTimerCommand(IJarvisCommand):
    """Starts a countdown timer that the node announces when it runs out."""

    @property
    def command_name(self) -> str:
        return "set_timer"

    @property
    def description(self) -> str:
        return (
            "Start a countdown timer for a length of time ('set a timer for 5 minutes'). "
            "Jarvis says when it is done. For something at a clock time or date, use reminder."
        )

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("duration", "timedelta", required=True, refinable=True,
                            description="How long, as an ISO-8601 duration: PT5M = 5 minutes, "
                                        "PT1H30M = 1.5 hours, PT45S = 45 seconds",
                            example="PT5M"),
            JarvisParameter("label", "string",
                            description="Optional name of the timer, e.g. pasta or laundry"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("set a timer for 5 minutes", {"duration": "PT5M"}, is_primary=True),
            CommandExample("set a 10 minute pasta timer", {"duration": "PT10M", "label": "pasta"}),
            CommandExample("timer for an hour and a half", {"duration": "PT1H30M"}),
            CommandExample("start a 30 second timer", {"duration": "PT30S"}),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return [
            "duration is an ISO-8601 duration: 5 minutes -> PT5M, 2 hours -> PT2H, "
            "90 seconds -> PT90S, 1 hour 15 minutes -> PT1H15M",
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("reminder", "'Remind me at 5 pm to ...' or 'remind me tomorrow' "
                               "is a reminder with a time or date, not a timer."),
            CommandAntipattern("check_timers", "'How much time is left' is check_timers."),
        ]

    @property
    def keywords(self) -> list[str]:
        # The phrases single set_timer out from the other timer commands ("set a timer"
        # with no length yet: the command asks for it).
        return ["timer", "countdown", "minutes", "seconds", "hours", "set a timer",
                "start a timer", "timer for"]

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        text = voice_command.lower().strip().rstrip(".!?").strip()
        text = re.sub(r"^(?:please |can you |could you )", "", text)
        for pattern in _SET_PATTERNS:
            m = pattern.match(text)
            if not m:
                continue
            duration = parse_duration(m["dur"]) if is_pure_duration(m["dur"]) else None
            if duration is None:
                return None
            arguments: dict[str, Any] = {"duration": to_iso_duration(duration)}
            label = _clean_label(m.groupdict().get("label"))
            if label:
                arguments["label"] = label
            return PreRouteResult(arguments=arguments)
        return None

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        raw = fixed.get("duration")
        if isinstance(raw, str) and re.fullmatch(r"P(?!$)[0-9YMWDTHS]+", raw.strip()):
            return fixed  # already ISO; the pipeline checks it
        # The utterance is the best witness of what a non-ISO value meant ("00:05" ...).
        duration = parse_duration(voice_command) or parse_duration(raw)
        if duration is not None:
            fixed["duration"] = to_iso_duration(duration)
        if "label" in fixed:
            fixed["label"] = _new_label(fixed["label"])
        return fixed

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        duration = parse_duration(kwargs.get("duration"))
        if not results and kwargs.get("duration") is not None and duration is None:
            results.append(ValidationResult(
                success=False, param_name="duration", command_name=self.command_name,
                message="A timer needs a length between 1 second and 365 days, e.g. PT5M",
            ))
        return results

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        duration: dt.timedelta = kwargs["duration"]
        storage = self.context.storage
        # "actually make it 20 minutes": the timer the refined call started changes.
        earlier = made_by(storage, NAMESPACE, request_info.refines_tool_call_id)
        if earlier is not None:
            return self._change(earlier, duration, request_info.tool_call_id)
        label = _new_label(kwargs.get("label"), duration)
        now = _now()
        timer_id = uuid.uuid4().hex[:12]
        entry: dict[str, Any] = {
            "id": timer_id,
            "label": label,
            "duration_seconds": round(duration.total_seconds()),
            "due_at": iso_utc(now + duration),
            "created_at": iso_utc(now),
            "fired": False,
            "tool_call_id": request_info.tool_call_id,
        }
        entry["announcement"] = timer_announcement(entry)
        storage.set(NAMESPACE, timer_id, entry)
        what = f"{label.capitalize()} timer" if label else "Timer"
        return CommandResponse.success_response(
            {"timer": entry, "duration": to_iso_duration(duration)},
            message=f"{what} set for {speak_duration(duration)}.",
        )

    def _change(self, entry: dict[str, Any], duration: dt.timedelta,
                call_id: str | None) -> CommandResponse:
        """The running timer with its new length, counted from when it started ("5 minutes
        longer" ends 5 minutes later); one already past its new length is due now. Its
        label stays: a refinement changes only the length."""
        started = parse_utc(entry["created_at"])
        changed = {**entry, "duration_seconds": round(duration.total_seconds()),
                   "due_at": iso_utc(max(started + duration, _now())),
                   "tool_call_id": call_id}
        changed["announcement"] = timer_announcement(changed)
        self.context.storage.set(NAMESPACE, changed["id"], changed)
        label = changed.get("label")
        name = f"the {label} timer" if label else "the timer"
        return CommandResponse.success_response(
            {"timer": changed, "duration": to_iso_duration(duration), "changed": True},
            message=f"OK, {name} is now {speak_duration(duration)}.",
        )


class CheckTimersCommand(IJarvisCommand):
    """Says which timers are running and how long each has left."""

    @property
    def command_name(self) -> str:
        return "check_timers"

    @property
    def description(self) -> str:
        return "Tell how much time is left on the running timers."

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("how much time is left on my timer", {}, is_primary=True),
            CommandExample("what timers do I have", {}),
            CommandExample("is the egg timer done yet", {}),
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("get_current_time", "'What time is it' is get_current_time."),
            CommandAntipattern("reminder", "'What are my reminders' is reminder with action list."),
        ]

    @property
    def keywords(self) -> list[str]:
        # "how long" alone is as often about the world ("how long do you boil an egg").
        return ["timer", "time left", "left on", "remaining", "how long until", "how long till",
                "how much longer"]

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        text = voice_command.lower().strip().rstrip("?.!").strip()
        if text in ("how much time is left", "how long is left", "check my timer",
                    "check my timers", "check timers", "how much time is left on my timer",
                    "how long is left on my timer", "what timers do i have"):
            return PreRouteResult(arguments={})
        return None

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        now = _now()
        running: list[dict[str, Any]] = []
        phrases: list[str] = []
        for entry in _active_timers(self.context.storage):
            left = parse_utc(entry["due_at"]) - now
            seconds = max(0, round(left.total_seconds()))
            running.append({**entry, "seconds_left": seconds})
            name = _describe(entry)
            if seconds == 0:
                phrases.append(f"{name} is done")
            else:
                phrases.append(f"{name} has {speak_duration(dt.timedelta(seconds=seconds))} left")
        if not phrases:
            message = "You have no timers running."
        elif len(phrases) == 1:
            message = phrases[0][0].upper() + phrases[0][1:] + "."
        else:
            joined = "; ".join(phrases[:-1]) + f"; and {phrases[-1]}"
            message = f"You have {len(phrases)} timers: {joined}."
        return CommandResponse.success_response({"timers": running}, message=message)


class CancelTimerCommand(IJarvisCommand):
    """Cancels one timer by its label, or all of them."""

    @property
    def command_name(self) -> str:
        return "cancel_timer"

    @property
    def description(self) -> str:
        return "Cancel (stop, delete) a running timer by its label, or all timers."

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("label", "string",
                            description="Which timer, by its label (e.g. pasta); omit when there "
                                        "is only one"),
            JarvisParameter("all_timers", "bool", description="true to cancel every timer"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("cancel the pasta timer", {"label": "pasta"}, is_primary=True),
            CommandExample("cancel my timer", {}),
            CommandExample("cancel all timers", {"all_timers": True}),
            CommandExample("stop the timer", {}),
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("reminder", "Deleting a reminder is reminder with action delete."),
            CommandAntipattern("music", "'Stop the music' is music with action stop."),
        ]

    @property
    def keywords(self) -> list[str]:
        return ["cancel", "timer", "stop timer", "delete timer", "clear", "stop the timer",
                "turn off the timer", "abort", "scrap", "get rid of"]

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        label = fixed.get("label")
        if isinstance(label, str) and label.strip().lower() in _ALL_WORDS:
            fixed.pop("label")
            fixed["all_timers"] = True
        if isinstance(fixed.get("all_timers"), str):
            fixed["all_timers"] = fixed["all_timers"].strip().lower() in ("true", "yes", "1")
        if re.search(r"\ball (?:my |the )?timers\b|\bevery timer\b", voice_command.lower()):
            fixed["all_timers"] = True
        if "label" in fixed:
            fixed["label"] = _clean_label(fixed["label"])
        return fixed

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        storage = self.context.storage
        timers = _active_timers(storage)
        label = _clean_label(kwargs.get("label"))
        if not timers:
            return CommandResponse.success_response({"cancelled": []},
                                                    message="You have no timers running.")
        if kwargs.get("all_timers"):
            chosen = timers
        elif label:
            chosen = self._match(timers, label)
            if not chosen:
                names = [t["label"] for t in timers if t.get("label")]
                return CommandResponse.validation_error([ValidationResult(
                    success=False, param_name="label", command_name=self.command_name,
                    message=f"There is no {label} timer",
                    valid_values=names or None,
                )])
        elif len(timers) == 1:
            chosen = timers
        else:
            names = [t["label"] for t in timers if t.get("label")]
            return CommandResponse.validation_error([ValidationResult(
                success=False, param_name="label", command_name=self.command_name,
                message=f"You have {len(timers)} timers; which one should I cancel?",
                valid_values=names or None,
            )])
        for entry in chosen:
            storage.delete(NAMESPACE, entry["id"])
        if len(chosen) == 1:
            message = f"Cancelled {_describe(chosen[0])}."
        else:
            message = f"Cancelled all {len(chosen)} timers."
        return CommandResponse.success_response({"cancelled": chosen}, message=message)

    @staticmethod
    def _match(timers: list[dict[str, Any]], label: str) -> list[dict[str, Any]]:
        exact = [t for t in timers if (t.get("label") or "") == label]
        if exact:
            return exact
        by_length = [t for t in timers if _describe(t) == f"the {label} timer"]
        if by_length:
            return by_length  # "cancel the 5 minute timer"
        labelled = {t["id"]: t["label"] for t in timers if t.get("label")}
        best = process.extractOne(label, labelled, scorer=fuzz.WRatio, score_cutoff=80)
        return [t for t in timers if best and t["id"] == best[2]]
