"""Which commands an utterance names by their routing keywords.

Commands declare `keywords` (the words people use for them: "timer", "forecast", "turn
on"). The center counts, per tool, the distinct keywords heard in the utterance and hands
the counts to the LLM backend as a prior for its tool choice: a 0.5B model confuses
look-alike tools ("turn the volume up" -> set_timer) that a keyword settles, and an
utterance that names no command at all ("um", "okay") is more likely small talk.

Matching is made for speech recognition output: case and punctuation are ignored, a word
may carry a plural or verb ending ("timers", "reminded"), and a long word may be misheard
by a letter or two after its first ("whether" for "weather", but not "flight" for "light").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from rapidfuzz import fuzz

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Endings a heard word may add to a keyword and still be that keyword.
_ENDINGS = ("", "s", "es", "ed", "d", "ing", "y", "'s")
# Misheard words: both at least this long and this similar ("whether" ~ "weather": 86).
_FUZZY_MIN_LEN = 5
_FUZZY_MIN_RATIO = 85.0
# Plurals no ending makes: "six foot" and "six feet" say one word.
IRREGULAR_PLURALS = {"feet": "foot", "teeth": "tooth", "geese": "goose", "men": "man",
                     "women": "woman", "people": "person", "children": "child",
                     "mice": "mouse"}


def words(text: str) -> list[str]:
    """Lowercase words of `text` (apostrophes kept inside words: "don't")."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


@lru_cache(maxsize=1 << 16)
def _word_matches(heard: str, keyword: str) -> bool:
    # Cached: every request weighs the same declared words against common words again.
    if any(heard == keyword + ending for ending in _ENDINGS):
        return True
    if IRREGULAR_PLURALS.get(heard, heard) == IRREGULAR_PLURALS.get(keyword, keyword):
        return True
    if len(heard) < _FUZZY_MIN_LEN or len(keyword) < _FUZZY_MIN_LEN:
        return False
    # A misheard word keeps its first sound; "flight" is not a misheard "light".
    if heard[0] != keyword[0]:
        return False
    return fuzz.ratio(heard, keyword, score_cutoff=_FUZZY_MIN_RATIO) >= _FUZZY_MIN_RATIO


@lru_cache(maxsize=1 << 14)
def _keyword_words(keyword: str) -> tuple[str, ...]:
    return tuple(words(keyword))


# Said between the two words of a phrasal verb: "tick that off" is "tick off".
_OBJECT_PRONOUNS = frozenset({"it", "that", "this", "them", "those", "these"})


def keyword_heard(heard: list[str], keyword: str) -> bool:
    """Whether the words `heard` contain `keyword` (one word or a phrase of several; an
    object pronoun may split a two-word phrase: "turn it off" says "turn off")."""
    wanted = list(_keyword_words(keyword))
    if not wanted:
        return False
    if len(wanted) == 1 and len(wanted[0]) <= 2:
        return False  # "in", "on": they point everywhere
    span = len(wanted)
    for start in range(len(heard) - span + 1):
        window = heard[start : start + span]
        # In a phrase only the last word may carry an ending ("turned off" is not one).
        if window[:-1] == wanted[:-1] and _word_matches(window[-1], wanted[-1]):
            return True
        if span == 2 and start + 3 <= len(heard):
            first, between, last = heard[start : start + 3]
            if (between in _OBJECT_PRONOUNS and first == wanted[0]
                    and _word_matches(last, wanted[1])):
                return True
    return False


def same_word(one: str, other: str) -> bool:
    """Whether two words are one with another ending, or one misheard ("booking",
    "book"; "restaurant", "restaurants"), whichever was said."""
    return keyword_heard([one], other) or keyword_heard([other], one)


def keyword_hints(utterance: str, keywords: Mapping[str, Iterable[str]]) -> dict[str, float]:
    """Tool name -> how many of its distinct keywords `utterance` contains (zeros left out)."""
    heard = words(utterance)
    hints: dict[str, float] = {}
    if not heard:
        return hints
    for tool, tool_keywords in keywords.items():
        count = sum(1 for k in dict.fromkeys(str(k) for k in tool_keywords)
                    if keyword_heard(heard, k))
        if count:
            hints[tool] = float(count)
    return hints


