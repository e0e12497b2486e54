"""Whether the values of a tool call were said, or follow from what was said.

General language handling that serves every command and every backend: the engine asks
the user for a required value nothing said accounts for instead of passing an invented
one to the node ("I need a cab" is no `get_ride(destination="Los Angeles")`), and the
embedded backend drops optional values nobody asked for. What counts as said:

- free text: one of its meaningful words, or a close one (plurals, speech recognition),
  unless it is one of another parameter's options ("3D" for a `genre` beside a
  `show_type` that offers "3d": said, it chose the option);
- a number: said as digits or as a small number word, or derived from what was said: a
  length of time in another unit ("10 minutes" is 600 for a value in seconds), the
  schema's bounds for "max" or "min", "half" of them, a percentage;
- a length of time (ISO-8601): an amount of a unit said;
- a choice (enum): each word that tells the value from the other choices ("united" of
  "United Airlines" beside "Delta Airlines"; both words of "Place of Worship": "places
  to visit" chooses no category), or, for a value with no such word ("Park" beside
  "Theme Park"), a word of it; a choice the command describes with `enum_synonyms` (an
  action: "put on some jazz" is play) is the LLM's reading;
- a flag: a word of its name ("shared_ride" by "a shared ride"), but for the words that
  frame it ("has", "serves", "good": "good attractions" is no `good_for_kids`);
- a date or a time: a date or time said (the center resolves the phrase itself); so is
  an ISO date written for free text (a date parameter declared as a plain string) when
  a day was said and the parameter's name asks for no time of day (a day is no
  `pickup_time`), and a clock time written for free text ("14:30") when that time of
  day was said ("half past 2 in the afternoon").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from rapidfuzz import fuzz

from jarvis.center.dates import dates_heard, times_heard
from jarvis.center.keywords import IRREGULAR_PLURALS, words
from jarvis.center.spoken_numbers import UNITS
from jarvis.center.time_units import CLOCK_UNITS, SECONDS, spellings, unit_pattern

__all__ = [
    "FUNCTION_WORDS",
    "ISO_DAY",
    "NUMBER",
    "choice_said",
    "content_words",
    "derived_numbers",
    "durations_said",
    "free_text",
    "in_unit",
    "is_number",
    "is_said",
    "number_readings",
    "numbers_said",
    "plain_number",
    "repeated_values",
    "said_in_full",
    "text_choice",
    "unit_of_time",
    "unsaid_optional",
    "unsaid_required",
    "word_said",
]

# A value word counts as said when this similar to a word of the utterance (plurals, ASR).
_SIMILAR = 80.0


def word_said(word: str, heard: list[str]) -> bool:
    """Whether `word` or a close form of it (a plural, one no ending makes: "six foot" for
    feet, a misheard spelling) is in `heard`."""
    base = IRREGULAR_PLURALS.get(word, word)
    return any(word == h or base == IRREGULAR_PLURALS.get(h, h)
               or fuzz.ratio(word, h, score_cutoff=_SIMILAR) for h in heard)


# Words any sentence has: sharing one of them says nothing about where a value came from
# ("take out the trash" was not said in "don't let me forget the dentist").
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "this", "that",
    "these", "those", "some", "any", "it", "them", "me", "i", "you", "we", "he", "she",
    "they", "to", "of", "in", "on", "at", "for", "from", "with", "by", "and", "or", "but",
    "is", "are", "be"})


def content_words(text: str) -> list[str]:
    """The words of `text` that carry its meaning (all of them when none does)."""
    found = words(text)
    return [w for w in found if w not in FUNCTION_WORDS] or found


def is_said(value: str, utterance: str) -> bool:
    """Whether any meaningful word of `value` (or a close one) is in `utterance`."""
    value_words = content_words(value)
    if not value_words:
        return True  # nothing to check ("" or punctuation): not an invention
    heard = words(utterance)
    return any(word_said(w, heard) for w in value_words)


def choice_said(value: str, choices: Iterable[Any], said: str) -> bool:
    """Whether `said` chose `value` among `choices` (see the module docstring)."""
    others = {w for choice in choices if str(choice) != value
              for w in content_words(str(choice).replace("_", " "))}
    own = content_words(value.replace("_", " "))
    telling = [w for w in own if w not in others]
    if not telling:
        return is_said(value.replace("_", " "), said)
    heard = words(said)
    return all(word_said(w, heard) for w in telling)


def said_in_full(value: str, said: str) -> bool:
    """Whether `value` has words and every meaningful one of them is in `said`."""
    return bool(words(value)) and all(is_said(word, said) for word in content_words(value))


# Digits, with thousands grouped by commas ("1,000,000") or one decimal mark ("2.5", "2,5").
NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:[.,]\d+)?")
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
    for text in NUMBER.findall(utterance):
        # "-40" (the center signs "minus 40") is said, and so is 40: the sign may be lost.
        for number in (text, text.lstrip("-")):
            found |= number_readings(number)
    return found


def number_readings(text: str) -> set[float]:
    """What `text`, a number in digits (see `NUMBER`), may mean: its commas group thousands
    ("1,590"), and a lone one may be a decimal comma too ("2,5")."""
    readings = {float(text.replace(",", ""))}
    if text.count(",") == 1 and "." not in text:
        readings.add(float(text.replace(",", ".")))
    return readings


def plain_number(schema: dict[str, Any]) -> bool:
    """A number the model writes, not one chosen from an enum."""
    return schema.get("type") in ("integer", "number") and not schema.get("enum")


def text_choice(schema: dict[str, Any]) -> bool:
    """A string chosen from an enum."""
    return schema.get("type") == "string" and isinstance(schema.get("enum"), list) and bool(
        schema["enum"])


def free_text(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and not schema.get("enum") and not schema.get("format")


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# Words that stand for a number in arithmetic ("half of 30" is 30 / 2).
_ARITHMETIC_WORDS = {"half": (2.0, 0.5), "halve": (2.0, 0.5), "twice": (2.0,),
                     "triple": (3.0,), "quarter": (4.0, 0.25), "percent": (100.0,)}


# A unit a length of time is said in -> seconds ("min" and "hr" as speech recognition
# writes them too).
_TIME_UNITS = {form: SECONDS[unit] for form, unit in spellings(CLOCK_UNITS).items()}
# A misheard unit is this similar ("minuets" ~ "minutes": 86; "house" ~ "hours": 80 is not).
_SIMILAR_UNIT = 85.0
_PARTS = {"half": 0.5, "quarter": 0.25}  # "half an hour"
_FILLERS = {"more", "extra", "whole", "full", "long", "a", "an", "of"}
_ISO_DURATION = re.compile(
    r"P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?")
# The parts of an ISO-8601 duration, largest first, in seconds.
_ISO_SCALE = {"d": SECONDS["day"], "h": SECONDS["hour"], "m": SECONDS["minute"],
              "s": SECONDS["second"]}


def _unit_seconds(word: str) -> float | None:
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


# Units a number parameter may be counted in, as its name or description says; not "min",
# which names a minimum there ("min_level").
_COUNTED_IN = {form: SECONDS[unit] for form, unit in spellings(
    ("millisecond", *CLOCK_UNITS, "day")).items() if form != "min"}


def unit_of_time(key: str, schema: dict[str, Any]) -> float | None:
    """Seconds per unit a number parameter counts in, from its name or description
    ("duration_seconds", "Length of the timer in minutes"); None when it names none."""
    text = f"{key.replace('_', ' ')} {schema.get('description') or ''}"
    return next((_COUNTED_IN[w] for w in words(text) if w in _COUNTED_IN), None)


def in_unit(durations: Iterable[str], seconds_per_unit: float, *, whole: bool) -> list[str]:
    """Lengths of time said (ISO-8601) as numbers of a unit: PT10M in seconds -> "600".
    With `whole`, only amounts that are whole numbers of the unit."""
    out = []
    for duration in durations:
        match = _ISO_DURATION.fullmatch(duration)
        if match is None or not any(match.groups()):
            continue
        seconds = sum(float(match[k]) * n for k, n in _ISO_SCALE.items() if match[k])
        amount = seconds / seconds_per_unit
        if not whole or float(amount).is_integer():
            out.append(_plain(round(amount, 6)))
    return list(dict.fromkeys(out))


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
    seconds = sum(float(match[k]) * n for k, n in _ISO_SCALE.items() if match[k])
    runs = _runs_said(heard)
    if not runs:
        # "a few minutes", "minutes please": the unit alone was said, and must be the
        # value's ("a few hours" is no PT5M).
        largest = next(n for k, n in _ISO_SCALE.items() if match[k])
        return any(_unit_seconds(w) == largest for w in heard)
    sums = {sum(run[i:j]) for run in runs for i in range(len(run))
            for j in range(i + 1, len(run) + 1)}
    return any(abs(seconds - total) < 1e-6 for total in sums)


def _number_said(value: float, numbers: set[float]) -> bool:
    # "15 percent of 80": 0.15 is 15 said as a percentage.
    return value in numbers or any(abs(value * 100 - n) < 1e-9 for n in numbers)


# Words for a bound of the value's range: "turn it up to max", "lowest setting".
_TOP = frozenset({"max", "maximum", "full", "highest", "top", "loudest", "brightest"})
_BOTTOM = frozenset({"min", "minimum", "lowest", "bottom", "quietest", "dimmest"})
_TEMPORAL_FORMATS = frozenset({"date", "date-time", "time"})
# A day written as ISO-8601, maybe with a clock time after it: the day and the HH:MM.
ISO_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?"
                     r"(?:Z|[+-]\d{2}:?\d{2})?)?")


# "a pound", "an hour": one of a unit (but "a spider" is no 1).
_ONE_UNIT = re.compile(rf"\b(?:a|an) (?:{UNITS}|{unit_pattern(SECONDS, short=False)})\b")


def derived_numbers(said: str) -> set[float]:
    """Numbers `said` states or implies: its numbers (an article only before a unit),
    arithmetic words ("half", "twice") and each length of time in seconds, minutes, hours
    and milliseconds."""
    numbers = numbers_said(said, articles=False)
    if _ONE_UNIT.search(said.lower()):
        numbers.add(1.0)
    heard = words(said)
    for word in heard:
        # A percentage is one of a number said: "what percent of people..." says no 100.
        if word != "percent" or numbers:
            numbers.update(_ARITHMETIC_WORDS.get(word, ()))
    for run in _runs_said(_duration_words(said)):
        for seconds in {sum(run), *run}:
            numbers.update({seconds, seconds / 60, seconds / 3600, seconds * 1000})
    return numbers


def _bounds_said(schema: dict[str, Any], heard: list[str]) -> set[float]:
    """The schema's own bounds when they were named ("max" for a 0-100 level is 100)."""
    out: set[float] = set()
    top, bottom = schema.get("maximum"), schema.get("minimum")
    if is_number(top) and _TOP & set(heard):
        out.add(float(top))
    if is_number(bottom) and _BOTTOM & set(heard):
        out.add(float(bottom))
    if is_number(top) and "half" in heard:
        out.add((float(top) + float(bottom if is_number(bottom) else 0)) / 2)
    return out


