"""A request that names nothing to book is a look-up first.

"I need a rental car for the 12th", to a node with `get_cars_available` and
`reserve_car`: a small model picks the reservation, and the center would ask "Where
will you pick it up?" for a car nobody has chosen. When the center is about to ask for a
value of a tool, another tool is tried first if

- it is of the same kind (a word said is of both tools' declarations: "car", not a verb
  of asking such as "find"; of the other's, its parameters' descriptions count too: "City
  where the doctor is located") and means the request about as much (relatedness within
  `MEANING_MARGIN`),
- it needs fewer values, at least one (a look-up is made with something said; a tool
  that needs nothing reads out a state, and is no search for anything),
- the user said none of the values that only the first tool takes ("at The Cartwright
  Hotel" names the hotel to reserve; `reserve_car`'s `pickup_location` is the search's
  `pickup_city` by another name), and
- no word of the request is the first tool's own, one of its name, description or
  required parameters' names that the other's declaration, parameters' descriptions
  included, does not share ("reserve a table", "a flight returning on the 14th" keep
  their tool; any verb of trading stands for another: "reserve a bus" says "Buy
  tickets").

A request that says a verb of searching ("Can you find me some songs?", "recommend a
song") is a look-up even where the model's call of a tool of the same kind is complete (a
player's `play`): a tool whose name or description says it searches is tried instead of a
tool that does not say so, on the same conditions but the number of values (a search may
need none), and but the first tool's own words: what is searched for may be said in them
("find bus tickets" beside `buy_bus_ticket`); only its own verb of doing keeps it ("find
a song and play it"). Its kind is wider too: a word said of the first tool's declaration
will do when the two declarations share two words ("I'm searching for podcasts" to a
player of "podcasts, an episode or a show" beside a search for episodes by show). A
search asked for with a verb of searching stays a search: it is never moved to a tool that
does not say it searches, though that one needs fewer values ("look for events" is no
read of a calendar's events).

The other way round, a request that says a verb of trading ("book", "reserve", "buy",
"purchase", "a reservation") and none of searching is a commitment: a search the model
wrote for it goes to a tool of the same kind that says it trades ("book 3 hotel rooms" is
a reservation of a hotel, not a search for one), on the same conditions as a search in
place of a player, and unless the call holds a value the booking takes under no name
("book a 3 star hotel" is searched for first).

Only what the tools' authors wrote decides: their names, descriptions and parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jarvis.center.grounding import FUNCTION_WORDS, word_said
from jarvis.center.keywords import (
    DOING_VERBS,
    REQUEST_VERBS,
    TRADING_VERBS,
    same_word,
    says_searching,
    telling_words,
    words,
)
from jarvis.center.toolspec import ToolCatalog, ToolSpec

# Words that start with this many letters alike are one word ("reserve", "reservation").
_STEM = 5
# How much less related (cosine) the look-up may be than the tool the model chose.
MEANING_MARGIN = 0.15
# Words two declarations share that make them kin, though a word said is of one only.
KIN_WORDS = 2


def lookup_instead(
    chosen: ToolSpec, arguments: Mapping[str, Any], catalog: ToolCatalog, said: str,
    related: Mapping[str, float],
) -> ToolSpec | None:
    """The tool to try before asking for a value of `chosen` (None: ask).

    `arguments`: what the call to `chosen` holds so far; `related`: tool name ->
    relatedness of the request by meaning (empty when it is not known: nothing is tried).
    """
    needed = len(_required(chosen))
    # A search a verb of searching asked for stays a search ("look for events" is no
    # read of the calendar's events).
    searching = _searches(chosen) and says_searching(said)
    found = [spec for spec in _stand_ins(chosen, arguments, catalog, said, related)
             if 0 < len(_required(spec)) < needed and (_searches(spec) or not searching)]
    return min(found, key=lambda s: (len(_required(s)), -related[s.name]), default=None)


def search_instead(
    chosen: ToolSpec, arguments: Mapping[str, Any], catalog: ToolCatalog, said: str,
    related: Mapping[str, float],
) -> ToolSpec | None:
    """The tool that searches to call in place of `chosen`, whose call holds `arguments`,
    for a request that says a verb of searching (None: keep `chosen`)."""
    if not says_searching(said) or _searches(chosen):
        return None
    # What is searched for may be said in the first tool's own words ("find bus
    # tickets" beside `buy_bus_ticket`); its own verb of doing keeps it ("... and play it").
    found = [spec for spec in _stand_ins(chosen, arguments, catalog, said, related,
                                         own_nouns=False, kin=True) if _searches(spec)]
    return max(found, key=lambda s: related[s.name], default=None)


def trade_instead(
    chosen: ToolSpec, arguments: Mapping[str, Any], catalog: ToolCatalog, said: str,
    related: Mapping[str, float],
) -> ToolSpec | None:
    """The tool that trades (books, reserves, buys) to call in place of `chosen`, a
    search, for a request that says a verb of trading and none of searching (None: keep
    `chosen`)."""
    if (says_searching(said) or not _trading(words(said)) or not _searches(chosen)
            or _trades(chosen)):
        return None
    # Any value the booking takes under no name keeps the search ("a 3 star hotel").
    found = [spec for spec in _stand_ins(chosen, arguments, catalog, said, related,
                                         own_nouns=False)
             if _trades(spec) and not _searches(spec)
             and not _names_its_own(chosen, spec, arguments, keys=arguments)]
    return max(found, key=lambda s: related[s.name], default=None)


def _stand_ins(
    chosen: ToolSpec, arguments: Mapping[str, Any], catalog: ToolCatalog, said: str,
    related: Mapping[str, float], own_nouns: bool = True, kin: bool = False,
) -> list[ToolSpec]:
    """The tools of `chosen`'s kind (with `kin`, of its kin: see `_same_kind`) that mean the
    request about as much and that nothing held in the call or said (a word of `chosen`'s
    own; with `own_nouns` False, only a verb of doing) makes `chosen`'s alone."""
    if chosen.name not in related:
        return []
    heard = words(said)
    return [
        spec for spec in catalog.tools.values()
        if spec.name != chosen.name and spec.name in related
        and related[spec.name] >= related[chosen.name] - MEANING_MARGIN
        and _same_kind(chosen, spec, heard, kin)
        and not _names_its_own(chosen, spec, arguments)
        and not any(_says(w, h) for w in _own_words(chosen, spec)
                    if own_nouns or w in DOING_VERBS for h in heard)
    ]


