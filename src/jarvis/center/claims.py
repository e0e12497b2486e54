"""Whether an answer in words states what only a tool could know.

An LLM that answers a request in words instead of calling a tool may make up its result:
"The weather in Atlanta is sunny with a mild breeze", "Timer stopped.", "I've booked a
table for 7 pm". Said in place of a call, such an answer is a false report, so the
engine speaks a plain refusal instead. What counts is general, not any command's: an
action claimed as done or under way, a clock time or calendar date, a temperature or the
weather, a price or balance, a share. Plain numbers and names stay ("A spider has eight
legs", "Lima"): general knowledge is the LLM's to give.

When the request means a registered tool, the bar is lower (the engine decides that): an
answer in its place that gives specifics nobody said (a number, a day, a name: "Historical
Landmark: The Golden Gate Bridge") or promises the action ("Yes, I can call you a cab
now.") stands in for a result the tool never gave. So does one with specifics nobody
said in answer to a request for something done or found ("I need a oneway flight" ->
"Oneway flight: 100 miles to Chicago"), whether or not a tool serves it, and a yes or a
no to a question about the user's own things ("is my rice ready yet?" -> "Yes, my rice
is ready.") or about a moment ("will the shop be open tomorrow?" -> "Yes, it will be
open tomorrow."): only a tool, or the user, knows that. An answer that writes out
a tool's declaration ("Find restaurant", "movies get rated based on their genre and
optionally director") is no answer at all, nor is a call written out as text
(`shopping_list {"action": "add"}`), nor one of a tool's example requests said back
("What is 12 times 4?").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from rapidfuzz import fuzz

from jarvis.center.keywords import (
    DOING_VERBS,
    LOOKUP_VERBS,
    after_lead_ins,
    same_word,
    says_searching,
    telling_words,
    words,
)
from jarvis.center.sentences import split_sentences
from jarvis.center.time_units import CLOCK_UNITS, unit_pattern

__all__ = [
    "REFUSAL",
    "asks_for_something",
    "asks_for_things",
    "asks_the_user_back",
    "declines",
    "echoes_a_declaration",
    "lists_a_tools_words",
    "offers_help",
    "promises_a_deed",
    "promises_action",
    "restates_an_example",
    "settles_the_users_question",
    "states_tool_facts",
    "unsaid_specifics",
    "writes_a_call",
]

REFUSAL = "Sorry, I can't help with that."

_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_PATTERNS = [
    # An action reported as done, started or promised by the assistant or the system.
    r"\b(?:i've|i have|i'll|i will|i'm|i am|i just|i've just)\s+(?:\w+\s+)?"
    r"(?:set|added|booked|reserved|scheduled|started|stopped|cancel+ed|turned|sent|played"
    r"|playing|found|transferred|created|ordered|bought|called|removed|deleted|paused"
    r"|booking|setting|adding|checking|looking|searching|turning|sending|reserving)\b",
    r"\b(?:has|have) been (?:set|added|booked|reserved|scheduled|started|stopped|cancel+ed"
    r"|turned|sent|transferred|created|ordered|removed|deleted|paused)\b",
    r"\b(?:is|are) now\b",
    r"^(?:done|ok(?:ay)?,? done|all set|timer (?:set|stopped|started)|booked|reserved)\b",
    # A reading only a device or a service has.
    r"\b\d{1,2}(?::\d{2})\s*(?:[ap]\.?m\.?)?\b|\b\d{1,2}\s*[ap]\.?m\.?\b",
    r"[°℃℉]|\bdegrees?\b|\bcelsius\b|\bfahrenheit\b",
    r"\b(?:sunny|cloudy|overcast|raining|rainy|snowing|drizzle|thunderstorms?|humid"
    r"|breezy|windy|foggy|clear skies)\b",
    r"[$€£¥]\s*\d|\b\d+(?:\.\d+)?\s*(?:dollars?|euros?|pounds sterling|usd|eur)\b",
    r"\b(?:your|the) (?:balance|account|reservation|booking|order|flight|ride|timer|alarm"
    r"|reminder) (?:is|was|has|will)\b",
    rf"\b(?:{unit_pattern(CLOCK_UNITS, short=False)}) (?:left|remaining)\b",
    # Results of a search or a purchase, and what a player is doing.
    r"\b(?:here (?:are|is)|i found|i could find|there (?:are|is) \d+|now playing|is playing"
    r"|(?:is|are|has been|was) confirmed|purchased)\b",
    # Results listed one by one ("1. The Great Wall ... 2. ...").
    r"(?:^|\s)1[.)]\s+\S[\s\S]*?\s2[.)](?:\s|$)",
    # A calendar date: a month with a day, or "the 8th".
    rf"\b(?:{_MONTHS})\w*\.? \d{{1,2}}(?:st|nd|rd|th)?\b|\bthe \d{{1,2}}(?:st|nd|rd|th)\b",
]
_CLAIM = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)


def states_tool_facts(answer: str) -> bool:
    """Whether `answer` reports an action or a reading only a tool could give."""
    return _CLAIM.search(answer.replace("\u2019", "'")) is not None


_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_CALENDAR_WORD = re.compile(rf"^(?:{_DAYS}|(?:{_MONTHS})[a-z]*)$", re.IGNORECASE)
_AFFIRMATIVE = r"(?:yes|sure|of course|certainly|absolutely|okay|ok)\b"
_YES = re.compile(rf"^{_AFFIRMATIVE}", re.IGNORECASE)
_PROMISE = re.compile(rf"^(?:{_AFFIRMATIVE}[,!]?\s+)?"
                      r"i(?: can|'ll| will| am going to)\b(?!'t| not)[^?]*$", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n)$")


def unsaid_specifics(answer: str, said: str) -> list[str]:
    """Numbers, days, months and names (capitalized inside a sentence) in `answer` that
    `said` (what the user and the tools said) does not hold."""
    known = {w.lower() for w in re.findall(r"[\w'-]+", said)}
    found = []
    for match in re.finditer(r"[\w'-]+", answer.replace("\u2019", "'")):
        word = match.group()
        specific = (any(c.isdigit() for c in word) or _CALENDAR_WORD.match(word)
                    or (word[0].isupper() and not word.startswith("I'") and word != "I"
                        and not _SENTENCE_START.search(answer[: match.start()])))
        if specific and word.lower() not in known:
            found.append(word)
    return found


def promises_action(answer: str) -> bool:
    """An affirmative that the assistant does it ("Yes, I can call you a cab now.", "I
    can cast music on the television for you."), with no question to go on with."""
    return _PROMISE.search(answer.strip().replace("\u2019", "'")) is not None


# The act a promise names: the verb after "I can", past "help you" ("Yes, I can help you
# find a doctor."). Telling, counting and repeating the assistant does in words itself.
_PROMISED = re.compile(r"\bi(?: can|'ll| will| am going to) (?:(?:help|assist) you (?:to )?)?(\w+)",
                       re.IGNORECASE)
_DEEDS = (DOING_VERBS | LOOKUP_VERBS) - {"tell", "count", "repeat", "write"}


def promises_a_deed(answer: str) -> bool:
    """Whether `answer` says yes to an act in the world or a search ("Yes, I can call a cab
    for you.", "Sure, I'll help you find a doctor."), not to a reply ("Yes, I can hear
    you."): with no call made, nothing keeps it. Without the yes ("I can find a bus
    journey"), it may tell what the assistant can do."""
    text = answer.strip().replace("\u2019", "'")
    found = _PROMISED.search(text)
    return (_YES.match(text) is not None and promises_action(text) and found is not None
            and (found.group(1).lower() in _DEEDS or says_searching(found.group(1))))


# A clause starts a sentence, or follows a comma or a conjunction ("I'm hungry so I
# need a place to eat"); after "and" the subject may be left out ("... and need a cab").
_WANTING = (r"(?:'d| would) (?:like|love)| (?:want|wanna|need|wish|gotta|have to|will need)"
            r"|(?:'ve| have)? got to| feel like \w+ing")
_REQUEST = re.compile(
    r"(?:^|[.!?,;:]\s|\b(?:and|so|but|because)\s)\W*(?:(?:hi|hello|hey)\b\W*)?"
    r"(?:(?:i|we) think\s)?"
    rf"(?:(?:i|we)(?: (?:really|just|also|still|actually))?(?:{_WANTING})"
    r"|(?:would|'d) (?:like|love)|need|want"
    r"|(?:(?:i'?m|i am|we'?re|we are)|(?<=and )(?:am|are)) "
    r"(?:looking (?:out )?(?:for|to)|searching|wanting|in need)"
    r"|(?:i'?m|i am|we'?re|we are) (?:trying|hoping|planning|interested)|i was hoping"
    r"|are you able|(?:is it|would it be) possible (?:for you )?to"
    r"|(?:can|could|may) (?:i|we) (?:get|have)"
    r"|can you|could you|would you|will you|please|help(?: me| (?=\w))|find me|get me|book me"
    r"|(?:find|search for|check) (?:a|an|the|my|some|for|me))\b"
    # Or a question about the user's own things: only a tool (or they) could answer it.
    r"|\b(?:what|when|where|which|how|who|is|are|do|does|did)\b.*\b(?:my|our)\b",
    re.IGNORECASE)


def asks_for_something(utterance: str) -> bool:
    """Whether `utterance` asks for something to be done or found (a want, a need, a
    plan to do, a request of the assistant, an order: "I wish to ...", "I feel like
    watching ...", "can you ...", "find a ...", in any of its sentences or clauses) or
    asks about the user's own things ("what's my balance?"), as opposed to a question of
    general knowledge."""
    return _REQUEST.search(utterance.replace("\u2019", "'")) is not None


# A question after things to find ("What are some cool places to visit?", "Any tourist
# traps that you recommend?", "Is there a bus to Fresno?"): its answer names them.
_THINGS_ASKED = re.compile(
    r"\b(?:(?:what|which) are (?:some|the best|any|good)|are there any"
    r"|is there (?:any|a|an|anywhere|anything|somewhere|something)"
    r"|any (?:suggestions|recommendations|ideas)|(?:you|u) (?:recommend|suggest)"
    r"|(?:recommend|suggest) (?:me|a|an|some|any)|do you (?:have|know) (?:any|of)"
    r"|where can (?:i|we)|what (?:\w+ )?(?:can|could|should) (?:i|we) (?:do|see|visit|go))\b",
    re.IGNORECASE)


def asks_for_things(utterance: str) -> bool:
    """Whether `utterance` asks which things there are to have, see or do: what a search
    finds, and general knowledge too ("what are some good books?"), so the engine weighs
    it only where the request means a tool."""
    return _THINGS_ASKED.search(utterance.replace("\u2019", "'")) is not None


# An offer of help asks nothing about the request ("What can I do for you?").
_OFFER = re.compile(r"\b(?:help|assist|do for)\s+you\b", re.IGNORECASE)


def asks_the_user_back(answer: str) -> bool:
    """Whether `answer` ends in a question to the user about what they want ("Which
    city are you leaving from?"), rather than an offer of help ("How can I help you?")."""
    text = answer.strip()
    return text.endswith("?") and _OFFER.search(_last_sentence(text)) is None


# The assistant saying it cannot do what was asked ("Sorry, I can't help with that.").
_DECLINE = re.compile(r"\bi(?:'m| am)? (?:can't|cannot|can not|unable to|not able to)\b",
                      re.IGNORECASE)


def offers_help(answer: str) -> bool:
    """Whether `answer` ends in an offer of help ("Hello Adele! How can I assist you
    today?"): said to a request, it takes up none of it."""
    last = _last_sentence(answer)
    return last.endswith("?") and _OFFER.search(last) is not None


def _last_sentence(text: str) -> str:
    return (split_sentences(text) or [""])[-1]


def declines(answer: str) -> bool:
    """Whether `answer` says the assistant cannot do it ("Sorry, I can't help with
    that.", "I'm unable to book rides.")."""
    return _DECLINE.search(answer.replace("\u2019", "'")) is not None


# Words in a row of a tool's description an answer holds to have copied it, and how many
# of them must be telling words (not "the", "for", "get").
_ECHO_RUN = 4
_ECHO_TELLING = 2
# How many first words of the request an answer says back when it opens with them.
_SAID_BACK = 3


def echoes_a_declaration(answer: str, declarations: Iterable[tuple[str, str]],
                         request: str = "") -> bool:
    """Whether `answer` writes out a tool's declaration (`declarations`: name and
    description) instead of answering: nothing but the words of a tool's name ("Find
    restaurant" for `find_restaurants`), or four words in a row of a description, two of
    them telling, in an answer half made of that declaration's words ("movies get rated
    based on their genre and optionally director" after "Find movies by genre and
    optionally director"). A small model that cannot place a request copies the text it
    was given; the assistant telling what it can do ("I can ...") does not, but the
    user's `request` said back in its own first words ("I need to book a taxi to head to
    a given destination" after "I need to book a taxi please") is no telling."""
    said = words(answer)
    if not said or (said[0] in ("i", "i'm", "i'll", "i've")
                    and said[:_SAID_BACK] != words(request)[:_SAID_BACK]):
        return False
    runs = {" ".join(said[i:i + _ECHO_RUN]) for i in range(len(said) - _ECHO_RUN + 1)}
    for name, description in declarations:
        named = words(name.replace("_", " "))
        if len(said) >= 2 and all(any(same_word(w, n) for n in named) for w in said):
            return True
        declared = words(description)
        own = set(declared) | set(named)
        if _copies_a_run(declared, runs) and 2 * sum(w in own for w in said) >= len(said):
            return True
    return False


def lists_a_tools_words(answer: str, keyword_lists: Iterable[Iterable[str]]) -> bool:
    """Whether `answer` is mostly a list of one tool's keywords ("things to send: parcel,
    courier, tracking, delivery"): a small model that cannot place a request writes out
    the words the prompt gives each tool. `keyword_lists`: each tool's keywords."""
    said = words(answer)
    for keywords in keyword_lists:
        own = {k.lower() for k in keywords}
        used = sum(w in own for w in said)
        if len(own.intersection(said)) >= _LISTED_KEYWORDS and 2 * used >= len(said):
            return True
    return False


# Distinct keywords of one tool an answer lists when it writes them out.
_LISTED_KEYWORDS = 3


def restates_an_example(answer: str, examples: Iterable[str], request: str) -> bool:
    """Whether `answer` is, all but in spelling, one of the requests a tool's `examples`
    give and the user's `request` is not: "What is 12 times 4?" to "I feel like going
    out tonight", beside a calculator's example "what's 12 times 4". A small model that
    cannot place a request copies one it was shown."""
    said, asked = _plain(answer), _plain(request)
    return any(fuzz.ratio(said, example) >= _RESTATED and fuzz.ratio(asked, example) < _RESTATED
               for example in map(_plain, examples) if example)


# How alike (0-100) an answer and an example request are when one restates the other.
_RESTATED = 85
_CONTRACTED = re.compile(r"\b(what|that|it|there|here|who|where|how)'s\b")


def _plain(text: str) -> str:
    """`text` as lowercase words, "what's" as "what is"."""
    return " ".join(words(_CONTRACTED.sub(r"\1 is", text.lower().replace("\u2019", "'"))))


# JSON arguments ('{"action": ...', "{}"), which nobody says aloud.
_ARGUMENTS = re.compile(r"\{\s*[\"'}]")
_CAMEL = re.compile(r"[a-z][A-Z]")


def writes_a_call(answer: str, tools: Mapping[str, Iterable[str]]) -> bool:
    """Whether `answer` is a call written as text: JSON arguments, the name of one of the
    `tools` (name -> its parameters' names) that no speaker would say ("shopping_list",
    "playMedia"), or a tool's name in words before one of its parameters and a colon
    ("Find movies location: Paris")."""
    if _ARGUMENTS.search(answer):
        return True
    spoken = set(re.findall(r"[A-Za-z_]+", answer))
    if any(name in spoken and ("_" in name or _CAMEL.search(name) is not None)
           for name in tools):
        return True
    return any(re.search(_words_pattern(name) + r"[\s,:-]+" + _words_pattern(key) + r"\s*:",
                         answer, re.IGNORECASE)
               for name, keys in tools.items() for key in keys)


def _words_pattern(name: str) -> str:
    """A pattern of `name`'s words ("find_movies", "findMovies") written apart or joined."""
    parts = re.findall(r"[A-Za-z][a-z]*|\d+", name)
    return r"\b" + r"[\s_-]*".join(map(re.escape, parts)) + r"\b"


def _copies_a_run(declared: list[str], runs: set[str]) -> bool:
    """Whether one of `runs` (an answer's word runs) is a run of the words `declared`
    holding enough telling words."""
    for i in range(len(declared) - _ECHO_RUN + 1):
        run = " ".join(declared[i:i + _ECHO_RUN])
        if run in runs and len(telling_words(run)) >= _ECHO_TELLING:
            return True
    return False


_VERDICT = re.compile(r"^\W*(?:yes|no|nope|yeah|yep)\b", re.IGNORECASE)
# A yes-no question ("is", "did", "do"... first) about the user's things or doings.
_ABOUT_THE_USER = re.compile(r"^\W*(?:is|are|was|were|has|have|had|did|do|does)\b[^?]*"
                             r"\b(?:my|our|i|we)\b", re.IGNORECASE)


# A yes-no question ("will it ...", "should I ...") and the words that put it at a
# moment no model knows: it has no clock, so what holds now, today or tomorrow is a
# tool's (or the user's) to tell.
_YES_NO = re.compile(r"^\W*(?:is|are|am|was|were|has|have|had|did|do|does|will|would|"
                     r"should|shall|can|could)\b", re.IGNORECASE)
_MOMENT = frozenset({"now", "yet", "today", "tonight", "tomorrow", "currently"})
# "are you still there", "can you hear me now": the assistant speaks for itself ("do you
# think the shop is open today" asks about the world all the same).
_TO_THE_ASSISTANT = re.compile(r"^\W*\w+\s+you\b(?!\s+(?:think|know|reckon)\b)",
                               re.IGNORECASE)


def settles_the_users_question(answer: str, utterance: str) -> bool:
    """Whether `answer` says yes or no to a question about the user's own things or
    doings ("is my rice ready yet", "did I leave the lights on"), or settles one about a
    moment ("will the shop be open tomorrow" -> "Yes, ...", "has the parcel come yet" ->
    "The parcel has not come yet."): only a tool, or the user, knows that."""
    text = answer.strip().replace("\u2019", "'")
    said = after_lead_ins(utterance.replace("\u2019", "'"))  # "hey jarvis, will it ..."
    verdict = _VERDICT.search(text) is not None
    if verdict and _ABOUT_THE_USER.search(said) is not None:
        return True
    moments = _MOMENT & set(words(said))
    if not moments or _YES_NO.search(said) is None or _TO_THE_ASSISTANT.search(said):
        return False
    return verdict or bool(moments & set(words(text)))