# Words a yes/no's name frames its matter with, which any request says ("serves",
# "good": "a place that serves pizza" says nothing of `serves_alcohol`).
_FLAG_FRAMES = frozenset({
    "has", "have", "having", "serve", "serves", "serving", "offer", "offers", "offering", "good",
    "provide", "provides", "include", "includes", "support", "supports", "allow", "allows",
    "with", "does"})


def _flag_said(key: str, said: str, tool: str) -> bool:
    """A yes/no value is accounted for when its name was said ("a shared ride"); the
    words it shares with the tool's name do not count ("a ride" says nothing of
    `get_ride`'s `shared_ride`), nor do the words that frame it ("good" of
    `good_for_kids`)."""
    heard, named = words(said), words(tool.replace("_", " "))
    # A close form of the tool's own word is that word: "parcels" of `all_parcels` is
    # not said by "stop tracking the blue parcel" for `stop_parcel`.
    return any(word_said(w, heard) for w in words(key.replace("_", " "))
               if len(w) >= 3 and w not in FUNCTION_WORDS and w not in _FLAG_FRAMES
               and not word_said(w, named))


def _copies_schema(key: str, value: str, schema: dict[str, Any], heard: list[str]) -> bool:
    """Whether a text value is the parameter's own name or description copied ("The
    city where the event is taking place"): every word of it comes from there, and not
    every meaningful one was `heard`."""
    source = words(f"{key.replace('_', ' ')} {schema.get('description') or ''}")
    value_words = words(value)
    return bool(value_words) and all(w in source for w in value_words) and not all(
        word_said(w, heard) for w in content_words(value))


