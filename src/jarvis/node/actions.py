"""Buttons under an answer, as choices a text or voice front end offers the user.

A command returns `CommandResponse(actions=[JarvisButton(text, action), ...])`: `text` is
the label shown or read out, `action` the utterance the button stands for ("turn the oven
off"). Picking a button sends its `action` as the user's next utterance, in the same
conversation, so a command can handle its own actions in `pre_route` (no LLM at all) or
leave them to the center like anything else the user says. `pick_action` finds the button
a user chose by its number ("2", "two", "number 2") or by saying its label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from text_to_num import text2num

from jarvis.sdk import JarvisButton

__all__ = ["actions_of", "pick_action"]

_NUMBER_PREFIX = re.compile(r"^(?:number|option|choice|no\.?|#)\s*", re.I)


def _normal(text: str) -> str:
    """Lower case, words only: "Turn it off!" and "turn it off" are the same label."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _number(text: str) -> int | None:
    said = _NUMBER_PREFIX.sub("", _normal(text))
    if said.isdigit():
        return int(said)
    try:
        return int(text2num(said, "en"))
    except ValueError:
        return None


def pick_action(answer: str, actions: Sequence[JarvisButton]) -> JarvisButton | None:
    """The button `answer` chooses (1-based number or label), or None for anything else."""
    if not actions or not answer.strip():
        return None
    number = _number(answer)
    if number is not None:
        return actions[number - 1] if 1 <= number <= len(actions) else None
    said = _normal(answer)
    return next((a for a in actions if said in (_normal(a.text), _normal(a.action))), None)


def actions_of(context: dict[str, Any] | None) -> list[JarvisButton]:
    """The buttons a tool result carries (`context["actions"]`); malformed ones are skipped."""
    found = []
    for item in (context or {}).get("actions") or []:
        try:
            found.append(JarvisButton.model_validate(item))
        except ValueError:
            continue
    return found
