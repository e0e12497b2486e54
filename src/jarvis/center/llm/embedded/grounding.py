"""Optional free-text arguments must come from what the user said.

A 0.5B model fills optional parameters with plausible inventions: "what time is it"
becomes `get_current_time {"location": "Tokyo"}` because a prompt example named Tokyo. A
free-text value that shares no word with the utterance was not said, so it is dropped
(the command's default applies); a required one is left for validation to judge.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz import fuzz

from jarvis.center.keywords import words
from jarvis.center.llm.embedded.grammar import arguments_schema

# A value word counts as said when this similar to a word of the utterance (plurals, ASR).
_SIMILAR = 80.0


def _said(word: str, heard: list[str]) -> bool:
    return any(word == h or fuzz.ratio(word, h, score_cutoff=_SIMILAR) for h in heard)


def is_said(value: str, utterance: str) -> bool:
    """Whether any word of `value` (or a close one) is in `utterance`."""
    value_words = words(value)
    if not value_words:
        return True  # nothing to check ("" or punctuation): not an invention
    heard = words(utterance)
    return any(_said(w, heard) for w in value_words)


def unsaid_optional_strings(
    arguments: dict[str, Any], tool: dict[str, Any], utterance: str
) -> list[str]:
    """Keys of optional free-text arguments (or lists of them) the user never said."""
    schema = arguments_schema(tool)
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    unsaid = []
    for key, value in arguments.items():
        sub = props.get(key)
        if key in required or not isinstance(sub, dict):
            continue
        if _free_text(sub) and isinstance(value, str):
            texts = [value]
        elif sub.get("type") == "array" and _free_text(sub.get("items") or {}) and value:
            texts = [v for v in value if isinstance(v, str)]  # ["milk", "eggs"] nobody said
        else:
            continue
        if texts and not any(is_said(text, utterance) for text in texts):
            unsaid.append(key)
    return unsaid


def _free_text(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and not schema.get("enum") and not schema.get("format")
