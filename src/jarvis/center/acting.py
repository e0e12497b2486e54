"""Whether a call does something rather than finds or reads something.

A question for information is answered, not acted on: "is jazz better than classical
music" plays nothing, "did I leave the lights on" turns none on, "how do I set a timer on
my microwave" sets none. A call does something when its tool's name opens with a verb of
doing (`book_house`, `play_song`, `set_timer`) or, for a tool with an action parameter
(an enum most of whose values are verbs: "play", "pause", "turn_on", "read"...), the
action chosen is one (`music(action="play")`, not `lists(action="read")`). Only what the
tool's author wrote decides; a tool named otherwise (`get_ride`, `weather`) is taken for
a look-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jarvis.center.keywords import DOING_VERBS, LOOKUP_VERBS
from jarvis.center.toolspec import ToolSpec

_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _first_word(text: str) -> str:
    found = _NAME_WORD.findall(text.replace("-", "_"))
    return found[0].lower() if found else ""


def _action_parameters(spec: ToolSpec) -> list[str]:
    """Parameters whose values are verbs, most of them: what the call chooses to do."""
    found = []
    for key, schema in (spec.parameters.get("properties") or {}).items():
        values = [str(v) for v in (schema or {}).get("enum") or []]
        verbs = sum(_first_word(v) in DOING_VERBS | LOOKUP_VERBS for v in values)
        if len(values) >= 2 and verbs * 2 > len(values):
            found.append(key)
    return found


def acts(spec: ToolSpec, arguments: Mapping[str, Any]) -> bool:
    """Whether a call of `spec` holding `arguments` does something (see the module)."""
    if _first_word(spec.name) in DOING_VERBS:
        return True
    return any(isinstance(arguments.get(key), str)
               and _first_word(str(arguments[key])) in DOING_VERBS
               for key in _action_parameters(spec))
