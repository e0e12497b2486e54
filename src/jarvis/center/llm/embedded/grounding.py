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

from rapidfuzz import fuzz

from jarvis.center.keywords import words
from jarvis.center.llm.embedded.grammar import arguments_schema, tool_name
from jarvis.center.llm.embedded.prompt import first_clause

# A value word counts as said when this similar to a word of the utterance (plurals, ASR).
_SIMILAR = 80.0


def _said(word: str, heard: list[str]) -> bool:
    return any(word == h or fuzz.ratio(word, h, score_cutoff=_SIMILAR) for h in heard)


# Words any sentence has: sharing one of them says nothing about where a value came from
# ("take out the trash" was not said in "don't let me forget the dentist").
_FUNCTION_WORDS = frozenset({
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "this", "that",
    "these", "those", "some", "any", "it", "them", "me", "i", "you", "we", "he", "she",
    "they", "to", "of", "in", "on", "at", "for", "from", "with", "by", "and", "or", "but",
    "is", "are", "be"})


def content_words(text: str) -> list[str]:
    """The words of `text` that carry its meaning (all of them when none does)."""
    found = words(text)
    return [w for w in found if w not in _FUNCTION_WORDS] or found


def is_said(value: str, utterance: str) -> bool:
    """Whether any meaningful word of `value` (or a close one) is in `utterance`."""
    value_words = content_words(value)
    if not value_words:
        return True  # nothing to check ("" or punctuation): not an invention
    heard = words(utterance)
    return any(_said(w, heard) for w in value_words)


_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")
# Words the center leaves as words (small isolated numbers) and words that mean a number.
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "single": 1, "first": 1, "two": 2, "second": 2,
    "couple": 2, "pair": 2, "double": 2, "three": 3, "third": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "dozen": 12, "zero": 0, "no": 0, "none": 0,
}


def numbers_said(utterance: str, *, articles: bool = True) -> set[float]:
    """The numbers in `utterance`: as digits ("1,000", "2.5") or as small number words
    ("a" and "an" as 1 unless `articles` is false)."""
    found = {float(_NUMBER_WORDS[w]) for w in words(utterance)
             if w in _NUMBER_WORDS and (articles or w not in ("a", "an"))}
    for text in _NUMBER.findall(utterance):
        # "-40" (the center signs "minus 40") is said, and so is 40: the sign may be lost.
        for number in (text, text.lstrip("-")):
            found.add(float(number.replace(",", "")))
            found.add(float(number.replace(",", ".")))
    return found