def _said_only_as_a_kind(key: str, value: str, heard: list[str], others: frozenset[str]
                         ) -> bool:
    """Whether the words of a text value that were `heard` only name a parameter, this
    one or another, or the tool (words of their names), numbers aside: a value holding
    its parameter's own word and words nobody said, or another parameter's name ("2 star
    hotel" for a hotel search's `destination`: a rating and the tool's kind). A value
    made only of words of its own parameter's name, all heard, stands. Descriptions are
    left out: they hold examples of values, not names of kinds."""
    own = words(key.replace("_", " "))
    meaningful = content_words(value)
    spoken = [w for w in meaningful if word_said(w, heard)]
    kinds = [w for w in spoken if not NUMBER.fullmatch(w)]
    if not kinds or not all(word_said(w, own) or w in others for w in kinds):
        return False
    return len(spoken) < len(meaningful) or any(
        w in others and not word_said(w, own) for w in kinds)


# A capitalized word of a value shorter than this may be left unsaid ("Las Vegas", "The").
_NAME_LETTERS = 4


def _said_in_short(said: str, word: str) -> bool:
    """Whether the word `said` is `word` or its beginning ("fran" for "francisco")."""
    return said == word or (len(said) >= 3 and word.startswith(said))


def _names_someone_else(value: str, heard: list[str]) -> bool:
    """Whether a text value holds a name (a capitalized word) nobody said: "New York"
    after "a new place", "Amanda Eastridge" after "AMC Eastridge". A name said in short
    stands ("San Fran" for "San Francisco")."""
    return any(len(name) >= _NAME_LETTERS and not word_said(name.lower(), heard)
               and not any(_said_in_short(h, name.lower()) for h in heard)
               for name in re.findall(r"\b[A-Z][\w'-]*", value))


