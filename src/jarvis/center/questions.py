"""The spoken question the center asks when a call needs one value from the user."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_ASKS", "not_caught", "parameter_question"]


_UNITS_OF_TIME = frozenset({"seconds", "minutes", "hours", "days", "weeks", "months", "years"})
# A parameter named after where its value stands ("to_unit", "from_city").
_PREPOSITIONS = frozenset({"to", "from", "for", "in", "at", "on", "with", "by"})


def parameter_question(param: str | None, options: Sequence[str] | None = None,
                       kind: str | None = None) -> str:
    """The spoken question for one parameter's value ("Which account type: checking or
    savings?")."""
    words = (param or "value").replace("_", " ")
    if options:
        shown = list(options[:8])
        choices = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
        return f"Which {words}: {choices}?"
    if kind == "bool":
        return f"{words[:1].upper()}{words[1:]}: yes or no?"
    first, _, rest = words.partition(" ")
    if first in _PREPOSITIONS and rest:
        return f"{first.capitalize()} what {rest}?"  # "to_unit": "To what unit?"
    if kind in ("int", "float"):
        counted = words.removeprefix("number of ")
        unit = counted.rpartition(" ")[2]
        if unit in _UNITS_OF_TIME:
            return f"How many {unit}?"  # "duration_seconds": "How many seconds?"
        if counted != words or (counted.endswith("s") and not counted.endswith("ss")):
            return f"How many {counted}?"  # "number_of_riders", "guests"
    return f"What {words} should I use?"


# How often one value is asked for in an exchange before the request is let go.
MAX_ASKS = 2


def not_caught(param: str | None) -> str:
    """What is said when the answers never gave the value asked for."""
    words = (param or "value").replace("_", " ")
    return f"Sorry, I still didn't catch the {words}, so I left it there."
