"""The messages the LLM reads: a stable system prompt, the history, and a per-turn tail.

The command part of the system prompt depends only on the conversation's tools, so it is
byte-identical across turns and an engine that reuses its KV cache (llama.cpp) skips it.
Everything that changes each turn (date, time, resolved dates, node) is a separate system
message placed last.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jarvis.center import dates
from jarvis.center.toolspec import ToolCatalog, ToolSpec

__all__ = [
    "compact_dates_message", "compact_system_prompt", "context_message", "system_prompt",
]

_INTRO = """You are Jarvis, a private voice assistant. Your replies are spoken aloud: answer \
in one or two short plain sentences, with no markdown, lists or emoji.

How to work:
- To act or to look something up, call the matching tool. Fill parameters only with \
values the user gave or that are certain; leave optional parameters out otherwise.
- Use exact formats: dates as YYYY-MM-DD, date-times as ISO-8601 with the timezone \
offset (2026-01-18T05:00:00-05:00), durations as ISO-8601 (PT5M).
- For relative dates ("tomorrow", "next friday") copy the value from the resolved dates \
in the last system message, or call resolve_relative_date with the user's phrase.
- If a required value is missing or ambiguous, call ask_user with a short question \
instead of guessing.
- After a tool result, tell the user the outcome briefly. If no tool fits and you can \
answer from general knowledge, answer directly."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _param_line(name: str, spec: Any, raw: dict[str, Any] | None) -> str:
    type_name = spec.type.name if spec.type is not None else "any"
    bits = [type_name, "required" if spec.required else "optional"]
    if spec.enum:
        bits.append("one of: " + ", ".join(spec.enum))
    line = f"- {name} ({'; '.join(bits)})"
    if spec.description:
        line += f": {spec.description}"
    example = spec.example if spec.example is not None else (raw or {}).get("example")
    if example is not None:
        line += f" Example: {example if isinstance(example, str) else _json(example)}"
    return line


def _command_block(tool: ToolSpec) -> str:
    command = tool.command or {}
    lines = [f"## {tool.name}", tool.description.strip() or "(no description)"]
    raw_params = {p.get("name"): p for p in command.get("parameters") or []}
    if tool.params:
        lines.append("Parameters:")
        lines.extend(_param_line(n, s, raw_params.get(n)) for n, s in tool.params.items())
    examples = command.get("examples") or []
    if examples:
        lines.append("Examples:")
        for example in examples:
            said = example.get("voice_command", "")
            args = example.get("expected_parameters", {})
            lines.append(f'- "{said}" -> {tool.name}({_json(args)})')
    if command.get("critical_rules"):
        lines.append("CRITICAL rules:")
        lines.extend(f"- {rule}" for rule in command["critical_rules"])
    if command.get("rules"):
        lines.append("Rules:")
        lines.extend(f"- {rule}" for rule in command["rules"])
    if command.get("antipatterns"):
        lines.append("Do not confuse with:")
        for anti in command["antipatterns"]:
            lines.append(f"- {anti.get('command_name', '?')}: {anti.get('description', '')}")
    return "\n".join(lines)


_prompts: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()


def system_prompt(catalog: ToolCatalog, cache_key: str | None = None) -> str:
    """The stable system prompt for a tool set (cached by `cache_key`)."""
    if cache_key is not None:
        with _lock:
            found = _prompts.get(cache_key)
            if found is not None:
                return found
    parts = [_INTRO]
    if catalog.tools:
        parts.append("# Commands")
        parts.extend(_command_block(t) for t in catalog.tools.values())
    else:
        parts.append("No device commands are available; answer directly.")
    text = "\n\n".join(parts)
    if cache_key is not None:
        with _lock:
            _prompts[cache_key] = text
            while len(_prompts) > 256:
                _prompts.popitem(last=False)
    return text


_tails: OrderedDict[tuple[Any, ...], str] = OrderedDict()


def context_message(node_context: dict[str, Any], now: datetime) -> str:
    """The per-turn system message: now in the node's zone, resolved dates, the node."""
    zone = node_context.get("timezone") or "UTC"
    key = (zone, now.strftime("%Y-%m-%dT%H:%M"), node_context.get("node_id"),
           node_context.get("room"))
    with _lock:
        found = _tails.get(key)
        if found is not None:
            return found
    info = dates.current_datetime_info(zone, now)
    lines = [
        f"Now: {info['weekday']} {info['date']} {info['time']} ({info['datetime']}), "
        f"timezone {zone}.",
    ]
    if node_context.get("room") or node_context.get("node_id"):
        where = node_context.get("room") or node_context.get("node_id")
        lines.append(f"The user is speaking to the device in: {where}.")
    lines.append("Resolved dates (phrase: value):")
    lines.append(dates.render_date_table(dates.common_date_table(zone, now)))
    text = "\n".join(lines)
    with _lock:
        _tails[key] = text
        while len(_tails) > 256:
            _tails.popitem(last=False)
    return text