# Words that name where a journey starts or ends in a parameter's name or description,
# and the words said before a place that tell which it is ("from Fresno", "to Sydney").
# A bare "to" or "from" counts in the name only: in a description it is as often an
# infinitive ("City in which to pick up rental car").
_FROM_WORDS = frozenset({"origin", "departure", "departing", "leaving", "source"})
_TO_WORDS = frozenset({"destination", "arrival", "arriving", "going"})
_FROM_SAID = frozenset({"from"})
_TO_SAID = frozenset({"to", "into", "toward", "towards"})


def _journey_end(key: str, schema: dict[str, Any]) -> str | None:
    """Which end of a journey the parameter names ("start" or "end"); None for both or
    neither."""
    name = set(words(key.replace("_", " ")))
    named = name | set(words(schema.get("description") or ""))
    start = bool(named & _FROM_WORDS or name & _FROM_SAID)
    end = bool(named & _TO_WORDS or name & _TO_SAID)
    return None if start == end else "start" if start else "end"


def _said_at(place: list[str], heard: list[str]) -> list[int]:
    """Where the words of `place` begin in `heard`, each said whole or in short ("San
    Fran" for "San Francisco")."""
    return [i for i in range(len(heard) - len(place) + 1)
            if all(_said_in_short(heard[i + j], word) for j, word in enumerate(place))]


