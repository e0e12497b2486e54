"""Whether an utterance only remarks on how something was, asking for nothing.

"the sunset was gorgeous this evening", "that film was far too long", "the pizza was
delicious": a statement of how something was may say words of a command's declaration but
asks for nothing to be done or looked up, so no call answers it. What counts is the
sentence's form, not its words:

- it opens with its subject, a determiner or a pronoun ("the", "that", "it", "we"): a
  request opens with its verb ("book the table that was free");
- it holds a past form of "be" ("was", "were", "wasn't", "weren't");
- it holds no verb of the present or the future and no wish ("is", "will", "can",
  "want", "need", "please"...): "the room was too noisy, can you find another" asks;
- it is no question ("what was the score", or a "?" typed);
- what follows "was" is no verb of intending ("I was hoping to book a table", "I was
  wondering if you could find a bus": the polite past asks now) and no participle ending in
  "-ed" ("the parcel was delivered" reports an event a command may record).

How something is, said as a judgement ("the lights in paris are beautiful at night",
"this song is great"), asks for nothing in the same way: the same form with "is" or "are"
and, after it, a word of judgement. A present state ("the oven is on", "it's cold in
here") may ask for something to be done about it and is not taken for a remark.

A liking said of something at hand ("i love this song", "we really hate that movie")
asks for nothing either: the speaker's own feeling, with the thing pointed at and
nothing more: no wish ("I'd love ..."), no infinitive ("I like to ..."), no second
clause ("..., play it again").

What keeps happening ("my neighbour always parks across our gate", "we used to walk to
school", "nobody ever thanks the cook") is the same form with a word of habit in place of
"was": a habit told asks for nothing done now. A hope or a wish about the world ("i hope
the parcel comes before friday", "i wish the shop opened earlier") has a subject of its
own after "hope" or "wish": "I hope to find a table", "I wish you could book it" ask.

Words said to someone else in the room ("honey, the parcel came", "kids, dinner in five
minutes"), opening by calling them by a word for family or a loved one, ask nothing of
the assistant; a wake word heard by mistake brings such talk in.
"""

from __future__ import annotations

import re
from itertools import pairwise

from jarvis.center.keywords import LEAD_INS, asks_for_information, opening_word, words

# Words a sentence's subject opens with: a remark says how its subject was.
_SUBJECT_OPENINGS = frozenset({
    "the", "a", "an", "that", "this", "these", "those", "it", "my", "our", "your", "his",
    "her", "their", "i", "we", "you", "he", "she", "they",
})

# A clause that only asks back for agreement ("it was hot, wasn't it") or thanks.
_TAGS = frozenset({"wasn't", "weren't", "isn't", "aren't", "didn't", "right", "huh",
                   "thanks", "thank"})
_PAST_BE = frozenset({"was", "were", "wasn't", "weren't"})
# Verbs of the present or the future, modal verbs and wishes: any of them may ask.
_NOW_OR_WISH = frozenset({
    "am", "is", "are", "isn't", "aren't", "i'm", "it's", "that's", "there's", "here's",
    "what's", "you're", "we're", "they're", "he's", "she's", "do", "does", "don't",
    "doesn't", "have", "has", "i've", "we've", "will", "won't", "i'll", "you'll", "we'll",
    "would", "wouldn't", "i'd", "you'd", "shall", "should", "can", "can't", "could",
    "couldn't", "may", "might", "must", "let", "let's", "please", "want", "wants", "need",
    "needs", "like", "likes", "love", "hope", "wish", "wonder", "think",
})
# "I was hoping to ...", "we were looking for ...": a request put politely in the past.
_INTENDING = frozenset({
    "hoping", "wondering", "thinking", "looking", "searching", "planning", "trying",
    "going", "meaning", "wanting", "expecting", "interested", "supposed",
})
# Said between "was" and what it says of the thing ("was really so good").
_DEGREE = frozenset({
    "really", "so", "very", "just", "too", "quite", "pretty", "absolutely", "totally",
    "not", "never", "always", "a", "bit", "little",
})


# A present "be" a judgement is said with ("the view is stunning"), and the words beside
# it that may ask.
_PRESENT_BE = frozenset({"is", "are", "it's", "that's", "they're"})
_ASKING_BESIDE_BE = _NOW_OR_WISH - _PRESENT_BE
# What a clause after the first opens with: a subject again, or a tag.
_LATER_CLAUSE_OPENINGS = _SUBJECT_OPENINGS | _TAGS
# Words of judgement: what they say of a thing is an opinion, not a state to act on.
_JUDGEMENTS = frozenset({
    "beautiful", "gorgeous", "lovely", "stunning", "amazing", "awesome",
    "wonderful", "great", "fantastic", "brilliant", "incredible", "excellent", "perfect",
    "nice", "good", "cool", "fun", "funny", "interesting", "delicious", "cute", "terrible",
    "awful", "horrible", "boring", "bad", "weird", "strange", "overrated", "underrated",
})


def only_remarks(utterance: str) -> bool:
    """Whether `utterance` only remarks on how something was or is, on a liking, a habit
    or a hope, asking for nothing (see the module's docstring)."""
    return (remarks_on_the_past(utterance) or remarks_on_how_it_is(utterance)
            or remarks_on_a_liking(utterance) or remarks_on_a_habit(utterance)
            or remarks_on_a_hope(utterance) or speaks_to_someone_else(utterance))


def remarks_on_the_past(utterance: str) -> bool:
    """Whether `utterance` only says how something was ("the sunset was gorgeous this
    evening"), asking for nothing (see the module's docstring)."""
    heard = _statement(utterance)
    if heard is None or any(word in _NOW_OR_WISH for word in heard):
        return False
    said_was = False
    for index, word in enumerate(heard):
        if word not in _PAST_BE:
            continue
        after = next((w for w in heard[index + 1:] if w not in _DEGREE), "")
        if after in _INTENDING or after.endswith("ed"):
            return False
        said_was = True
    return said_was