# Words of a declaration that tell nothing about what a tool is for.
_PLAIN = frozenset({
    "the", "and", "for", "with", "from", "that", "this", "into", "onto", "about", "your",
    "user", "users", "given", "some", "any", "all", "can", "will", "get", "set", "find",
    "make", "use", "used", "using", "whether", "which", "what", "when", "where", "who",
    "how", "its", "their", "there", "other", "new", "one", "name", "type", "number",
    "value", "values", "list", "tool", "function", "call", "particular", "specific",
    "information", "details", "based", "like", "also", "more", "most", "such",
    "two", "three", "between", "each", "per",
})


# Verbs of trading: one act (a commitment, not a look-up) whichever of them is said.
TRADING_VERBS = frozenset({
    "book", "books", "booked", "booking", "reserve", "reserves", "reserved", "reserving",
    "buy", "buys", "buying", "bought", "purchase", "purchases", "purchased", "purchasing",
})

# Verbs of searching, and the verbs that search with a particle ("look for", "look up");
# to recommend or suggest is to search for what suits.
_SEARCH_VERBS = frozenset({"find", "finds", "finding", "search", "searches", "searching",
                           "lookup", "recommend", "recommends", "recommending", "suggest",
                           "suggests", "suggesting"})
_LOOK = frozenset({"look", "looks", "looking"})


def says_searching(text: str) -> bool:
    """Whether `text` says a verb of searching ("find me ...", "look up ...", "Search for
    a hotel"); "look" alone does not ("look at this")."""
    heard = words(text.replace("_", " "))
    return any(w in _SEARCH_VERBS or (w in _LOOK and heard[i + 1 : i + 2] in (["for"], ["up"]))
               for i, w in enumerate(heard))


# Verbs that change something: a tool named with one, or an action chosen as one, does
# something ("book", "play", "turn on"); one that reads or finds is a look-up.
DOING_VERBS = TRADING_VERBS | frozenset({
    "set", "add", "remove", "delete", "cancel", "play", "pause", "stop", "resume", "skip",
    "turn", "switch", "start", "create", "make", "order", "send", "transfer", "pay",
    "schedule", "call", "roll", "flip", "open", "close", "lock", "unlock", "update", "edit",
    "move", "rename", "clear", "mark", "complete", "record", "install", "enable", "disable",
    "toggle", "dim", "increase", "decrease", "mute", "unmute", "share", "post", "rent",
    "shuffle", "repeat", "save", "write", "run", "launch", "activate",
})
LOOKUP_VERBS = frozenset({
    "get", "read", "list", "show", "check", "find", "search", "lookup", "look", "query",
    "fetch", "tell", "count", "view", "see",
})


# Verbs of asking for something or of trading, said of every kind of thing ("book" a
# table, a flight, a house): they say what is done, not to what, so alone they name no tool.
REQUEST_VERBS = TRADING_VERBS | frozenset({
    "search", "searches", "searched", "searching", "look", "looks", "looking",
    "help", "want", "need", "show", "tell",
})


# Openings of a question for information: a question word, or a verb of being or doing
# put first ("is it", "does it"). "can you ..." and "could you ..." ask for an action.
_QUESTION_OPENINGS = frozenset({
    "what", "what's", "whats", "how", "how's", "who", "who's", "whom", "whose", "why",
    "when", "where", "where's", "which", "is", "isn't", "are", "aren't", "was", "wasn't",
    "were", "do", "does", "doesn't", "did", "didn't",
})


# Said before a sentence without being part of it ("jarvis, how do I ...", "so is it ...").
LEAD_INS = frozenset({
    "hey", "hi", "hello", "ok", "okay", "so", "um", "uh", "oh", "well", "and", "but",
    "jarvis", "please",
})


# "remind me, what's the capital of australia": a clause that leads in to the question.
_LEAD_IN_CLAUSE = re.compile(r"^\W*(?:\w+\W+){0,2}?\w+ me\s*,\s*(?P<rest>\S.*)$", re.DOTALL)


def asks_for_information(utterance: str) -> bool:
    """Whether `utterance` opens as a question for information ("how do bees make
    honey"), not a request for an action ("look up the moon on wikipedia"), also after
    a clause that leads in to it ("tell me, who wrote hamlet")."""
    if opening_word(utterance) in _QUESTION_OPENINGS:
        return True
    led_in = _LEAD_IN_CLAUSE.match(utterance.lower())
    return led_in is not None and opening_word(led_in["rest"]) in _QUESTION_OPENINGS