def _said_the_other_way(key: str, value: str, schema: dict[str, Any], heard: list[str]
                        ) -> bool:
    """Whether a place was said only as the other end of a journey than the parameter's:
    "flights to Sydney" says no origin, "a bus from Fresno" no destination."""
    end = _journey_end(key, schema)
    if end is None:
        return False
    before = [heard[i - 1] for i in _said_at(words(value), heard) if i > 0]
    other = _TO_SAID if end == "start" else _FROM_SAID
    return bool(before) and all(word in other for word in before)


# A clock time written as a value: "14:30", "2:30 PM", "2 pm".
_CLOCK = re.compile(r"(\d{1,2})(?::(\d{2}))?\s*(?:([ap])\.?m\.?)?", re.IGNORECASE)


def _clock_time_said(value: str, said: str) -> bool:
    """Whether `value` is a clock time and the time of day said ("half past 2 in the
    afternoon" for "14:30")."""
    found = _CLOCK.fullmatch(value.strip())
    if found is None or (found[2] is None and found[3] is None):
        return False
    hour, minute = int(found[1]), int(found[2] or 0)
    if found[3]:
        hour = hour % 12 + (12 if found[3].lower() == "p" else 0)
    return f"{hour:02d}:{minute:02d}" in times_heard(said)


def _names_a_time_of_day(key: str) -> bool:
    """Whether a parameter's name asks for a time of day and no day (`pickup_time`), so
    that a day written for it answers something else."""
    named = words(key.replace("_", " "))
    return "time" in named and not {"date", "day", "datetime", "when"} & set(named)


def _value_said(key: str, value: Any, schema: dict[str, Any], said: str,
                synonyms: Mapping[str, Iterable[str]], times_said: bool, tool: str,
                others: frozenset[str] = frozenset()) -> bool:
    """`others`: the words of the tool's name and of its other parameters' names."""
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return all(_value_said(key, v, items, said, synonyms, times_said, tool, others)
                   for v in value)
    if isinstance(value, bool):
        return _flag_said(key, said, tool)
    if is_number(value):
        numbers = derived_numbers(said) | _bounds_said(schema, words(said))
        return _number_said(float(value), numbers)
    if not isinstance(value, str):
        return True  # an object or another JSON value: the schema judges it
    if schema.get("format") == "duration":
        return _duration_said(value, said)
    if schema.get("format") in _TEMPORAL_FORMATS:
        return times_said or is_said(value, said)
    if ISO_DAY.fullmatch(value):  # a day written for free text: a day said ("at 7" is none)
        return bool(dates_heard(said, "UTC")) and not _names_a_time_of_day(key)
    if isinstance(schema.get("enum"), list):
        # Declared words make a choice the request's to decide ("put on some jazz" is
        # play): the command said how its values are asked for.
        return bool(synonyms) or choice_said(value, schema["enum"], said)
    if _clock_time_said(value, said):
        return True
    heard = words(said)
    return (is_said(value, said) and not _copies_schema(key, value, schema, heard)
            and not _said_only_as_a_kind(key, value, heard, others)
            and not _said_the_other_way(key, value, schema, heard)
            and not _names_someone_else(value, heard))