_LIKING = frozenset({"love", "like", "hate", "enjoy", "adore", "dislike", "loved", "liked",
                     "hated", "enjoyed"})
_AT_HAND = frozenset({"this", "that", "these", "those", "it"})
# The noun phrase pointed at holds at most this many words ("this old song").
_NOUN_PHRASE_WORDS = 2


def remarks_on_a_liking(utterance: str) -> bool:
    """Whether `utterance` only says the speaker likes or dislikes something at hand ("i
    love this song"), asking for nothing (see the module's docstring)."""
    clauses = _clauses(utterance, ",;")
    if "?" in utterance or len(clauses) != 1:  # "jarvis, ..." leads in, ", play it" asks
        return False
    heard = words(clauses[0])
    while heard and heard[0] in LEAD_INS:
        heard = heard[1:]
    heard = [w for w in heard if w not in _DEGREE]
    if len(heard) < 3 or heard[0] not in ("i", "we") or heard[1] not in _LIKING:
        return False
    pointed = heard[3:]
    if heard[2] == "it":
        return not pointed
    return heard[2] in _AT_HAND and len(pointed) <= _NOUN_PHRASE_WORDS and not any(
        word in _NOW_OR_WISH or word in LEAD_INS for word in pointed)


def remarks_on_how_it_is(utterance: str) -> bool:
    """Whether `utterance` only judges how something is ("the lights in paris are
    beautiful at night"), asking for nothing (see the module's docstring)."""
    heard = _statement(utterance)
    if heard is None:
        return False
    if any(word in _ASKING_BESIDE_BE for word in heard):
        return False
    return any(word in _PRESENT_BE and next(
        (w for w in heard[index + 1:] if w not in _DEGREE), "") in _JUDGEMENTS
        for index, word in enumerate(heard))


# Words of habit: what they say of their subject keeps happening, or no longer does.
_HABITUAL = frozenset({"always", "never", "usually", "ever", "often", "rarely", "seldom",
                       "constantly"})
# Subjects a habit is told of beside those of a remark ("nobody ever thanks the cook").
_HABIT_SUBJECTS = _SUBJECT_OPENINGS | {"nobody", "everybody", "everyone", "somebody",
                                       "someone"}


def remarks_on_a_habit(utterance: str) -> bool:
    """Whether `utterance` only tells what keeps happening ("we always forget the umbrella
    when we go out"), asking for nothing (see the module's docstring)."""
    heard = _statement(utterance, _HABIT_SUBJECTS)
    if heard is None or any(word in _ASKING_BESIDE_BE for word in heard):
        return False
    pairs = list(pairwise(heard))
    return (any(word in _HABITUAL for word in heard) or ("used", "to") in pairs
            or any(word in ("keeps", "keep") and after.endswith("ing") for word, after in pairs))


_HOPING = frozenset({"hope", "hoped", "wish", "wished"})
# Whom a hope may be of: not the assistant ("I hope you can find one") nor the speaker's
# own doing ("I hope we get a table"); "I wish there was a bus" asks whether there is.
_HOPED_OF = _SUBJECT_OPENINGS - {"you", "your", "i", "we"}


def remarks_on_a_hope(utterance: str) -> bool:
    """Whether `utterance` only hopes or wishes something of the world ("i hope the parcel
    comes before friday"), asking for nothing (see the module's docstring)."""
    heard = _statement(utterance, frozenset({"i", "we"}))
    if heard is None:
        return False
    heard = [w for w in heard if w not in LEAD_INS and w not in _DEGREE]
    if len(heard) < 4 or heard[1] not in _HOPING:
        return False
    subject = heard[3] if heard[2] == "that" else heard[2]
    # Lead-ins ("please") are left out above: only the assistant or a modal asks here.
    return subject in _HOPED_OF and not any(
        word in ("you", "your", "can", "could") for word in heard)


# Words for family or a loved one that open talk to them ("mom, ...").
_ADDRESSES = frozenset({"honey", "sweetie", "sweetheart", "darling", "babe", "mom", "mum",
                        "dad", "mommy", "daddy", "kids", "son", "grandma", "grandpa"})


def speaks_to_someone_else(utterance: str) -> bool:
    """Whether `utterance` opens by calling someone other than the assistant ("honey,
    the parcel came"), unless it names the assistant (see the module's docstring)."""
    first, _, rest = utterance.partition(",")
    called = [w for w in words(first) if w not in LEAD_INS]
    return (len(called) == 1 and called[0] in _ADDRESSES and bool(words(rest))
            and "jarvis" not in words(utterance))


def _statement(utterance: str, openings: frozenset[str] = _SUBJECT_OPENINGS
               ) -> list[str] | None:
    """The words of `utterance` when it is a statement that opens with its subject (one of
    `openings`: a determiner or a pronoun), no question; else None."""
    if "?" in utterance or asks_for_information(utterance):
        return None
    clauses = _clauses(utterance, ",;.!")
    # Each clause says how its subject was, or tags it ("..., wasn't it"); one that opens
    # otherwise may ask ("the room was too noisy, find me another").
    if not clauses or opening_word(clauses[0]) not in openings:
        return None
    if any(opening_word(c) not in _LATER_CLAUSE_OPENINGS for c in clauses[1:]):
        return None
    return words(utterance)


def _clauses(utterance: str, marks: str) -> list[str]:
    """The clauses of `utterance` split at `marks`, less those of lead-ins alone
    ("jarvis, ...")."""
    return [c for c in re.split(f"[{re.escape(marks)}]", utterance) if set(words(c)) - LEAD_INS]
