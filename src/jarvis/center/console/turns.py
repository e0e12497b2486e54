"""A stored turn told for people: what was said, what was called, asked and answered, and
where the time went."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

__all__ = ["STAGES", "describe_turns"]

# Stage names in the order of a request, as the engine records them in `stages_ms`;
# `node` is derived: the time between handing tool calls to the node and its results.
STAGES = ("history", "prompt", "llm", "validate", "server_tools", "node")


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw  # shown as the model wrote it


def _calls(messages: list[dict[str, Any]], trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls handed to the node (the center's own tools are listed apart)."""
    own = {s.get("id") for s in trace.get("server_tools", [])}
    calls = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            if call.get("id") in own:
                continue
            function = call.get("function") or {}
            calls.append({"id": call.get("id"), "name": function.get("name"),
                          "arguments": _arguments(function.get("arguments"))})
    return calls


def _said(turn: dict[str, Any]) -> str | None:
    users = [m.get("content") for m in turn["messages"] if m.get("role") == "user"]
    if users:
        return str(users[-1])
    trace = turn["trace"]
    return trace.get("voice_command") or trace.get("validation_response")


def _answer(turn: dict[str, Any]) -> str | None:
    if turn["stop_reason"] not in ("complete", "error", "validation_required"):
        return None
    spoken = [m.get("content") for m in turn["messages"]
              if m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls")]
    return str(spoken[-1]) if spoken else turn["trace"].get("error")


def _tokens(trace: dict[str, Any]) -> dict[str, int]:
    totals = {"prompt": 0, "completion": 0}
    for call in trace.get("llm_calls", []):
        usage = call.get("usage") or {}
        for kind in totals:
            value = usage.get(f"{kind}_tokens")
            if isinstance(value, int):
                totals[kind] += value
    return totals


def _node_ms(turn: dict[str, Any], previous: dict[str, Any] | None) -> float | None:
    """Time the node spent on the previous turn's tool calls (with the network both ways)."""
    if previous is None or previous["stop_reason"] != "tool_calls":
        return None
    if not turn["trace"].get("tool_results"):
        return None
    started: datetime = turn["created_at"] - timedelta(milliseconds=turn["duration_ms"])
    gap = (started - previous["created_at"]).total_seconds() * 1000
    return round(max(gap, 0.0), 3)


def _stages(turn: dict[str, Any], previous: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Timeline bars: each stage's time and its share of the turn (node time included)."""
    recorded = dict(turn["trace"].get("stages_ms", {}))
    node = _node_ms(turn, previous)
    if node is not None:
        recorded["node"] = node
    total = max(turn["duration_ms"] + (node or 0.0), 1e-9)
    order = [s for s in STAGES if s in recorded] + sorted(set(recorded) - set(STAGES))
    return [{"stage": s, "ms": round(float(recorded[s]), 3),
             "percent": round(100 * float(recorded[s]) / total, 1)} for s in order]


def _describe(turn: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    trace = turn["trace"]
    question = None
    if turn["stop_reason"] == "validation_required":
        question = _answer(turn)
    return {
        "id": turn["id"],
        "endpoint": turn["endpoint"],
        "created_at": turn["created_at"],
        "stop_reason": turn["stop_reason"],
        "duration_ms": turn["duration_ms"],
        "said": _said(turn),
        "tool_calls": _calls(turn["messages"], trace),
        "tool_results": trace.get("tool_results", []),
        "retries": trace.get("retries", []),
        "question": question,
        "server_tools": trace.get("server_tools", []),
        "answer": None if question else _answer(turn),
        "error": trace.get("error"),
        "llm_calls": len(trace.get("llm_calls", [])),
        "tokens": _tokens(trace),
        "stages": _stages(turn, previous),
        "trace": trace,
    }


def describe_turns(
    rows: list[dict[str, Any]], before: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """`Reader.turns` rows told for people; `before` is the row preceding the first one."""
    described = []
    previous = before
    for row in rows:
        described.append(_describe(row, previous))
        previous = row
    return described
