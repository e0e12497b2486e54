"""What the embedded model may say in words: the `say` pseudo tool that offers an answer
beside the tools, and the checks that turn a reply no one should hear (a call written as
text, the request said back, a piece of the prompt copied) into a plain "can't help".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from jarvis.center.claims import asks_for_something
from jarvis.center.keywords import words
from jarvis.center.llm.embedded.grammar import tool_name
from jarvis.center.sentences import split_sentences

# A pseudo tool offered beside the client's when a spoken answer is allowed: "call or
# answer" becomes one more name to score, which a small model judges far better than the
# first token of its reply (measured: docs/embedded-llm.md). Named `say` because the
# compact prompt's examples write an answer as `"hello" -> say: ...`.
NO_TOOL = "say"
NO_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": NO_TOOL,
        "description": "Answer in words, without a tool: greetings, thanks, small talk, "
                       "general-knowledge questions, or requests for things no other tool "
                       "can do.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
}


def with_no_tool(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tools` plus the pseudo tool (unless a client tool has that name)."""
    if any(tool_name(t) == NO_TOOL for t in tools):
        return tools
    return [*tools, NO_TOOL_SCHEMA]


# The compact examples write answers as `-> say: ...`; the model may copy the label.
SAY_LABEL = re.compile(r"^\s*say:\s*", re.IGNORECASE)
_IDENTIFIER = re.compile(r"\b[a-z]+_[a-z_]+\b")
_SAY_BACK = re.compile(r"\b(?:say|repeat|spell)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=[\s\"')\]]|$)")


def names_a_tool(text: str, tools: list[dict[str, Any]]) -> bool:
    """Whether `text` holds the name of one of `tools` (a call of it written as text)."""
    return any(tool_name(t) in text for t in tools)


def looks_like_a_call(text: str) -> bool:
    """Whether a "spoken" reply is really a tool call written as text: JSON arguments in
    it, or empty ones (`track_parcel {}`, `ring the courier {}`)."""
    return '{"' in text or "{'" in text or re.search(r"\{\s*\}", text) is not None


# Said instead of an answer that is a call written as text (`track_parcel {"number": 9}`):
# JSON read aloud helps nobody.
CANNOT_HELP = "Sorry, I can't help with that."


def speakable(answer: str, said: str | None = None, prompt: Sequence[str] = ()) -> str:
    """`answer`, unless it is no answer to speak: a call written as text, the request said
    back ("call my sister" -> "call my sister"), a piece of the `prompt` copied ("Today is
    Wednesday ..." for "um", an example request such as "Order more coffee beans." for
    "order", which sounds done when nothing was), or a bare number for a question in words
    ("how many legs does a spider have" -> "1"). A 0.5B model does all of these; a plain
    "can't help" is better than any of them."""
    if looks_like_a_call(answer) or not any(c.isalpha() for c in answer):
        return CANNOT_HELP
    if _IDENTIFIER.search(answer):  # a tool's name ("track_parcel") is nothing to say aloud
        return CANNOT_HELP
    spoken = _unapostrophed(answer)
    # Short replies in the user's words ("Good night!") stay, unless the user asked for
    # something other than words said back ("I need to find a doctor" -> "doctor").
    if said is not None and set(spoken) <= set(_unapostrophed(said)) and (
            len(spoken) >= 3 or (asks_for_something(said) and not _SAY_BACK.search(said))):
        return CANNOT_HELP
    # Sentence by sentence: "Today is Wednesday ... The shop was busy." keeps the second.
    pieces = [" ".join(words(piece)) for piece in prompt]
    kept = [sentence for sentence in split_sentences(answer)
            if not _copied(words(sentence), pieces)]
    if not kept:
        return CANNOT_HELP
    return " ".join(kept)


def _unapostrophed(text: str) -> list[str]:
    """The words of `text`, "I'm" and "Im" alike: people type either."""
    return words(text.replace("'", "").replace("\u2019", ""))


def _copied(spoken: list[str], pieces: list[str]) -> bool:
    text = " ".join(spoken)
    return len(spoken) >= 3 and any(text in piece for piece in pieces)


def whole_sentences(text: str) -> str:
    """`text` up to its last complete sentence (all of it when none ends)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[: ends[-1]].rstrip() if ends else text.rstrip()
