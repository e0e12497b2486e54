"""One request to the center as it is worked out: what the conversation holds, what the
turn adds, and what its trace records. The engine drives a `Turn`; the modules that judge
calls and answers read it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jarvis.center.keywords import words
from jarvis.center.llm.base import LLMToolCall
from jarvis.center.meaning import Relatedness
from jarvis.center.refine import sounds_like_refinement
from jarvis.center.store import ConversationRecord
from jarvis.center.toolspec import ToolCatalog
from jarvis.center.turn_events import TurnEvents

__all__ = [
    "GivenCall",
    "Turn",
    "arguments_of",
    "parsed",
    "said_in",
    "said_now",
    "user_words",
    "value_sources",
    "zone",
]

# Words that point back at what was said or found before.
_BACK_REFERENCES = frozenset({"that", "those", "them", "it", "this", "these", "same", "again"})
# The tools a request is nearest in meaning that a turn's trace lists.
_RELATED_TRACED = 3


@dataclass(frozen=True)
class GivenCall:
    """A refused call a question followed, and the parameter the answer is for."""

    tool: str
    arguments: dict[str, Any]
    answered: str


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
    # How often each (tool, parameter) was asked for in this exchange.
    asked: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Call id -> keys a refinement carried over from the previous call (see refine.py).
    carried: dict[str, frozenset[str]] = field(default_factory=dict)
    # (tool, id of the call it changes) when this turn refines the last call.
    refines: tuple[str, str] | None = None
    # (tool, parameter) of the question the user's message answers, and that message.
    answering: tuple[str, str] | None = None
    answer: str = ""
    # The refused call the question followed: its other values stay (answered_call.py).
    given: GivenCall | None = None
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
    """What a call's value may come from: what the user said in this request (answers to
    its questions included) and, when it goes on from the last request ("and tomorrow?",
    "now multiply that by 2"), in that one; and the tool results of this request and of
    the last one that had any. A value said for an earlier request is no value of a new
    one ("book a courier" after a hotel booked "for two nights"), and a model copying a
    number from an older result would make up a value nobody meant."""
    messages = [*(turn.history or []), *turn.new_messages]
    *earlier, current = _requests(messages)
    recent = {id(m) for m in current}
    opening = next((str(m.get("content")) for m in current if m.get("role") == "user"), "")
    if earlier and goes_on(opening):
        with_results = [r for r in earlier if any(m.get("role") == "tool" for m in r)]
        recent |= {id(m) for m in [*earlier[-1], *(with_results[-1] if with_results else [])]}
    return "\n".join(
        str(m["content"]) if m.get("role") == "user" else _result_values(str(m["content"]))
        for m in messages if isinstance(m.get("content"), str)
        and m.get("role") in ("user", "tool") and id(m) in recent)


def _result_values(content: str) -> str:
    """The values of a tool's result, without its keys: the 2 of a key "num2" is no
    number the tool found."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return content

    def walk(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [text for item in value.values() for text in walk(item)]
        if isinstance(value, list):
            return [text for item in value for text in walk(item)]
        return [] if value is None or isinstance(value, bool) else [str(value)]

    return "\n".join(walk(data))


def goes_on(utterance: str) -> bool:
    """Whether a request goes on from the last one: it reads as a change of it ("and
    tomorrow?", "now times 2") or points back at it ("add that to the list")."""
    return sounds_like_refinement(utterance) or bool(_BACK_REFERENCES & set(words(utterance)))


def _requests(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """`messages` cut into requests: each user message opens one, except an answer to
    the assistant's question, which stays in the request asked about."""
    requests: list[list[dict[str, Any]]] = [[]]
    for index, message in enumerate(messages):
        before = messages[index - 1] if index else {}
        answers = before.get("role") == "assistant" and str(
            before.get("content") or "").rstrip().endswith("?")
        if message.get("role") == "user" and not answers:
            requests.append([])
        requests[-1].append(message)
    return requests


def said_now(turn: Turn) -> str:
    """The utterance of this turn, and the answer the user gives in it, one a line."""
    return "\n".join(text for text in (turn.voice_command, turn.answer) if text)


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
