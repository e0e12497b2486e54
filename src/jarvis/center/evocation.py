"""Whether the user's words point at a tool at all, before the center asks for its values.

A small model given a request no registered command serves picks a look-alike tool:
"I need a dentist" -> `find_bus`, and the center would ask "Where are you leaving from?".
Before asking the user for a value of a tool, or calling it, something the user said must
name it: a word of the tool's own declaration (its name, description, parameter names and
descriptions, enum values, keywords, synonyms) other than a verb every kind of request
uses ("book", "search", "buy": "book a house" names no `book_appointment`), or words near
it in meaning, weighed again without the names the call took from them ("a cab to
Szechwan Restaurant" is a ride to somewhere); a call may also show it by holding several
values the user said (a choice among a parameter's options, or a yes/no, counts only
where its words were said: a model picks one of the options for any request it sends to
a tool that has them). A shared word or a call's values count only for a tool among the
few the request is nearest to in meaning: "a movie at Century Redwood City" shares
"city" with a bus ticket purchase and means something else. A word of a tool that declares
no keywords also needs some nearness in meaning: the tool a request is nearest to may still
be far from it ("a ticket to the Giants game" and a bus ticket purchase).
Otherwise the request is answered as one the center cannot help with. Every command
author reaches this through the declaration; a tool whose declaration has no telling word
is always taken as named.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from jarvis.center.dates import dates_heard
from jarvis.center.grounding import FUNCTION_WORDS, ISO_DAY, free_text
from jarvis.center.keywords import REQUEST_VERBS, keyword_heard, telling_words, words
from jarvis.center.toolspec import ToolSpec

__all__ = ["EVIDENT_VALUES", "EVOKED_BY_MEANING", "NEAREST_TOOLS", "WORDS_NEED_MEANING",
           "among_the_nearest", "declaration_words", "distinct_values", "evokes",
           "values_heard", "without_names"]

# Relatedness (cosine of sentence vectors) at which the request means the tool without
# sharing a word with its declaration; fitted on SGD train.
EVOKED_BY_MEANING = 0.45
# Values of one call found in the user's words that show the request has the tool's shape
# ("add the dentist tomorrow at 3": a title and a time) even when no word names the tool.
EVIDENT_VALUES = 2
# Words or values count when the tool is among this many most related to the request
# ("a car to rent in Walnut Creek" is no restaurant search, though "car" and the city
# fill its values; a movie "in Redwood City" shares only "city" with a bus ticket).
NEAREST_TOOLS = 3
# A word of a tool that declares no keywords names it only this related to the request:
# among a node's tools some description or parameter word is in most requests ("a ticket
# to the Giants game" shares "ticket" with a bus ticket purchase, at 0.26). Fitted on SGD
# train: of 780 requests for registered services 1 to 5 lose their tool, and about 40 of
# 560 for services not registered name none.
WORDS_NEED_MEANING = 0.28


def declaration_words(spec: ToolSpec) -> set[str]:
    """The telling words of everything `spec` declares about itself."""
    texts = [spec.name, spec.description]
    for param in spec.params.values():
        texts += [param.name, param.description or "", *(param.enum or ())]
        texts += [word for said in param.synonyms.values() for word in said]
    found = set().union(*(telling_words(text) for text in texts)) - REQUEST_VERBS
    # A keyword may be a phrase ("turn on"): matched whole, as routing matches it.
    return found | {k for k in spec.keywords if k.strip()}


def evokes(user_words: str, spec: ToolSpec, related: float | None = None,
           values_said: int = 0, *, near: bool = True) -> bool:
    """Whether `user_words` (what the user said in the conversation) name `spec`: a word
    of its declaration, (`related`, see center/meaning) words that mean what it does, or
    (`values_said`) enough of a call's values taken from those words. A word or values
    count only for a tool `near` the request in meaning (see `among_the_nearest`), and a
    word of a tool without keywords only at `WORDS_NEED_MEANING`."""
    if related is not None and related >= EVOKED_BY_MEANING:
        return True
    if not near:
        return False
    if values_said >= EVIDENT_VALUES:
        return True
    wanted = declaration_words(spec)
    if not wanted:
        return True
    # A tool that declares no keywords is known by the words of a text written for other
    # ends; they name it only where the request is somewhat near it in meaning.
    if not spec.keywords and related is not None and related < WORDS_NEED_MEANING:
        return False
    heard = words(user_words)
    return any(keyword_heard(heard, word) for word in wanted)


def among_the_nearest(tool: str, related: dict[str, float]) -> bool:
    """Whether `tool` is among the `NEAREST_TOOLS` tools most related to the request
    (`related`: tool -> relatedness; empty when not known, and then it is)."""
    if tool not in related:
        return True
    closer = sum(1 for score in related.values() if score > related[tool])
    return closer < NEAREST_TOOLS


def values_heard(arguments: Any, spec: ToolSpec, user_words: str) -> dict[str, Any]:
    """The values of a call that may come from `user_words`: all but a choice among a
    parameter's options, or a yes/no, that nothing said (the option or a synonym of it)."""
    if not isinstance(arguments, dict):
        return {}
    heard = words(user_words)
    kept: dict[str, Any] = {}
    for name, value in arguments.items():
        param = spec.params.get(name)
        if param is not None and param.type is not None and param.type.kind == "bool":
            continue
        if param is not None and param.enum:
            said_as = [str(value), *param.synonyms.get(str(value), ())]
            if not any(keyword_heard(heard, option) for option in said_as):
                continue
        kept[name] = value
    return kept


def distinct_values(arguments: Any, timezone: str = "UTC", now: datetime | None = None) -> int:
    """How many things a call's values say: values naming one day count once, since a
    model writes a date said ("from March 2nd") into a name as well as into a date.
    `timezone` and `now` resolve a day said in words."""
    if not isinstance(arguments, dict):
        return 0
    days: set[str] = set()
    others = 0
    for value in arguments.values():
        day = _day_of(value, timezone, now) if isinstance(value, str) else None
        if day is None:
            others += 1
        else:
            days.add(day)
    return others + len(days)


def _day_of(value: str, timezone: str, now: datetime | None) -> str | None:
    """The one day a text value names (ISO, or in words), else None."""
    match = ISO_DAY.fullmatch(value)
    if match:
        return match[1]
    try:
        found = dates_heard(value, timezone, now)
    except ValueError:  # an unknown zone: no day in words is known
        return None
    return found[0][0][:10] if len(found) == 1 and len(found[0]) == 1 else None


def without_names(request: str, arguments: Any, spec: ToolSpec) -> str:
    """`request` without the words of the call's free-text values it holds: the names it
    gives (a place, a title) say nothing of what it asks for, and weigh the sentence's
    meaning away from it ("I need a cab to Szechwan Restaurant" is a ride to somewhere)."""
    if not isinstance(arguments, dict):
        return request
    props = spec.parameters.get("properties") or {}
    named = {w for key, value in arguments.items()
             if isinstance(value, str) and free_text(props.get(key) or {})
             for w in words(value) if w not in FUNCTION_WORDS}
    if not named:
        return request
    kept = [w for w in re.findall(r"\S+", request) if _bare(w) not in named]
    return " ".join(kept)


def _bare(word: str) -> str:
    """A word of the request as `words` spells it (lowercase, no punctuation around)."""
    found = words(word)
    return found[0] if len(found) == 1 else word.lower()
