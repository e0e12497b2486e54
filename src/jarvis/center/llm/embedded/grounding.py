"""Optional free-text and number arguments must come from what the user said.

A 0.5B model fills optional parameters with plausible inventions: "what time is it"
becomes `get_current_time {"location": "Tokyo"}` because a prompt example named Tokyo,
"turn on the lights" gets `"brightness": 100`. A free-text value that shares no word with
the utterance, or a number the utterance does not contain (the center writes spoken
numbers as digits), was not said, so it is dropped (the command's default applies); a
required one is left for validation to judge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from jarvis.center.grounding import (
    FUNCTION_WORDS,
    ISO_DAY,
    NUMBER,
    free_text,
    is_number,
    is_said,
    number_readings,
    numbers_said,
    plain_number,
    text_choice,
    word_said,
)
from jarvis.center.keywords import words
from jarvis.center.llm.embedded.grammar import arguments_schema, tool_name
from jarvis.center.llm.embedded.prompt import first_clause
from jarvis.center.time_units import unit_named


def unsaid_optional_arguments(
    arguments: dict[str, Any],
    tool: dict[str, Any],
    utterance: str,
    choices: Mapping[str, Sequence[str]] | None = None,
    days: Sequence[str] = (),
) -> list[str]:
    """Keys of optional free-text, number or enum arguments (or lists of them) never said,
    or said only as the tool's own name ("tell me a joke" has no topic "jokes").

    `choices`: per key, the enum values whose declared synonyms were said ("fahrenheit").
    `days`: the days said (ISO), which a free-text value written as an ISO date must be.
    """
    schema = arguments_schema(tool)
    own = words(tool_name(tool).replace("_", " "))
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    unsaid = []
    said_numbers = numbers_said(utterance)
    for key, value in arguments.items():
        sub = props.get(key)
        if key in required or not isinstance(sub, dict):
            continue
        if plain_number(sub):
            if is_number(value) and float(value) not in said_numbers:
                unsaid.append(key)
            continue
        if text_choice(sub) and isinstance(value, str):
            if value not in (choices or {}).get(key, ()) and not _choice_said(
                    value, sub, utterance):
                unsaid.append(key)
            continue
        if free_text(sub) and isinstance(value, str):
            day = ISO_DAY.fullmatch(value)
            if day:  # a date written for free text: said if it is a day the user named
                if day[1] not in days:
                    unsaid.append(key)
                continue
            texts = [value]
        elif sub.get("type") == "array" and free_text(sub.get("items") or {}) and value:
            texts = [v for v in value if isinstance(v, str)]  # ["milk", "eggs"] nobody said
        else:
            continue
        if texts and (not any(is_said(text, utterance) for text in texts)
                      or all(_names_only(text, own) for text in texts)):
            unsaid.append(key)
    return unsaid


def dates_as_said(
    arguments: dict[str, Any], tool: dict[str, Any], days: Sequence[str],
    times: Sequence[str] | None,
) -> dict[str, str]:
    """Free-text values written as an ISO date, put as the day the user said: key -> value.

    Declared as a plain string (only its description says it is a date), a date gets
    from a small model a made-up ISO value: "2025-03-02T10:00:00+02:00" for "on March
    2nd", its year and hour invented. `days` are the days the center resolved from what
    was said (ISO, in the order said): a value on one of them keeps its day, and
    otherwise takes the one day said with its day of the month, or the only day said.
    Its clock time stays only when one of `times` (HH:MM said). With no such day the
    value is left to be judged unsaid.
    """
    props = arguments_schema(tool).get("properties") or {}
    said_days = list(dict.fromkeys(days))
    fixed: dict[str, str] = {}
    for key, value in arguments.items():
        sub = props.get(key)
        match = ISO_DAY.fullmatch(value) if isinstance(value, str) else None
        if match is None or not isinstance(sub, dict) or not free_text(sub):
            continue
        day, clock = match[1], match[2]
        if day not in said_days:
            same_date = [d for d in said_days if d[8:10] == day[8:10]]
            options = same_date if len(same_date) == 1 else said_days
            if len(options) != 1:
                continue
            day = options[0]
        written = f"{day}T{clock}" if clock and clock in (times or ()) else day
        if written != value:
            fixed[key] = written
    return fixed


def never_said(schema: dict[str, Any], utterance: str, heard: Sequence[str] = ()) -> bool:
    """Whether no value of an optional argument of this schema could count as said: a
    number when the utterance holds none, an enum none of whose values (nor of their
    declared synonyms, `heard`) was named. Whatever the model wrote there,
    `unsaid_optional_arguments` would drop it; the decoder does not open such a key."""
    if heard:
        return False
    if plain_number(schema):
        return not numbers_said(utterance)
    if text_choice(schema):
        return not any(_choice_said(str(v), schema, utterance) for v in schema["enum"])
    return False



def _choice_said(value: str, schema: dict[str, Any], utterance: str) -> bool:
    """Whether an optional enum value was asked for: a word of it, or of the part of its
    description the prompt shows ("metric is Celsius, imperial is Fahrenheit"), was said.
    "Is it raining in glasgow" asks for no unit; "in celsius" does."""
    clause = first_clause(str(schema.get("description") or ""))
    named = [w for w in words(f"{value.replace('_', ' ')} {clause}") if len(w) >= _STEM]
    heard = words(utterance)
    return any(word_said(w, heard) for w in named)


def _names_only(value: str, own: list[str]) -> bool:
    """Whether every word of `value` is a word of the tool's name, in the singular or the
    plural (a tool named `find_items` given "item" or "items")."""
    value_words = words(value)
    return bool(value_words) and all(
        any(_same_noun(w, n) or _same_noun(n, w) for n in own) for w in value_words)


# A value word and a heard word that start with this many letters alike are one word.
_STEM = 4


def respelled_required_text(
    arguments: dict[str, Any], tool: dict[str, Any], utterance: str
) -> dict[str, str]:
    """Required free-text values the user said in other words: key -> the value in theirs.

    A 0.5B model asked "what is 68 kilos in pounds" writes `"from_unit": "kilometers"`,
    pulled by a prompt example: a required value none of whose words was said, with a
    word that starts like exactly one word of the utterance ("kilo..."), means that word.
    Values with no such word are left alone (validation judges them).
    """
    schema = arguments_schema(tool)
    props = schema.get("properties") or {}
    heard = [w for w in words(utterance) if len(w) >= _STEM]
    fixed: dict[str, str] = {}
    for key in schema.get("required") or []:
        value, sub = arguments.get(key), props.get(key)
        if not isinstance(value, str) or not isinstance(sub, dict) or not free_text(sub):
            continue
        if is_said(value, utterance):
            continue
        value_words = words(value)
        out = []
        for word in value_words:
            alike = {h for h in heard if len(word) >= _STEM and h[:_STEM] == word[:_STEM]}
            out.append(alike.pop() if len(alike) == 1 else word)
        if out != value_words:
            fixed[key] = " ".join(out)
    return fixed


def completed_values(arguments: dict[str, Any], tool: dict[str, Any], utterance: str
                     ) -> dict[str, Any]:
    """Values the model cut short of what was said: key -> the value said in full.

    A 0.5B model writes `"from_unit": "kilometers"` for "100 kilometers per hour", 40
    for "-40 celsius" and `"entity": "light"` for "turn the landing light off": a
    free-text value said as the start of "X per Y" (or "X an hour") is "X per Y", a
    number said only with a minus sign is negative, and a value said after a determiner
    and a word or two that describe it takes them ("landing light"; items of a list too:
    "the red apples").
    """
    props = arguments_schema(tool).get("properties") or {}
    heard = words(utterance)
    clauses = [words(c) for c in _CLAUSE_BREAK.split(utterance)]
    numbers = NUMBER.findall(utterance)
    signed = {v for n in numbers if n.startswith("-") for v in number_readings(n)}
    unsigned = {v for n in numbers if not n.startswith("-") for v in number_readings(n)}
    fixed: dict[str, Any] = {}
    for key, value in arguments.items():
        sub = props.get(key)
        if not isinstance(sub, dict):
            continue
        if sub.get("type") in ("integer", "number") and is_number(value) and value > 0:
            if -float(value) in signed and float(value) not in unsigned:
                fixed[key] = -value
        elif free_text(sub) and isinstance(value, str):
            full = _completed(value, heard, clauses)
            if full != value:
                fixed[key] = full
        elif (sub.get("type") == "array" and free_text(sub.get("items") or {})
              and isinstance(value, list)):
            items = [_completed(v, heard, clauses) if isinstance(v, str) else v
                     for v in value]
            if items != value:
                fixed[key] = items
    return fixed


def _completed(value: str, heard: list[str], clauses: list[list[str]]) -> str:
    """`value` with what the model left off around it (see `completed_values`)."""
    longer = _per_phrase(words(value), heard)
    if longer:
        return f"{value} {longer}"
    for clause in clauses:
        described = _description_before(words(value), clause)
        if described:
            return f"{' '.join(described)} {value}"
    return value


# Words that open a noun phrase: what follows up to the noun describes it.
_DETERMINERS = frozenset({"the", "my", "our", "your", "a", "an", "this", "that", "his",
                          "her", "their"})
# Never part of a thing's name: "a joke about dogs" does not name "about dogs".
_PARTICLES = frozenset({
    "about", "above", "after", "around", "before", "below", "by", "down", "during", "for",
    "from", "in", "into", "near", "of", "off", "on", "onto", "out", "over", "through", "to",
    "under", "up", "with", "without"})


def _describes(word: str, value: list[str]) -> bool:
    """Whether `word` may be part of a name: no function word, particle or number."""
    return (word not in FUNCTION_WORDS and word not in _PARTICLES and not word[0].isdigit()
            and word not in value)


def _description_before(value: list[str], heard: list[str]) -> list[str]:
    """The one or two words said between a determiner and `value` ("the landing light"
    -> ["landing"] for "light"); none when the value follows its determiner or is no
    name ("down", "stick it on my tasks")."""
    span = len(value)
    if not value or not all(_describes(w, []) for w in value):
        return []
    for start in range(1, len(heard) - span + 1):
        window = heard[start : start + span]
        if window[:-1] != value[:-1] or not _same_noun(window[-1], value[-1]):
            continue
        for gap in (1, 2):
            opening = start - gap - 1
            between = heard[opening + 1 : start]
            if opening >= 0 and heard[opening] in _DETERMINERS and all(
                    _describes(w, value) for w in between):
                return between
    return []


def _same_noun(heard: str, word: str) -> bool:
    return heard in (word, word + "s", word + "es")


def items_from_the_other_clause(
    arguments: dict[str, Any], tool: dict[str, Any], utterance: str
) -> dict[str, list[Any]]:
    """Lists whose items copied the command instead of the thing: key -> the list fixed.

    "I finished the laundry, check it off my to do list" came back as the item "check it
    off my to do list": an item that names the tool ("to do list" for `todo_list`) holds
    the request. The thing is the end of the other clause ("laundry"); with no other
    clause it is the item cut before the tool's name ("finish the report on my todo
    list" -> "finish the report"); with neither, the item is dropped and the command asks.
    """
    own = _letters(tool_name(tool))
    if len(own) < _STEM:  # too short a name to tell an item that holds it
        return {}
    props = arguments_schema(tool).get("properties") or {}
    fixed: dict[str, list[Any]] = {}
    for key, value in arguments.items():
        sub = props.get(key)
        if not (isinstance(sub, dict) and sub.get("type") == "array" and isinstance(value, list)
                and free_text(sub.get("items") or {})):
            continue
        naming = [v for v in value if isinstance(v, str) and own in _letters(v)]
        if not naming:
            continue
        thing = _thing_in_other_clause(utterance, own)
        things = [thing] if thing else [t for t in (_before_name(v, own) for v in naming) if t]
        items = [v for v in value if v not in naming]
        fixed[key] = items + [t for t in dict.fromkeys(things) if t not in items]
    return fixed


# Where one clause of an utterance ends and the next begins.
_CLAUSE_BREAK = re.compile(r"[,;.!?]")

# Words that join an item to the list it goes on ("... on my todo list").
_LINKS = {"on", "onto", "to", "off", "from", "in", "into", "my", "our", "the", "your"}


def _before_name(item: str, own: str) -> str | None:
    """`item` cut where the tool's name starts, without the words that lead up to it."""
    item_words = words(item)
    for i in range(len(item_words)):
        if "".join(item_words[i:]).startswith(own):
            kept = item_words[:i]
            while kept and kept[-1] in _LINKS:
                kept.pop()
            return " ".join(kept) or None
    return None