def _searches(spec: ToolSpec) -> bool:
    """Whether a tool's name or description says it searches ("lookup_song")."""
    return says_searching(f"{spec.name} {spec.description}")


def _trades(spec: ToolSpec) -> bool:
    """Whether a tool's name or description says it books, reserves or buys."""
    return _trading(words(f"{spec.name} {spec.description}".replace("_", " ")))


def _trading(heard: Iterable[str]) -> bool:
    """Whether one of the words `heard` is a verb of trading ("reservation" is one)."""
    return any(_alike(word, verb) for word in heard for verb in TRADING_VERBS)


def _required(spec: ToolSpec) -> list[str]:
    return [str(k) for k in spec.parameters.get("required") or []]


def _names_its_own(chosen: ToolSpec, other: ToolSpec, arguments: Mapping[str, Any],
                   keys: Iterable[str] | None = None) -> bool:
    """Whether the call holds a value for a required parameter (one of `keys`, when
    given) `other` does not take, not even under a name of its own, other than words of
    `chosen`'s own declaration ("hotel" names no hotel)."""
    theirs = set(other.parameters.get("properties") or {})
    own = list(_declared(chosen))
    return any(_names_something(arguments.get(key), own)
               for key in (_required(chosen) if keys is None else keys)
               if key not in theirs and not _takes_it_as(other, chosen, key))


def _takes_it_as(other: ToolSpec, chosen: ToolSpec, key: str) -> bool:
    """Whether `other` takes what `chosen` holds at `key` under a name of its own: a
    parameter `chosen` lacks that shares a telling word of the name, one of neither tool's
    name ("pickup_location" of a reservation, "pickup_city" of the search; "event_name"
    and "event_type" of two event tools share only the tools' kind)."""
    mine = set(chosen.parameters.get("properties") or {})
    kind = set(words(f"{chosen.name} {other.name}".replace("_", " ")))
    said_of = telling_words(key) - kind
    return any(said_of & telling_words(name)
               for name in other.parameters.get("properties") or {} if name not in mine)


def _names_something(value: Any, own: list[str]) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return False
    if not isinstance(value, str):
        return True
    return any(not word_said(w, own) for w in words(value) if w not in FUNCTION_WORDS)


def _declared(spec: ToolSpec, keys: Iterable[str] | None = None) -> set[str]:
    """The words of a tool's name, the telling words of its description and those of the
    names `keys` (its required parameters' when None)."""
    keys = _required(spec) if keys is None else keys
    named = {w for w in words(spec.name.replace("_", " ")) if w not in FUNCTION_WORDS}
    return named | telling_words(" ".join([spec.description, *map(str, keys)]))


def _described(spec: ToolSpec) -> set[str]:
    """The telling words of a tool's parameters' descriptions ("City where the doctor is
    located": a tool for finding doctors, whatever its own description calls them), but
    for words of trading: a search's "Number of rooms in the reservation" speaks of the
    booking it leads to, not of what it does."""
    props = spec.parameters.get("properties") or {}
    found = telling_words(" ".join(str(p.get("description") or "") for p in props.values()
                                   if isinstance(p, dict)))
    return {w for w in found if not any(_alike(w, verb) for verb in TRADING_VERBS)}


def _same_kind(chosen: ToolSpec, other: ToolSpec, heard: list[str], kin: bool = False
               ) -> bool:
    """Whether a word said is of both tools' declarations ("a rental car"); with `kin`,
    also whether a word said is of `chosen`'s and `KIN_WORDS` words of it are of
    `other`'s ("podcasts" said to a player of "podcasts, an episode or a show" beside a
    search for episodes by show). A verb of asking or a plain word of their names
    ("find", "get") tells no kind."""
    theirs = list(_declared(other, keys=()) | _described(other))
    kind = [w for w in _declared(chosen, keys=()) if telling_words(w) - REQUEST_VERBS]
    shared = {w for w in kind if any(_alike(w, t) for t in theirs)}
    said = {w for w in kind if any(_alike(w, h) for h in heard)}
    return bool(said & shared) or (kin and len(shared) >= KIN_WORDS and bool(said))


def _own_words(chosen: ToolSpec, other: ToolSpec) -> list[str]:
    """Words `chosen` declares that `other` does not, not even with another ending
    ("return" of `return_date` beside a one-way search)."""
    theirs = list(_declared(other, other.parameters.get("properties") or {}) | _described(other))
    return [w for w in _declared(chosen)
            if not any(_alike(w, t) for t in theirs)]


def _alike(one: str, other: str) -> bool:
    """One word with another ending or misheard ("booking", "book"), or the same first
    five letters ("reservation", "reserve")."""
    return same_word(one, other) or (len(one) >= _STEM and one[:_STEM] == other[:_STEM])


def _says(own: str, heard: str) -> bool:
    """Whether the word `heard` says the declared word `own`: alike, or both verbs of
    trading ("reserve a bus" says "Buy tickets")."""
    return _alike(own, heard) or (own in TRADING_VERBS and heard in TRADING_VERBS)
