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
"""

from __future__ import annotations

from jarvis.center.keywords import asks_for_information, opening_word, words

# Words a sentence's subject opens with: a remark says how its subject was.
_SUBJECT_OPENINGS = frozenset({
    "the", "a", "an", "that", "this", "these", "those", "it", "my", "our", "your", "his",
    "her", "their", "i", "we", "you", "he", "she", "they",
})

_PAST_BE = frozenset({"was", "were", "wasn't", "weren't"})
# Verbs of the present or the future, modal verbs and wishes: any of them may ask.
_NOW_OR_WISH = frozenset({
    "am", "is", "are", "isn't", "aren't", "i'm", "it's", "that's", "there's", "here's",
    "what's", "you're", "we're", "they're", "he's", "she's", "do", "does", "don't",
    "doesn't", "have", "has", "i've", "we've", "will", "won't", "i'll", "you'll", "we'll",
    "would", "wouldn't", "i'd", "you'd", "shall", "should", "can", "can't", "could",
    "couldn't", "may", "might", "must", "let", "let's", "please", "want", "wants", "need",
    "needs", "like", "likes", "love", "hope", "wonder", "think",
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


def remarks_on_the_past(utterance: str) -> bool:
    """Whether `utterance` only says how something was ("the sunset was gorgeous this
    evening"), asking for nothing (see the module's docstring)."""
    if "?" in utterance or asks_for_information(utterance):
        return False
    if opening_word(utterance) not in _SUBJECT_OPENINGS:
        return False
    heard = words(utterance)
    if any(word in _NOW_OR_WISH for word in heard):
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
