"""Values in a call that nothing said accounts for: a required one is asked for, an
optional one is left out (the command's default applies), never made up."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

from jarvis.center import dates
from jarvis.center.grounding import (
    ISO_DAY,
    free_text,
    repeated_values,
    said_in_full,
    unsaid_optional,
    unsaid_required,
)
from jarvis.center.llm.base import LLMReply, LLMToolCall
from jarvis.center.turn import Turn, parsed, value_sources, zone
from jarvis.center.validation import CallProblem

__all__ = ["AMOUNT_KINDS", "lacks_a_value", "said_only", "said_values", "value_to_ask"]

# Validation problems that only say a required value is absent: asked for, never retried
# (a retry would have the model make one up).
_ABSENT = ("this required parameter is missing", "this required parameter is empty")

# The kinds of value an amount is: a number or a length of time.
AMOUNT_KINDS = frozenset({"int", "float", "timedelta"})


def value_to_ask(turn: Turn, calls: list[LLMToolCall], problems: list[CallProblem]
                 ) -> tuple[str, str, str] | None:
    """(tool, parameter, call id) of the value to ask the user for: one a call lacks
    comes first (the rest is retried after it), else one nothing said accounts for."""
    absent = [p for p in problems if p.problem in _ABSENT and p.param is not None]
    if absent:
        return absent[0].tool_name, str(absent[0].param), absent[0].tool_call_id
    return None if problems else _first_unsaid(turn, calls)


def _said_dates(turn: Turn, said: str) -> tuple[list[list[str]], bool]:
    """The dates said in the conversation, resolved, and whether any time was said."""
    try:
        days = dates.dates_heard(said, zone(turn), turn.now)
        # Line by line: two clock times in a conversation ("at 5 pm", then "make it
        # 6 pm") are each a time said, not one unreadable time.
        times = bool(days or any(dates.times_heard(line) for line in said.splitlines()))
    except ValueError:  # an unknown zone: any date said is taken as said
        days, times = [], True
    return days, times


def _first_unsaid(turn: Turn, calls: list[LLMToolCall]) -> tuple[str, str, str] | None:
    """(tool, parameter, call id) of the first required value of `calls` that nothing
    said in the conversation accounts for. Optional values nothing accounts for are
    taken out of `calls` on the way."""
    judge = _Judge(turn)
    for index, call in enumerate(calls):
        unsaid, dropped = judge.unsaid(call)
        if unsaid:
            turn.trace["unsaid"] = {"tool": call.name, "parameter": unsaid[0]}
            return call.name, unsaid[0], call.id
        # Optional values nobody asked for are left out: the command's defaults apply.
        if dropped:
            kept = {k: v for k, v in json.loads(call.arguments or "{}").items()
                    if k not in dropped}
            calls[index] = LLMToolCall(call.id, call.name, json.dumps(kept, ensure_ascii=False))
            turn.trace.setdefault("dropped_unsaid", []).append(
                {"tool": call.name, "parameters": dropped})
    return None


def said_values(turn: Turn, call: LLMToolCall) -> dict[str, Any]:
    """The values of `call` that what was said accounts for (carried ones included)."""
    unsaid, dropped = _Judge(turn).unsaid(call)
    return {k: v for k, v in json.loads(call.arguments or "{}").items()
            if k not in unsaid and k not in dropped}


class _Judge:
    """Judges calls' values against what the conversation said, read once."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.said = value_sources(turn)
        days, self.times = _said_dates(turn, self.said)
        # How many phrases said each day.
        self.days_said = Counter(day for phrase in days for day in {v[:10] for v in phrase})

    def unsaid(self, call: LLMToolCall) -> tuple[list[str], list[str]]:
        """The required keys of `call` nothing accounts for, in declared order, and the
        optional ones."""
        spec = self.turn.catalog.tools[call.name]
        synonyms = {p.name: p.synonyms for p in spec.params.values() if p.synonyms}
        schema = spec.parameters
        arguments = json.loads(call.arguments or "{}")
        # Values a refinement carried over were accounted for when first said.
        carried = self.turn.carried.get(call.id, frozenset())
        checked = {k: v for k, v in arguments.items() if k not in carried}
        required = [str(k) for k in schema.get("required") or []]
        # A value the call holds twice, said once, is not yet said for the first key.
        repeated = repeated_values(checked, schema, self.said, tool=call.name,
                                   days_said=self.days_said)
        unsaid = unsaid_required(checked, schema, self.said, synonyms, times_said=self.times,
                                 tool=call.name)
        dropped = unsaid_optional(checked, schema, self.said, synonyms, times_said=self.times,
                                  tool=call.name)
        dropped += [k for k in repeated if k not in required and k not in dropped]
        return [k for k in required if k in unsaid or k in repeated], dropped


def said_only(turn: Turn, reply: LLMReply) -> LLMReply | None:
    """`reply`'s calls without the required free-text values not said word for word,
    which are asked for next, as in any call (None: no readable call, or an optional
    value nobody said: without it the call would do what nobody asked)."""
    said, calls, left_out = value_sources(turn), [], []
    for call in reply.tool_calls:
        spec, arguments = turn.catalog.tools.get(call.name), parsed(call)
        if spec is None or arguments is None:
            return None
        props = spec.parameters.get("properties") or {}
        kept = {k: v for k, v in arguments.items()
                if not (isinstance(v, str) and free_text(props.get(k) or {})
                        and not ISO_DAY.fullmatch(v) and not said_in_full(v, said))}
        unsaid = sorted(set(arguments) - set(kept))
        if set(unsaid) - set(spec.parameters.get("required") or []):
            return None
        if unsaid:
            left_out.append({"tool": call.name, "parameters": unsaid})
        calls.append(LLMToolCall(call.id, call.name, json.dumps(kept, ensure_ascii=False)))
    if not calls:
        return None
    if left_out:  # traced only for a reply that is taken
        turn.trace["unsaid_in_the_call_meant"] = left_out
    return replace(reply, tool_calls=calls)


def lacks_a_value(turn: Turn, call: LLMToolCall, kinds: frozenset[str] | None = None
                  ) -> bool:
    """Whether `call` lacks a required value (of one of `kinds`: a number or a length of
    time for an amount), or holds one nothing said accounts for."""
    spec, arguments = turn.catalog.tools.get(call.name), parsed(call)
    if spec is None or arguments is None:
        return False
    wanted = [p.name for p in spec.params.values() if p.required and (
        kinds is None or (p.type is not None and p.type.kind in kinds))]
    unsaid = unsaid_required(arguments, spec.parameters, value_sources(turn), tool=call.name)
    return any(arguments.get(name) is None or name in unsaid for name in wanted)
