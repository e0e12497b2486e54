"""Refinable follow-ups: "actually make it 20 minutes" repeats the last call with one value
changed.

A parameter whose schema says `"_refinable": true` may be changed by the next utterance
without the command being said again. Works from the schema and the conversation only:

- the previous call is the one client call of the last exchange, and it succeeded;
- the utterance reads as a change ("actually", "and", "what about", "make it", "instead",
  or a comparative such as "louder", "longer") and names no other command;
- a relative change of a refinable number or length of time ("louder", "5 minutes
  longer") is worked out here: by the amount said, else by a tenth of the schema's
  `minimum`..`maximum`; with no bounds the value is left out of the call, so the command
  applies the change itself or asks for the value (never a made-up step);
- any other change is the LLM's focused decision: the previous call's tool, cut to its
  refinable parameters, is the only tool, and it fills only what the new words change; a
  length of time that is a number said alone in the largest unit of the one it replaces
  ("make it 20" after 10 minutes) follows from the words, as a value said.

The new call is the previous one with the changed values; the values it carries over
were accounted for when they were first said, so grounding does not ask for them again.
It names the previous call's id (`refines`): the node changes what that call made (the
timer, the reminder) instead of making a second one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from jarvis.center.dates import dates_heard, times_heard
from jarvis.center.grounding import durations_said, in_unit, numbers_said, unit_of_time
from jarvis.center.keywords import words
from jarvis.center.llm.base import LLMReply
from jarvis.center.toolspec import ParamSpec, ToolSpec
from jarvis.sdk import parse_type

__all__ = [
    "STEP_SHARE",
    "PreviousCall",
    "Refinement",
    "focused_messages",
    "focused_tool",
    "from_arguments",
    "previous_call",
    "refinement",
    "relative_change",
    "sounds_like_refinement",
]

# Asks the LLM for a call: (messages, tools) -> its reply.
AskLLM = Callable[[list[dict[str, Any]], list[dict[str, Any]]], LLMReply]

# Words that open a change of the last request ("actually", "and in Fahrenheit"), and
# the prepositions of a value said alone ("in Celsius", "for tomorrow", "at 6 pm").
_OPENERS = frozenset({"actually", "and", "no", "nope", "wait", "instead", "rather", "also",
                      "ok", "okay", "oh", "hmm", "sorry", "but", "then", "now", "same",
                      "in", "for", "at", "on", "to"})
# Phrases anywhere that point back at the last request ("what about tomorrow").
_PHRASES = re.compile(r"\b(?:what about|how about|make (?:it|that)|change (?:it|that)|"
                      r"set (?:it|that)|turn (?:it|that)|switch (?:it|that)?\s*to|"
                      r"instead|rather|go with)\b")
# Words that ask for one more of a kind ("and another one for the rice"), not a change.
_ANOTHER = frozenset({"another", "new", "second", "additional", "separate"})
# General comparatives: a step up or down of whatever number the last call set.
_UP = frozenset({"louder", "higher", "more", "up", "increase", "raise", "bigger", "longer",
                 "warmer", "hotter", "brighter", "faster", "stronger", "extra"})
_DOWN = frozenset({"quieter", "softer", "lower", "less", "down", "decrease", "reduce",
                   "smaller", "shorter", "cooler", "colder", "dimmer", "slower", "weaker",
                   "fewer"})
# "turn it up to 80" sets a level: the number after "to" is the new value, not a step.
_ABSOLUTE = re.compile(r"\bto\s+-?\d")
# A step without an amount: this share of the schema's minimum..maximum.
STEP_SHARE = 0.1
_STEPPED = ("int", "float", "timedelta")


@dataclass(frozen=True)
class PreviousCall:
    """The one client call of the last exchange, which succeeded."""

    name: str
    arguments: dict[str, Any]
    # Its call id: the new call names it (`refines`), so the node changes what it made.
    id: str = ""


@dataclass(frozen=True)
class Refinement:
    """The previous call with `changed` applied (a None value is left out of the call)."""

    name: str
    arguments: dict[str, Any]
    changed: dict[str, Any]
    # Keys whose values come from the previous call or a step worked out here.
    carried: frozenset[str]
    # The id of the previous call, which this one changes.
    refines: str = ""


def refinement(messages: list[dict[str, Any]], tools: dict[str, ToolSpec], utterance: str, *,
               ask: AskLLM, names_another: Callable[[str], bool]) -> Refinement | None:
    """The last call of `messages` changed as `utterance` (the user's new words) says;
    None when they are no change of it. `names_another(tool)` tells whether the words
    point at another command more than at `tool`."""
    previous = previous_call(messages, tools)
    if previous is None or not sounds_like_refinement(utterance) or names_another(
            previous.name):
        return None
    spec = tools[previous.name]
    found = relative_change(utterance, spec, previous)
    if found is not None:
        return found
    reply = ask(focused_messages(previous, utterance), [focused_tool(spec)])
    call = next((c for c in reply.tool_calls if c.name == spec.name), None)
    return from_arguments(spec, previous, _arguments_of(call.arguments if call else "{}"),
                          utterance)


def _arguments_of(text: str) -> dict[str, Any]:
    try:
        found = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def previous_call(messages: list[dict[str, Any]], tools: dict[str, ToolSpec]) -> \
        PreviousCall | None:
    """The call to refine: the last exchange (the messages after the last user turn in
    `messages`) made exactly one client call, to a tool with refinable parameters, and
    its result says it succeeded."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    exchange = messages[last_user + 1:]
    calls = [c for m in exchange if m.get("role") == "assistant"
             for c in m.get("tool_calls") or []]
    if len(calls) != 1:
        return None
    function = calls[0].get("function") or {}
    spec = tools.get(str(function.get("name")))
    if spec is None or not any(p.refinable for p in spec.params.values()):
        return None
    result = next((m for m in exchange if m.get("role") == "tool"
                   and m.get("tool_call_id") == calls[0].get("id")), None)
    if result is None or not _succeeded(result.get("content")):
        return None
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        return None
    if not isinstance(arguments, dict):
        return None
    return PreviousCall(spec.name, arguments, str(calls[0].get("id") or ""))


def _succeeded(content: Any) -> bool:
    try:
        payload = json.loads(content) if isinstance(content, str) else content
    except json.JSONDecodeError:
        return False
    return isinstance(payload, dict) and payload.get("success") is True


def sounds_like_refinement(utterance: str) -> bool:
    """Whether the words read as a change of the last request, not a new one."""
    heard = words(utterance)
    if not heard or _ANOTHER & set(heard):
        return False
    return heard[0] in _OPENERS or bool(_PHRASES.search(" ".join(heard))) or bool(
        (_UP | _DOWN) & set(heard))


def relative_change(utterance: str, spec: ToolSpec, previous: PreviousCall) -> \
        Refinement | None:
    """"louder", "5 minutes longer", "2 less": a step of the one refinable number (or
    length of time) the previous call set; None when the words name no step."""
    heard = set(words(utterance))
    sign = 1 if heard & _UP else -1 if heard & _DOWN else 0
    if not sign or (heard & _UP and heard & _DOWN) or _ABSOLUTE.search(utterance.lower()):
        return None
    targets = [p for p in spec.params.values() if p.refinable and p.type is not None
               and p.type.kind in _STEPPED and not p.type.is_array
               and previous.arguments.get(p.name) is not None]
    if len(targets) != 1:
        return None
    param = targets[0]
    value = _stepped(param, previous.arguments[param.name], sign, utterance,
                     _schema_of(spec, param.name))
    return _with_changes(previous, {param.name: value}, carried={param.name})


def _stepped(param: ParamSpec, current: Any, sign: int, utterance: str,
             schema: dict[str, Any]) -> Any:
    """The value one step from `current`; None when no step can be known."""
    assert param.type is not None
    if param.type.kind == "timedelta":
        said, kind = durations_said(utterance), parse_type("timedelta")
        if not said or not kind.is_valid(current):
            return None
        return kind.to_wire(max(timedelta(0), kind.coerce(current) + sign * kind.coerce(said[0])))
    if not isinstance(current, int | float) or isinstance(current, bool):
        return None  # not a number the last call could have run with: nothing to step from
    # "5 minutes longer" of a number counted in seconds is 300 of them.
    unit = unit_of_time(param.name, schema)
    amounts = set(map(float, in_unit(durations_said(utterance), unit, whole=False))) if (
        unit and durations_said(utterance)) else numbers_said(utterance, articles=False)
    low, high = schema.get("minimum"), schema.get("maximum")
    bounded = isinstance(low, int | float) and isinstance(high, int | float)
    if len(amounts) == 1:
        step = amounts.pop()
    elif bounded:
        step = (high - low) * STEP_SHARE
    else:
        return None
    value = current + sign * step
    if bounded:
        value = min(max(value, low), high)
    return round(value) if param.type.kind == "int" else value


def _schema_of(spec: ToolSpec, name: str) -> dict[str, Any]:
    found = (spec.parameters.get("properties") or {}).get(name)
    return found if isinstance(found, dict) else {}


def focused_tool(spec: ToolSpec) -> dict[str, Any]:
    """The tool cut to its refinable parameters, none of them required."""
    function = spec.schema.get("function", spec.schema)
    properties = {p.name: _schema_of(spec, p.name) for p in spec.params.values()
                  if p.refinable}
    return {"type": "function",
            "function": {"name": spec.name, "description": function.get("description") or "",
                         "parameters": {"type": "object", "properties": properties}}}


def focused_messages(previous: PreviousCall, utterance: str) -> list[dict[str, Any]]:
    """The LLM's whole view of the decision: the previous call, then the new words."""
    call = json.dumps(previous.arguments, ensure_ascii=False)
    return [
        {"role": "system",
         "content": f"The user's last request ran {previous.name} with {call}. The user now "
                    f"changes it. Call {previous.name} with only the values the user's new "
                    "words change; leave out every value they do not name."},
        {"role": "user", "content": utterance},
    ]


def from_arguments(spec: ToolSpec, previous: PreviousCall, arguments: dict[str, Any],
                   utterance: str = "") -> Refinement | None:
    """The refinement the LLM's focused call describes (for `utterance`, the new words);
    None when it changes nothing."""
    changed = {k: v for k, v in arguments.items()
               if k in spec.params and spec.params[k].refinable and v not in (None, "", [])
               and previous.arguments.get(k) != v and not _misread(spec.params[k], v, previous)}
    derived = {k for k, v in changed.items()
               if _in_the_unit_before(spec.params[k], v, previous, utterance)}
    return _with_changes(previous, changed, carried=derived) if changed else None


def _in_the_unit_before(param: ParamSpec, value: Any, previous: PreviousCall,
                        utterance: str) -> bool:
    """Whether a new length of time is a number said alone in the largest unit of the
    one it replaces ("make it 20" after 10 minutes is 20 minutes)."""
    kind, old = parse_type("timedelta"), previous.arguments.get(param.name)
    if (param.type is None or param.type.kind != "timedelta" or durations_said(utterance)
            or not (kind.is_valid(old) and kind.is_valid(value))):
        return False
    before, after = kind.coerce(old).total_seconds(), kind.coerce(value).total_seconds()
    unit = next((u for u in (3600.0, 60.0, 1.0) if before >= u), None)
    return unit is not None and any(
        abs(n * unit - after) < 1e-6 for n in numbers_said(utterance, articles=False))


def _misread(param: ParamSpec, value: Any, previous: PreviousCall) -> bool:
    """A value the words gave to another parameter: the value of another argument of the
    previous call ("and 25 kilometers" names the unit converted from, not the one to), or
    a text that is a date, a time or a length of time ("what about tomorrow" is no city)."""
    if any(_same(value, v) for k, v in previous.arguments.items() if k != param.name):
        return True
    if not isinstance(value, str) or param.enum or (param.type and param.type.kind != "string"):
        return False
    return bool(dates_heard(value, "UTC") or times_heard(value) or durations_said(value))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    return False


def _with_changes(previous: PreviousCall, changed: dict[str, Any], carried: set[str]) -> \
        Refinement:
    arguments = {k: v for k, v in {**previous.arguments, **changed}.items() if v is not None}
    kept = {k for k in previous.arguments if k not in changed}
    derived = {k for k in carried if changed.get(k) is not None}
    return Refinement(previous.name, arguments, changed, frozenset(kept | derived), previous.id)