def _letters(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


# Words after which a clause names its thing ("low on washing up liquid", "the laundry").
_THING_AFTER = {"the", "a", "an", "my", "our", "some", "on", "of", "out", "off", "more"}


def _thing_in_other_clause(utterance: str, own: str) -> str | None:
    clauses = [c for c in re.split(r"[,;]| so | and then ", utterance) if c.strip()]
    others = [c for c in clauses if own not in _letters(c)]
    if len(others) != 1 or len(clauses) < 2:
        return None
    clause = words(others[0])
    starts = [i + 1 for i, w in enumerate(clause) if w in _THING_AFTER]
    thing = clause[starts[-1]:] if starts else []
    return " ".join(thing) or None


# "an hour" after a value is "per hour" ("kilometres an hour"), unless it says when
# ("call mom an hour from now").
_SAYS_WHEN = frozenset({"from", "ago", "later", "before", "after", "earlier", "early",
                        "late", "till", "until"})


def _per_phrase(value: list[str], heard: list[str]) -> str | None:
    """The "per Y" that follows `value` in `heard` ("miles" + "per hour", "kilometres" +
    "an hour"), if any; the value's words match as a close form ("kilometers")."""
    if not value or "per" in value:
        return None
    for start in range(len(heard) - len(value) - 1):
        end = start + len(value)
        if not all(word_said(v, [h]) for v, h in zip(value, heard[start:end], strict=True)):
            continue
        if heard[end] == "per":
            return f"per {heard[end + 1]}"
        if (heard[end] in ("a", "an") and unit_named(heard[end + 1]) is not None
                and not set(heard[end + 2:end + 3]) & _SAYS_WHEN):
            return f"per {heard[end + 1]}"
    return None