def _unsaid(keys: Iterable[str], arguments: Mapping[str, Any], schema: dict[str, Any],
            said: str, synonyms: Mapping[str, Mapping[str, Iterable[str]]] | None,
            times_said: bool, tool: str) -> list[str]:
    """Those of `keys` whose values (present, with a schema) nothing `said` accounts for."""
    props = schema.get("properties") or {}
    kind = _kind_words(tool)
    return [key for key in keys
            if isinstance(props.get(key), dict) and arguments.get(key) is not None
            and (_another_parameters_option(key, arguments[key], props)
                 or not _value_said(key, arguments[key], props[key], said,
                                    (synonyms or {}).get(key, {}), times_said, tool,
                                    _name_words(props, key) | kind))]


def _another_parameters_option(key: str, value: Any, props: Mapping[str, Any]) -> bool:
    """Whether a free-text value is one of another parameter's options ("3D" as `genre`
    beside a `show_type` of regular, 3d, imax): said, it chose that option."""
    if not isinstance(value, str) or not free_text(props.get(key) or {}):
        return False
    return any(value.strip().lower() == str(option).lower()
               for other, schema in props.items() if other != key and isinstance(schema, dict)
               for option in schema.get("enum") or ())


def _kind_words(tool: str) -> frozenset[str]:
    """The meaningful words of a tool's name ("hotel" of `search_hotel`)."""
    return frozenset(content_words(tool.replace("_", " "))) if tool else frozenset()


def _name_words(props: Mapping[str, Any], key: str) -> frozenset[str]:
    """The meaningful words of the names of the parameters other than `key`."""
    return frozenset(w for other in props if other != key
                     for w in content_words(str(other).replace("_", " ")))


def unsaid_required(
    arguments: Mapping[str, Any],
    schema: dict[str, Any],
    said: str,
    synonyms: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
    *,
    times_said: bool = False,
    tool: str = "",
) -> list[str]:
    """Keys of required arguments, in declared order, whose values nothing `said` accounts
    for (see the module docstring). `said` is what the conversation said (user turns,
    answers, tool results); `synonyms` maps a key to its enum values' declared words;
    `times_said` tells whether a date or time was said; `tool` is the tool's name.
    Missing keys are validation's."""
    return _unsaid(schema.get("required") or [], arguments, schema, said, synonyms,
                   times_said, tool)


def repeated_values(arguments: Mapping[str, Any], schema: dict[str, Any], said: str,
                    tool: str = "", days_said: Mapping[str, int] | None = None) -> list[str]:
    """Keys whose free-text value a later key of the call holds too, beyond the times it
    was said: words said once fill one parameter. A small model writes the name it heard
    at the first key that could hold it ("genre": "Night Train") and again at its own
    ("album": "Night Train"), so the last is kept; so, too, where one value holds the
    other beside a word of the other's parameter name or of the tool's (`tool`) name,
    and where an option chosen holds it (the option is kept); a value whose words were
    heard only as close forms of another's ("Santosa" beside "Santa Rosa") is that
    value's. A day (`days_said`: ISO day -> how many phrases said it) written at more
    keys than it was said is kept at the first in declared order: "a car on the 9th"
    says when it is picked up, not when it is returned. Times are left alone."""
    props = schema.get("properties") or {}
    holders: dict[str, list[str]] = {}
    for key, value in arguments.items():
        if (isinstance(value, str) and free_text(props.get(key) or {})
                and not ISO_DAY.fullmatch(value) and re.search(r"[^\W\d_]", value)):
            holders.setdefault(" ".join(content_words(value)), []).append(key)
    heard = " ".join(content_words(said))
    times = {text: _times_said(text, heard) for text in holders}
    repeated = []
    for text, keys in holders.items():
        repeated += keys[: max(len(keys) - times[text], 0)]
    # An option chosen holds the words it was said in: written at a free-text key too
    # ("location": "Historical Landmark" beside that "category"), they are said once more.
    chosen = {" ".join(content_words(value)) for key, value in arguments.items()
              if isinstance(value, str) and text_choice(props.get(key) or {})}
    for text, keys in holders.items():
        if text in chosen and times[text] == 1:
            repeated += [key for key in keys if key not in repeated]
    # A word heard only as a close form of a word another value holds was said for that
    # value: "Santosa" as a cuisine beside "Santa Rosa" as the city, said once.
    heard_words = heard.split()
    for text, keys in holders.items():
        if _heard_only_in_another(text, holders, heard_words):
            repeated += [key for key in keys if key not in repeated]
    # So is a value written again inside another with its parameter's name ("genre":
    # "directed by Rachel Lears" beside "directed_by": "Rachel Lears"), or the tool's
    # ("Rachel Lears movies" for `find_movies`), said once.
    order = list(arguments)
    kind = _kind_words(tool)
    for part, part_keys in holders.items():
        if times[part] != 1:
            continue
        for whole, whole_keys in holders.items():
            if whole != part and _holds_with_its_name(whole, part, part_keys[-1], kind):
                earlier = min(whole_keys[-1], part_keys[-1], key=order.index)
                if earlier not in repeated:
                    repeated.append(earlier)
    if _SAME_DAY.search(said):  # "back the same day" says the day once more
        return repeated
    return repeated + [k for k in _days_written_again(arguments, props, days_said or {})
                       if k not in repeated]


