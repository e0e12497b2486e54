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
from datetime import datetime
from typing import Any

from jarvis.center import dates
from jarvis.center.toolspec import ToolCatalog, ToolSpec

__all__ = ["context_message", "system_prompt"]

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
