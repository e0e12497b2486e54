"""Tools the center runs itself: relative dates, the current time, and asking the user.

`resolve_relative_date` and `get_current_datetime` run here and their results go straight
back to the LLM. `ask_user` never runs: the engine turns it into `validation_required`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from jarvis.center import dates

__all__ = ["ASK_USER", "ASK_USER_TOOL", "SERVER_TOOLS", "SERVER_TOOL_NAMES", "run_server_tool"]

ASK_USER = "ask_user"

ASK_USER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": ASK_USER,
        "description": (
            "Ask the user a short clarification question when a required value is missing "
            "or ambiguous. Their spoken answer comes back as the next user message."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question to speak."},
                "parameter_name": {
                    "type": "string",
                    "description": "The tool parameter the answer is for, if any.",
                },
                "options": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Possible answers to offer, if there are a few.",
                },
            },
            "required": ["question"],
        },
    },
}

SERVER_TOOLS: list[dict[str, Any]] = [
    dates.RESOLVE_RELATIVE_DATE_TOOL,
    dates.GET_CURRENT_DATETIME_TOOL,
    ASK_USER_TOOL,
]
SERVER_TOOL_NAMES = frozenset(t["function"]["name"] for t in SERVER_TOOLS)


def _zone(args: dict[str, Any], default: str) -> str:
    zone = args.get("timezone")
    return zone if isinstance(zone, str) and zone.strip() else default


def run_server_tool(
    name: str, arguments: str, timezone: str, now: datetime | None = None
) -> dict[str, Any]:
    """Run a date tool; errors come back as `{"error": ...}` for the LLM to read."""
    try:
        args = json.loads(arguments) if arguments and arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return {"error": f"arguments are not valid JSON ({exc.msg})"}
    if not isinstance(args, dict):
        return {"error": "arguments must be a JSON object"}
    try:
        if name == "resolve_relative_date":
            phrase = args.get("phrase")
            if not isinstance(phrase, str) or not phrase.strip():
                return {"error": "'phrase' is required: the date phrase the user said"}
            zone = _zone(args, timezone)
            return {
                "phrase": phrase,
                "timezone": zone,
                "datetimes": dates.resolve_relative_date(phrase, zone, now),
            }
        if name == "get_current_datetime":
            return dates.current_datetime_info(_zone(args, timezone), now)
    except ValueError as exc:
        return {"error": str(exc)}
    return {"error": f"'{name}' is not a server tool"}