_SAME_DAY = re.compile(r"\b(?:same|that) day\b", re.IGNORECASE)


def _days_written_again(arguments: Mapping[str, Any], props: Mapping[str, Any],
                        days_said: Mapping[str, int]) -> list[str]:
    """Keys past the first (in declared order) that hold a day said fewer times than it
    is written; a day not in `days_said` (not read from what was said) is left alone."""
    declared = {key: index for index, key in enumerate(props)}
    keys_by_day: dict[str, list[str]] = {}
    for key in sorted(arguments, key=lambda k: declared.get(k, 0)):
        value = arguments[key]
        day = ISO_DAY.fullmatch(value) if isinstance(value, str) else None
        if day is not None:
            keys_by_day.setdefault(day[1], []).append(key)
    return [key for day, keys in keys_by_day.items() if days_said.get(day)
            for key in keys[days_said[day]:]]


def _heard_only_in_another(text: str, holders: Mapping[str, list[str]], heard: list[str]
                           ) -> bool:
    """Whether no word of `text` (a value's content words) was said as it is, and each
    is close only to words said that another value of the call (`holders`) holds."""
    own = text.split()
    if not own or any(word in heard for word in own):
        return False
    others = {w for other in holders if other != text for w in other.split()}
    close = [[h for h in heard if word_said(word, [h])] for word in own]
    return all(found and set(found) <= others for found in close)


def _times_said(text: str, heard: str) -> int:
    """How often `text` (content words) is in `heard` as whole words; at least once."""
    return max(len(re.findall(rf"(?<!\S){re.escape(text)}(?!\S)", heard)), 1)


def _holds_with_its_name(whole: str, part: str, key: str, kind: frozenset[str]) -> bool:
    """Whether the words `whole` hold `part` in a row and, beside it, a word of `key`
    (its parameter's name: "theatre" of `theater_name`) or one of the tool's `kind`."""
    if f" {part} " not in f" {whole} ":
        return False
    named, own = [*words(key.replace("_", " ")), *kind], set(part.split())
    return any(word_said(w, named) for w in whole.split() if w not in own)


def unsaid_optional(
    arguments: Mapping[str, Any],
    schema: dict[str, Any],
    said: str,
    synonyms: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
    *,
    times_said: bool = False,
    tool: str = "",
) -> list[str]:
    """Keys of optional arguments whose values nothing `said` accounts for: values the
    user never asked for ("pets_welcome": false), left out so the command's defaults
    apply. Same rules as `unsaid_required`."""
    required = set(schema.get("required") or [])
    return _unsaid([k for k in arguments if k not in required], arguments, schema, said,
                   synonyms, times_said, tool)
