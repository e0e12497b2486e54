"""One request to the center as it is worked out: what the conversation holds, what the
turn adds, and what its trace records. The engine drives a `Turn`; the modules that judge
calls and answers read it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jarvis.center.llm.base import LLMToolCall
from jarvis.center.meaning import Relatedness
from jarvis.center.store import ConversationRecord
from jarvis.center.toolspec import ToolCatalog
from jarvis.center.turn_events import TurnEvents

__all__ = [
    "Turn",
    "arguments_of",
    "parsed",
    "said_in",
    "user_words",
    "value_sources",
    "zone",
]

# The tools a request is nearest in meaning that a turn's trace lists.
_RELATED_TRACED = 3


@dataclass
class Turn:
    """The working state of one request."""

    record: ConversationRecord
    endpoint: str
    voice_command: str
    catalog: ToolCatalog
    now: datetime
    started: float
    # Weighs what was said against each tool's declaration by meaning (None: words only).
    relatedness: Relatedness | None = None
    # The utterance as the LLM reads it (spoken numbers as digits, see Engine._heard).
    heard_command: str | None = None
    new_messages: list[dict[str, Any]] = field(default_factory=list)
    # Failed attempts and retry instructions: shown to the LLM in this request only.
    scratch: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] | None = None
    node_context: dict[str, Any] | None = None
    node_failures: int = 0
    # (tool, parameter) pairs already asked for in this exchange: never asked twice.
    asked: set[tuple[str, str]] = field(default_factory=set)
    # Call id -> keys a refinement carried over from the previous call (see refine.py).
    carried: dict[str, frozenset[str]] = field(default_factory=dict)
    # (tool, id of the call it changes) when this turn refines the last call.
    refines: tuple[str, str] | None = None
    # (tool, parameter) of the question the user's message answers.
    answering: tuple[str, str] | None = None
    # Set for a streamed request: where its tool calls and sentences go.
    events: TurnEvents | None = None
    # Text -> tool name -> relatedness by meaning (see center/meaning), once per text.
    related_by_text: dict[str, dict[str, float]] = field(default_factory=dict)
    # The utterance's keyword and choice hints, read once for every LLM request of the turn.
    tool_hints: dict[str, float] | None = None
    choice_hints: dict[str, dict[str, list[str]]] | None = None
    trace: dict[str, Any] = field(
        default_factory=lambda: {"llm_calls": [], "retries": [], "server_tools": [],
                                 "tool_calls": [], "tool_results": [], "stages_ms": {}}
    )

    def stage(self, name: str, since: float) -> float:
        """Add the milliseconds since `since` to the trace's stage `name`; now."""
        now = time.perf_counter()
        stages = self.trace["stages_ms"]
        stages[name] = round(stages.get(name, 0.0) + (now - since) * 1000, 3)
        return now

    def related(self, text: str) -> dict[str, float]:
        """Tool name -> how related `text` is to the tool's declaration (empty: not known)."""
        if self.relatedness is None or not text:
            return {}
        if text not in self.related_by_text:
            since = time.perf_counter()
            self.related_by_text[text] = self.relatedness.scores(text, self.catalog)
            self.stage("relatedness", since)
            if text == self.voice_command:  # the tools the request is nearest, for the log
                nearest = sorted(self.related_by_text[text].items(), key=lambda kv: -kv[1])
                self.trace["related"] = dict(nearest[:_RELATED_TRACED])
        return self.related_by_text[text]


def contents(turn: Turn, roles: tuple[str, ...]) -> str:
    """The text of the conversation's messages of `roles`, one message a line."""
    messages = [*(turn.history or []), *turn.new_messages]
    return "\n".join(str(m["content"]) for m in messages
                     if m.get("role") in roles and isinstance(m.get("content"), str))


def user_words(turn: Turn) -> str:
    """Everything the user said in the conversation, one turn a line."""
    return contents(turn, ("user",))


def said_in(turn: Turn) -> str:
    """What the conversation said that a value may come from: the user's turns and the
    tools' results (a follow-up such as "now times 3" uses an earlier result)."""
    return contents(turn, ("user", "tool"))


def value_sources(turn: Turn) -> str:
    """What a call's value may come from: the user's turns, and the tool results of this
    exchange and of the last one that had any ("now multiply that by 2" uses the sum just
    heard). Older results are left out: a model copying a number from one would make up
    a value nobody meant."""
    messages = [*(turn.history or []), *turn.new_messages]
    exchanges: list[list[dict[str, Any]]] = [[]]
    for message in messages:
        if message.get("role") == "user":
            exchanges.append([])
        exchanges[-1].append(message)
    *earlier, current = exchanges
    with_results = [e for e in earlier if any(m.get("role") == "tool" for m in e)]
    recent = {id(m) for m in [*(with_results[-1] if with_results else []), *current]}
    return "\n".join(str(m["content"]) for m in messages if isinstance(m.get("content"), str)
                     and (m.get("role") == "user" or (m.get("role") == "tool"
                                                      and id(m) in recent)))


def zone(turn: Turn) -> str:
    """The node's timezone for this turn (UTC when it sent none)."""
    return (turn.node_context or turn.record.node_context).get("timezone") or "UTC"


def parsed(call: LLMToolCall) -> dict[str, Any] | None:
    """A call's arguments (empty when they are no object; None when they are no JSON)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return None
    return arguments if isinstance(arguments, dict) else {}


def arguments_of(calls: list[LLMToolCall], call_id: str) -> dict[str, Any] | None:
    """The arguments of the call `call_id` among `calls` (empty when they are no object;
    None when there is no such call or its arguments are no JSON)."""
    call = next((c for c in calls if c.id == call_id), None)
    return parsed(call) if call is not None else None
