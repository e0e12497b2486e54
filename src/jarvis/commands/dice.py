"""`roll_dice`: roll one or more dice with any number of sides."""

from __future__ import annotations

import random
import re
from typing import Any

from jarvis.commands._numbers import format_number, parse_number
from jarvis.sdk import (
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    PreRouteResult,
    RequestInformation,
)

__all__ = ["MAX_COUNT", "MAX_SIDES", "MIN_SIDES", "RollDiceCommand", "roll"]

MAX_COUNT = 100
MIN_SIDES, MAX_SIDES = 2, 1000
_NOTATION = re.compile(r"(?P<count>[0-9]+)?\s*d\s*(?P<sides>[0-9]+)")
_PRE_ROUTE = re.compile(
    r"^(?:please )?(?:roll|throw) (?:(?:a|one|the) )?(?:(?P<count>\w+) )?"
    r"(?:(?P<sides>\w+)[- ]sided )?(?:die|dice|d(?P<d>[0-9]+))$"
)


def roll(count: int, sides: int, rng: random.Random | None = None) -> list[int]:
    """`count` rolls of a `sides`-sided die."""
    chooser = rng or random
    return [chooser.randint(1, sides) for _ in range(count)]


def _as_int(value: Any) -> Any:
    if isinstance(value, str):
        m = re.fullmatch(r"\s*d?\s*([0-9]+)\s*", value.lower())
        if m:
            return int(m[1])
        number = parse_number(value, allow_article=True)
        return int(number) if number is not None and number == int(number) else value
    if isinstance(value, float) and value == int(value):
        return int(value)
    return value


class RollDiceCommand(IJarvisCommand):
    """Rolls dice and says the numbers and their total."""

    _rng = random.Random()

    @property
    def command_name(self) -> str:
        return "roll_dice"

    @property
    def description(self) -> str:
        return "Roll one or more dice (default one six-sided die) and say the result."

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("count", "int", default=1, minimum=1, maximum=MAX_COUNT,
                            description=f"How many dice, 1 to {MAX_COUNT}", example=2),
            JarvisParameter("sides", "int", default=6, minimum=MIN_SIDES, maximum=MAX_SIDES,
                            description=f"Sides per die, {MIN_SIDES} to {MAX_SIDES}; a d20 has "
                                        "20", example=20),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            # First: a small model's prompt shows only the first example, and one with both
            # numbers keeps it from putting the sides into count ("a hundred sided die").
            CommandExample("roll three twelve-sided dice", {"count": 3, "sides": 12},
                           is_primary=True),
            CommandExample("roll a die", {}),
            CommandExample("roll two dice", {"count": 2}),
            CommandExample("roll a d20", {"sides": 20}),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return ["'d20' means sides=20; '3d6' means count=3, sides=6"]

    @property
    def keywords(self) -> list[str]:
        return ["dice", "die", "roll", "d20"]

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        text = voice_command.lower().strip().rstrip("?.!").strip()
        m = _NOTATION.fullmatch(text.removeprefix("roll ").strip())
        if m and text.startswith("roll "):
            args = {"sides": int(m["sides"])}
            if m["count"]:
                args["count"] = int(m["count"])
            return PreRouteResult(arguments=args)
        m = _PRE_ROUTE.match(text)
        if not m:
            return None
        args: dict[str, Any] = {}
        for name in ("count", "sides"):
            if m[name]:
                value = _as_int(m[name])
                if not isinstance(value, int):
                    return None
                args[name] = value
        if m["d"]:
            args["sides"] = int(m["d"])
        return PreRouteResult(arguments=args)

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = {k: _as_int(v) if k in ("count", "sides") else v for k, v in args.items()}
        m = _NOTATION.search(voice_command.lower())
        if m and "sides" not in fixed:
            fixed["sides"] = int(m["sides"])
        return fixed

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        count: int = kwargs.get("count", 1)
        sides: int = kwargs.get("sides", 6)
        rolls = roll(count, sides, self._rng)
        total = sum(rolls)
        if count == 1:
            message = f"You rolled {'an' if rolls[0] in (8, 11, 18) else 'a'} {rolls[0]}."
        elif count <= 10:
            shown = ", ".join(str(r) for r in rolls[:-1]) + f" and {rolls[-1]}"
            message = f"You rolled {shown}, for a total of {total}."
        else:
            message = (f"You rolled {count} dice for a total of {total}, an average of "
                       f"{format_number(total / count, 1)}.")
        return CommandResponse.success_response(
            {"count": count, "sides": sides, "rolls": rolls, "total": total}, message=message,
        )