def without_lead_ins(utterance: str) -> list[str]:
    """The words of `utterance` less those said before a sentence ("so", "jarvis")."""
    return [w for w in words(utterance) if w not in LEAD_INS]


# The lead-ins a sentence opens with, and the marks between them ("hey jarvis, ").
_LEADING = re.compile(rf"^(?:\W*\b(?:{'|'.join(sorted(LEAD_INS))})\b)+\W*", re.IGNORECASE)


def after_lead_ins(utterance: str) -> str:
    """`utterance` from its first word that is no lead-in ("hey jarvis, will it ..." ->
    "will it ..."), as said."""
    return _LEADING.sub("", utterance, count=1)


def opening_word(utterance: str) -> str:
    """The word a sentence opens with, after its lead-ins ("" when there is none)."""
    return next(iter(without_lead_ins(utterance)), "")


def opens_with(utterance: str, phrases: Iterable[str]) -> bool:
    """Whether `utterance` opens, after its lead-ins, with one of `phrases` ("stick on
    some abba" with "stick on")."""
    heard = without_lead_ins(utterance)
    return any(said and heard[: len(said)] == said for said in map(words, phrases))


# The words after "how" that ask for an amount ("how many", "how far", "how long").
_AMOUNTS = frozenset({
    "many", "much", "far", "long", "tall", "big", "heavy", "old", "hot", "cold", "deep",
    "high", "fast", "warm", "large", "wide", "often"})


def asks_how_much(utterance: str) -> bool:
    """Whether `utterance` opens by asking for an amount ("how many cups go into a loaf",
    "how far is it to Leeds"), after its lead-ins."""
    heard = without_lead_ins(utterance)
    return len(heard) > 1 and heard[0] == "how" and heard[1] in _AMOUNTS


# "how do I change a tyre", "how should I store fresh basil": a question for a method.
_HOW_TO = re.compile(
    r"^how (?:to|(?:do|does|should) (?:i|you|we|one|people|they|someone))\b")


def asks_how_to(utterance: str) -> bool:
    """Whether `utterance` asks how something is done ("how do you convert a pdf into a
    word document"), after its lead-ins, rather than for it to be done."""
    return _HOW_TO.match(" ".join(without_lead_ins(utterance))) is not None


# Openings that put a request as a question ("are you able to find ...", "how about
# some jazz", "do you have a table ..."): said to the assistant, they ask for an action.
_POLITE_OPENINGS = (("do", "you"), ("are", "you"), ("how", "about"), ("what", "about"),
                    ("why", "don't"), ("why", "dont"), ("why", "not"),
                    ("is", "it", "possible"), ("is", "there", "a", "way"),
                    ("is", "there", "any", "way"))


def asks_a_question(utterance: str) -> bool:
    """Whether `utterance` asks for information and for nothing done ("is a sedan better
    than a hatchback", "how do I change a tyre"), not for an action put as a question
    ("are you able to find me a bus?", "how about a table for two")."""
    if not asks_for_information(utterance):
        return False
    heard = without_lead_ins(utterance)
    return not any(tuple(heard[: len(opening)]) == opening for opening in _POLITE_OPENINGS)


def telling_words(text: str) -> set[str]:
    """The words of a declaration's text that say what a tool is for (names split at "_")."""
    return {w for w in words(text.replace("_", " ")) if len(w) >= 3 and w not in _PLAIN}


def description_words(tools: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """Per tool, the distinctive words of its own declaration (name and description:
    `tools` maps a name to that text), each weighted 1 / the number of tools that have it:
    what a plain OpenAI tool says about itself serves as its keywords."""
    found = {name: telling_words(text) for name, text in tools.items()}
    counts: dict[str, int] = {}
    for own in found.values():
        for word in own:
            counts[word] = counts.get(word, 0) + 1
    # A word most tools share names none of them.
    return {name: {w: 1.0 / counts[w] for w in own if counts[w] <= 2}
            for name, own in found.items()}


def description_hints(utterance: str, tools: Mapping[str, Mapping[str, float]]
                      ) -> dict[str, float]:
    """Tool name -> the weight of its declaration's words heard (zeros left out)."""
    heard = words(utterance)
    hints: dict[str, float] = {}
    for tool, weighted in tools.items():
        total = sum(weight for word, weight in weighted.items() if keyword_heard(heard, word))
        if total:
            hints[tool] = total
    return hints
