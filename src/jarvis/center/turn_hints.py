"""What the utterance of a turn says outright, for the LLM request: the tools whose
keywords (or description words) were heard, the choices whose declared synonyms were
heard, and the relative dates named, resolved."""

from __future__ import annotations

from jarvis.center import dates
from jarvis.center.keywords import description_hints, description_words, keyword_hints
from jarvis.center.turn import Turn, said_now, zone

__all__ = ["choice_hints", "date_hints", "time_hints", "tool_hints"]


def tool_hints(turn: Turn) -> dict[str, float]:
    """Routing keywords of each client tool heard in this turn's utterance."""
    if not turn.voice_command:
        return {}
    if turn.tool_hints is not None:
        return turn.tool_hints
    keywords = {name: spec.keywords for name, spec in turn.catalog.tools.items()}
    heard = keyword_hints(turn.voice_command, keywords)
    # Every tool that declares keywords is listed (0.0: none heard), so a backend can
    # tell "nothing named" from "nothing known".
    hints = {name: heard.get(name, 0.0) for name, words in keywords.items() if words}
    # A tool without keywords is known by its own name and description; listed only
    # when one of their words was heard, since they are no full list of its words.
    plain = {name: f"{name} {spec.description}" for name, spec in turn.catalog.tools.items()
             if not keywords[name]}
    if plain:
        hints |= description_hints(turn.voice_command, description_words(plain))
    turn.tool_hints = hints
    return hints


def choice_hints(turn: Turn) -> dict[str, dict[str, list[str]]]:
    """Per tool and enum parameter, the values whose declared synonyms were said."""
    if not turn.voice_command:
        return {}
    if turn.choice_hints is not None:
        return turn.choice_hints
    hints: dict[str, dict[str, list[str]]] = {}
    for name, spec in turn.catalog.tools.items():
        for param in spec.params.values():
            heard = keyword_hints(turn.voice_command, param.synonyms) if param.synonyms else {}
            if heard:
                hints.setdefault(name, {})[param.name] = list(heard)
    turn.choice_hints = hints
    return hints


def date_hints(turn: Turn) -> list[list[str]]:
    """Resolved values of the relative dates named in this turn's utterance, and in the
    answer given in it ("in two hours" for "What time should I use?")."""
    said = said_now(turn)
    if not said:
        return []
    try:
        return dates.dates_heard(said, zone(turn), turn.now)
    except ValueError:  # an unknown zone: the model copies from the prompt instead
        return []


def time_hints(turn: Turn) -> list[str]:
    """The clock times said in this turn (HH:MM), each line on its own, and those an
    elapsed time reaches ("in 20 minutes")."""
    said = said_now(turn)
    times = [t for line in said.splitlines() for t in dates.times_heard(line)]
    try:
        reached = dates.offsets_reach(said, zone(turn), turn.now)
    except ValueError:  # an unknown zone
        reached = []
    return list(dict.fromkeys([*times, *reached]))
