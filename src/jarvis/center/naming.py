"""Whether the user named a tool: by its words, by meaning, or by values only it takes
(see evocation.py). A call of a tool nothing said names is a look-alike the model reached
for, no request of the user's: it is not sent, and nothing is asked for it."""

from __future__ import annotations

import json
from typing import Any

from jarvis.center.evocation import (
    EVOKED_BY_MEANING,
    among_the_nearest,
    distinct_values,
    evokes,
    values_heard,
    without_names,
)
from jarvis.center.llm.base import LLMToolCall
from jarvis.center.turn import Turn, user_words, zone

__all__ = ["call_named", "named", "named_calls"]


def named(turn: Turn, tool: str, arguments: Any = None, values_said: int = 0) -> bool:
    """Whether what the user said in the conversation names `tool` (see evocation.py),
    weighed by meaning once more without the names the call (`arguments`) took from it."""
    said = user_words(turn)
    # The first turn's words are this utterance, already weighed for the LLM request.
    text = turn.voice_command if said == turn.heard_command else said
    spec, related = turn.catalog.tools[tool], _nearer(turn.related(text),
                                                      turn.related(turn.voice_command))
    near = among_the_nearest(tool, related)
    if evokes(said, spec, related.get(tool), values_said, near=near):
        return True
    if evokes(said, spec, None, values_said):
        turn.trace["far_from_request"] = tool  # a shared word or values, meaning apart
    # Words and values are weighed above; without the call's names only meaning is left.
    rest = without_names(text, arguments, spec)
    if rest == text or turn.related(rest).get(tool, 0.0) < EVOKED_BY_MEANING:
        return False
    turn.trace["named_without_names"] = tool
    return True


def _nearer(whole: dict[str, float], request: dict[str, float]) -> dict[str, float]:
    """Per tool, the nearer of what the conversation said and what its request said: the
    meaning of many turns together fades ("where is my parcel" five times over is further
    from a parcel tracker than once)."""
    return {name: max(value, request.get(name, value)) for name, value in whole.items()}


def named_calls(turn: Turn, calls: list[LLMToolCall]) -> list[LLMToolCall]:
    """The calls of tools the user named. Values left in a call were said (see
    unsaid_values.py)."""
    kept = [call for call in calls if call_named(turn, call)]
    if len(kept) < len(calls):
        turn.trace["unevoked_calls"] = [c.name for c in calls if c not in kept]
    return kept


def call_named(turn: Turn, call: LLMToolCall) -> bool:
    """Whether the user named the tool of `call`, by words, meaning or its values."""
    arguments = json.loads(call.arguments or "{}")
    heard = values_heard(arguments, turn.catalog.tools[call.name], user_words(turn))
    return named(turn, call.name, arguments, distinct_values(heard, zone(turn), turn.now))
