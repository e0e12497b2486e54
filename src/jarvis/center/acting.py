"""Whether a call does something rather than finds or reads something.

A question for information is answered, not acted on: "is a sedan better than a
hatchback" rents no car, "did I leave the garage open" closes nothing. What a call does
is read from what the tool's author wrote, in this order:

- a tool with an action parameter (an enum most of whose values are verbs: "open",
  "close", "read"...) does what the call chose (`garage(action="close")` does something,
  `orders(action="read")` reads);
- else the verb its description opens with ("Rent the selected car", "Gets the status of
  an order");
- else the first word of its name (`book_house`, `find_movies`).

A tool none of these says does something (`order_status`, `exchange_rates`) is taken for a
look-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jarvis.center.keywords import DOING_VERBS, LOOKUP_VERBS, TRADING_VERBS
from jarvis.center.toolspec import ToolSpec

_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# "Add" names arithmetic as often as a doing ("calc_add", "Add two numbers"); chosen among
# actions (add, read, remove) it is one.
_NAMING_DOING = DOING_VERBS - {"add"}
_VERBS = DOING_VERBS | LOOKUP_VERBS
# The verbs of trading an order opens with.
_TRADING = ["book", "reserve", "buy", "purchase"]
# Endings a verb takes at the head of a description ("Gets", "Searches").
_ENDINGS = ("", "s", "es")


def _first_word(text: str) -> str:
    found = _NAME_WORD.findall(text.replace("-", "_"))
    return found[0].lower() if found else ""


def _verb(word: str, verbs: frozenset[str]) -> bool:
    return any(word.endswith(e) and word[: len(word) - len(e)] in verbs for e in _ENDINGS)


def _action_parameters(spec: ToolSpec) -> list[str]:
    """Parameters whose values are verbs, most of them: what the call chooses to do."""
    found = []
    for key, schema in (spec.parameters.get("properties") or {}).items():
        enum = schema.get("enum") if isinstance(schema, dict) else None
        values = [str(v) for v in enum or []]
        verbs = sum(_first_word(v) in _VERBS for v in values)
        if len(values) >= 2 and verbs * 2 > len(values):
            found.append(key)
    return found


def acts(spec: ToolSpec, arguments: Mapping[str, Any]) -> bool:
    """Whether a call of `spec` holding `arguments` does something (see the module)."""
    chosen = [str(arguments[key]) for key in _action_parameters(spec)
              if isinstance(arguments.get(key), str)]
    if chosen:
        return any(_first_word(value) in DOING_VERBS for value in chosen)
    opening = _first_word(spec.description)
    if _verb(opening, _VERBS):
        return _verb(opening, _NAMING_DOING)
    return _first_word(spec.name) in _NAMING_DOING


def declared_actions(spec: ToolSpec) -> list[str]:
    """What a tool's author says it does, as an order would open with it: the verb of
    doing its description or name opens with ("play_song", "Reserve a table"; one of
    trading stands for each), and each option of an action parameter that is a doing,
    with the words declared for it (`"play"`, "stick on"). A verb of looking up or
    telling ("tell me something interesting") is said of more than orders."""
    found = [word for word in (_first_word(spec.description), _first_word(spec.name))
             if _verb(word, _NAMING_DOING)]
    if any(_verb(word, TRADING_VERBS) for word in found):
        found += _TRADING  # "book a table" orders what "Reserve a table" does
    for key in _action_parameters(spec):
        param = spec.params[key]  # the parsed schema: its enum and declared synonyms
        for value in param.enum or ():
            if _first_word(value) in DOING_VERBS:
                found.append(value.replace("_", " ").lower())
                found += [said.lower() for said in param.synonyms.get(value, ())]
    return list(dict.fromkeys(found))