# --- compact style: for small local models (the embedded backend) ----------------------------
# Every token of the stable prefix costs ~8 ms to read on 2 cores and every line competes for
# a 0.5B model's attention, so this form lists each tool on a few short lines, keeps one
# example per command, and leaves the native tool schemas out of the prompt.

_COMPACT_INTRO = """You are Jarvis, a voice assistant. When the user asks for something one \
of the tools does, call that tool, copying names, numbers and words from what the user \
said; leave out optional parameters the user did not mention. Otherwise (greetings, \
thanks, chat, general questions, requests no tool does) answer in one short spoken \
sentence without calling a tool."""


# Words, not calls, for what no tool does: without them a small model copies the first
# example call for every greeting.
_NO_TOOL_EXAMPLES = [
    '"good evening" -> say: Good evening! What can I do for you?',
    '"who painted the mona lisa" -> say: Leonardo da Vinci painted it.',
]


def _compact_examples(tool: ToolSpec, per_tool: int) -> list[str]:
    command = tool.command or {}
    examples = list(command.get("examples") or [])
    # One example, or two when the first shows no arguments (a bare {} teaches little and
    # a small model copies it for everything).
    if examples and not examples[0].get("expected_parameters"):
        per_tool += 1
    lines = []
    for example in examples[:per_tool]:
        said = example.get("voice_command", "")
        args = example.get("expected_parameters", {})
        lines.append(f'"{said}" -> {tool.name} {_json(args)}')
    return lines


# Keywords per tool shown in the prompt; all of them still steer the tool choice as a prior.
_PROMPT_KEYWORDS = 8


def _keyword_line(tool: ToolSpec) -> str:
    # Words of two letters or fewer ("in") point everywhere.
    words = [w for w in tool.keywords if len(w) > 2]
    words = words[:_PROMPT_KEYWORDS]
    return f"{tool.name}: {', '.join(words)}" if words else ""


def compact_system_prompt(catalog: ToolCatalog, cache_key: str | None = None) -> str:
    """The stable system prompt in the compact style: short rules and one example per tool.

    The tool schemas themselves are shown by the backend (the embedded one shows them
    slimmed), so nothing here repeats them.
    """
    key = None if cache_key is None else "compact:" + cache_key
    if key is not None:
        with _lock:
            found = _prompts.get(key)
            if found is not None:
                return found
    parts = [_COMPACT_INTRO]
    # The commands' routing keywords steer a small model off look-alike names (measured:
    # unit conversions went to calculate 6 times in 11 without them, once with them).
    words = [line for line in (_keyword_line(t) for t in catalog.tools.values()) if line]
    if words:
        parts.append("Words that point to each tool:\n" + "\n".join(words))
    examples = [line for t in catalog.tools.values() for line in _compact_examples(t, 1)]
    if examples:
        examples += _NO_TOOL_EXAMPLES
        parts.append("Examples:\n" + "\n".join(examples))
    text = "\n\n".join(parts)
    if key is not None:
        with _lock:
            _prompts[key] = text
            while len(_prompts) > 256:
                _prompts.popitem(last=False)
    return text


# Phrases of the date table worth their tokens in the compact prefix.
_COMPACT_PHRASES = ("today", "tonight", "tomorrow", "tomorrow morning",
                    "the day after tomorrow", "this weekend")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _local(now: datetime, zone: str) -> datetime:
    try:
        return now.astimezone(ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        return now.astimezone(UTC)


def compact_dates_message(
    node_context: dict[str, Any], now: datetime, *, table: bool = True
) -> str:
    """The day's resolved dates, one line per value with every phrase that means it.

    It changes once a day (per zone), so the center puts it right after the stable prompt
    where the backend's prefix cache keeps it; the clock time is left out for the same
    reason (a tool call rarely needs it; get_current_time and server tools have it).
    `table=False` keeps only the day and zone: for a backend that takes date arguments
    from the center's date hints, the table costs ~300 prompt tokens and gains nothing.
    """
    zone = node_context.get("timezone") or "UTC"
    day = _local(now, zone).date().isoformat()
    room = node_context.get("room")
    key = ("dates", zone, day, room, table)
    with _lock:
        found = _tails.get(key)
        if found is not None:
            return found
    info = dates.current_datetime_info(zone, now)
    lines = [f"Today is {info['weekday']} {info['date']} (timezone {zone})."]
    if table:
        by_value: dict[str, list[str]] = {}
        for phrase, values in dates.common_date_table(zone, now).items():
            if phrase in _COMPACT_PHRASES or phrase in _WEEKDAYS:
                for value in values:
                    by_value.setdefault(value, []).append(phrase)
        lines[0] += " Dates and times the user may name, with the value to copy:"
        lines.extend(f"{', '.join(phrases)}: {value}"
                     for value, phrases in sorted(by_value.items()))
    if room:
        lines.append(f"The user is in the {room}.")
    text = "\n".join(lines)
    with _lock:
        _tails[key] = text
        while len(_tails) > 256:
            _tails.popitem(last=False)
    return text