def unsaid_optional_arguments(
    arguments: dict[str, Any],
    tool: dict[str, Any],
    utterance: str,
    choices: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """Keys of optional free-text, number or enum arguments (or lists of them) never said,
    or said only as the tool's own name ("tell me a joke" has no topic "jokes").

    `choices`: per key, the enum values whose declared synonyms were said ("fahrenheit").
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
        if _plain_number(sub):
            if _is_number(value) and float(value) not in said_numbers:
                unsaid.append(key)
            continue
        if _text_choice(sub) and isinstance(value, str):
            if value not in (choices or {}).get(key, ()) and not _choice_said(
                    value, sub, utterance):
                unsaid.append(key)
            continue
        if _free_text(sub) and isinstance(value, str):
            texts = [value]
        elif sub.get("type") == "array" and _free_text(sub.get("items") or {}) and value:
            texts = [v for v in value if isinstance(v, str)]  # ["milk", "eggs"] nobody said
        else:
            continue
        if texts and (not any(is_said(text, utterance) for text in texts)
                      or all(_names_only(text, own) for text in texts)):
            unsaid.append(key)
    return unsaid


def never_said(schema: dict[str, Any], utterance: str, heard: Sequence[str] = ()) -> bool:
    """Whether no value of an optional argument of this schema could count as said: a
    number when the utterance holds none, an enum none of whose values (nor of their
    declared synonyms, `heard`) was named. Whatever the model wrote there,
    `unsaid_optional_arguments` would drop it; the decoder does not open such a key."""
    if heard:
        return False
    if _plain_number(schema):
        return not numbers_said(utterance)
    if _text_choice(schema):
        return not any(_choice_said(str(v), schema, utterance) for v in schema["enum"])
    return False


def _plain_number(schema: dict[str, Any]) -> bool:
    """A number the model writes, not one chosen from an enum."""
    return schema.get("type") in ("integer", "number") and not schema.get("enum")


def _text_choice(schema: dict[str, Any]) -> bool:
    """A string chosen from an enum."""
    return schema.get("type") == "string" and isinstance(schema.get("enum"), list) and bool(
        schema["enum"])


def _choice_said(value: str, schema: dict[str, Any], utterance: str) -> bool:
    """Whether an optional enum value was asked for: a word of it, or of the part of its
    description the prompt shows ("metric is Celsius, imperial is Fahrenheit"), was said.
    "Is it raining in glasgow" asks for no unit; "in celsius" does."""
    clause = first_clause(str(schema.get("description") or ""))
    named = [w for w in words(f"{value.replace('_', ' ')} {clause}") if len(w) >= _STEM]
    heard = words(utterance)
    return any(_said(w, heard) for w in named)


def _names_only(value: str, own: list[str]) -> bool:
    """Whether every word of `value` is a word of the tool's name ("jokes", "joke")."""
    value_words = words(value)
    return bool(value_words) and all(
        any(_same_noun(w, n) for n in own) for w in value_words)


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
        if not isinstance(value, str) or not isinstance(sub, dict) or not _free_text(sub):
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
    free-text value said as the start of "X per Y" is "X per Y", a number said only with
    a minus sign is negative, and a value said after a determiner and a word or two that
    describe it takes them ("landing light"; items of a list too: "the red apples").
    """
    props = arguments_schema(tool).get("properties") or {}
    heard = words(utterance)
    clauses = [words(c) for c in _CLAUSE_BREAK.split(utterance)]
    numbers = _NUMBER.findall(utterance)
    signed = {float(n) for n in numbers if n.startswith("-")}
    unsigned = {float(n) for n in numbers if not n.startswith("-")}
    fixed: dict[str, Any] = {}
    for key, value in arguments.items():
        sub = props.get(key)
        if not isinstance(sub, dict):
            continue
        if sub.get("type") in ("integer", "number") and _is_number(value) and value > 0:
            if -float(value) in signed and float(value) not in unsigned:
                fixed[key] = -value
        elif _free_text(sub) and isinstance(value, str):
            full = _completed(value, heard, clauses)
            if full != value:
                fixed[key] = full
        elif (sub.get("type") == "array" and _free_text(sub.get("items") or {})
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
    return (word not in _FUNCTION_WORDS and word not in _PARTICLES and not word[0].isdigit()
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
                and _free_text(sub.get("items") or {})):
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


def _per_phrase(value: list[str], heard: list[str]) -> str | None:
    """The "per Y" that follows `value` in `heard` ("miles" + "per hour"), if any."""
    if not value or "per" in value:
        return None
    for start in range(len(heard) - len(value) - 1):
        end = start + len(value)
        if heard[start:end] == value and heard[end] == "per":
            return f"per {heard[end + 1]}"
    return None


def _free_text(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and not schema.get("enum") and not schema.get("format")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# Words that stand for a number in arithmetic ("half of 30" is 30 / 2).
_ARITHMETIC_WORDS = {"half": (2.0, 0.5), "halve": (2.0, 0.5), "twice": (2.0,),
                     "triple": (3.0,), "quarter": (4.0, 0.25), "percent": (100.0,)}


def invented_required_arguments(
    arguments: dict[str, Any], tool: dict[str, Any], said: str
) -> list[str]:
    """Keys of required numbers, or durations, that nothing in `said` accounts for.

    A small model asked "how many legs does a spider have" may still pick `calculate`
    and fill its two required numbers with 1 and 1; a value nobody said means the tool
    is not what the user asked for (the caller decides what to do about it). `said` is
    what the user and the conversation said, so a follow-up may use an earlier result.
    """
    schema = arguments_schema(tool)
    props = schema.get("properties") or {}
    # "a spider" is no 1: an article said is too weak to account for a required number.
    numbers = numbers_said(said, articles=False)
    for word in words(said):
        numbers.update(_ARITHMETIC_WORDS.get(word, ()))
    invented = []
    for key in schema.get("required") or []:
        sub = props.get(key)
        value = arguments.get(key)
        if not isinstance(sub, dict) or key not in arguments:
            continue
        if _plain_number(sub):
            if _is_number(value) and not _number_said(float(value), numbers):
                invented.append(key)
        elif sub.get("format") == "duration" and not _duration_said(value, said):
            # "go back to the previous track" is no 5-minute timer, "set the volume to
            # fifty" no 50-minute one, and "hold on a second" no 5-minute one: a length of
            # time is said as an amount of a unit.
            invented.append(key)
    return invented


# Unit of time -> seconds ("min" and "hr" as heard in speech recognition output too).
_TIME_UNITS = {"second": 1, "seconds": 1, "sec": 1, "secs": 1, "minute": 60, "minutes": 60,
               "min": 60, "mins": 60, "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600}
# A misheard unit is this similar ("minuets" ~ "minutes": 86; "house" ~ "hours": 80 is not).
_SIMILAR_UNIT = 85.0
_PARTS = {"half": 0.5, "quarter": 0.25}  # "half an hour"
_FILLERS = {"more", "extra", "whole", "full", "long", "a", "an", "of"}
_ISO_DURATION = re.compile(
    r"P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?")


def _unit_seconds(word: str) -> int | None:
    if word in _TIME_UNITS:
        return _TIME_UNITS[word]
    for unit, seconds in _TIME_UNITS.items():
        if len(unit) >= 5 and fuzz.ratio(word, unit, score_cutoff=_SIMILAR_UNIT):
            return seconds
    return None


# Words and numbers as a length of time is said ("2.5 minutes" keeps its decimals).
_DURATION_WORD = re.compile(r"\d+(?:\.\d+)?|[a-z]+")


def _duration_words(said: str) -> list[str]:
    return _DURATION_WORD.findall(said.lower())


def _runs_said(heard: list[str]) -> list[list[float]]:
    """Lengths of time said (`heard`: `_duration_words`), in seconds, grouped into runs
    of amounts said one after the other, each in a smaller unit: "1 hour 30 minutes, then
    5 seconds" -> [[3600, 1800], [5]]."""
    runs: list[list[float]] = []
    index, last_end, last_unit = 0, -1, 0
    while index < len(heard):
        number = _NUMBER_WORDS.get(heard[index], _PARTS.get(heard[index]))
        if number is None and heard[index][0].isdigit():
            number = float(heard[index])
        # "5 minutes", "5 more minutes", "half an hour" (but "a few minutes" is no amount).
        at = index + 1
        if at < len(heard) and heard[at] in _FILLERS:
            at += 1
        unit = _unit_seconds(heard[at]) if number is not None and at < len(heard) else None
        if number is None or unit is None:
            index += 1
            continue
        # "1 hour (and) 30 minutes" is one length; "10 minutes and 5 minutes" two.
        joined = index == last_end or (index == last_end + 1 and heard[last_end] == "and")
        if runs and joined and unit < last_unit:
            runs[-1].append(float(number) * unit)
        else:
            runs.append([float(number) * unit])
        index = last_end = at + 1
        last_unit = unit
    return runs


def durations_said(utterance: str) -> list[str]:
    """The lengths of time `utterance` names, as ISO-8601 durations, one per run of
    amounts ("1 hour 30 minutes" -> PT1H30M, "half an hour" -> PT30M)."""
    totals = dict.fromkeys(sum(run) for run in _runs_said(_duration_words(utterance)))
    return [_iso_duration(total) for total in totals if total > 0]


def _iso_duration(seconds: float) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = ((hours, "H"), (minutes, "M"), (secs, "S"))
    return "PT" + "".join(f"{_plain(n)}{unit}" for n, unit in parts if n)


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


def _duration_said(value: Any, said: str) -> bool:
    """Whether the length of time `value` (ISO-8601) is one `said` names, alone or as
    consecutive parts ("1 hour 30 minutes"); a unit said without a number is enough."""
    heard = _duration_words(said)
    if not any(_unit_seconds(w) is not None for w in heard):
        return False
    match = _ISO_DURATION.fullmatch(value) if isinstance(value, str) else None
    if match is None or not any(match.groups()):
        return True  # not a duration the grammar wrote: validation judges it
    scale = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    seconds = sum(float(match[k]) * n for k, n in scale.items() if match[k])
    runs = _runs_said(heard)
    if not runs:
        return True  # "a few minutes", "minutes please": the unit alone was said
    sums = {sum(run[i:j]) for run in runs for i in range(len(run))
            for j in range(i + 1, len(run) + 1)}
    return any(abs(seconds - total) < 1e-6 for total in sums)


def _number_said(value: float, numbers: set[float]) -> bool:
    # "15 percent of 80": 0.15 is 15 said as a percentage.
    return value in numbers or any(abs(value * 100 - n) < 1e-9 for n in numbers)
