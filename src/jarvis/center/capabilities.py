""""What can you do?" answered from the conversation's own tools.

The LLM answers such a question by listing what the tools are declared to do, which the
center refuses as a declaration written out; so the center answers it itself, from the
first clause of each tool's description. Whatever the tools are, the answer is theirs.
"""

from __future__ import annotations

import re

from jarvis.center.toolspec import ToolCatalog

__all__ = ["asks_what_i_can_do", "what_i_can_do"]

_ASKED = re.compile(
    r"^\W*(?:(?:hey |ok |okay |so |and )?(?:jarvis\W+)?)?"
    r"(?:what (?:can|could) you do(?: for me)?|what are you able to do|what do you do"
    r"|what (?:else )?can you help (?:me )?with|how can you help(?: me)?"
    r"|what are your (?:skills|capabilities|features|commands)"
    r"|what (?:commands|skills) do you (?:know|have)|help)\W*$",
    re.IGNORECASE)
# Asides a description opens with after its first clause: parentheses, quoted examples.
_ASIDES = re.compile(r"\s*\([^)]*\)|\s*'[^']*'")
# A clause this long is cut at a comma.
_LONGEST = 8
# A comma this early would cut a clause short ("find a quiet, cheap hotel").
_SHORTEST = 4


def asks_what_i_can_do(utterance: str) -> bool:
    """Whether `utterance` asks what the assistant can do ("what can you do?")."""
    return _ASKED.match(utterance.strip()) is not None


def what_i_can_do(catalog: ToolCatalog) -> str:
    """What the conversation's tools do, one clause each, as one spoken sentence."""
    clauses = [c for c in (_clause(spec.description or "") for spec in
                           catalog.tools.values()) if c]
    if not clauses:
        return "I have no commands to run here, but I can answer questions in words."
    return "Here is what I can do: " + "; ".join(clauses) + "."


def _clause(description: str) -> str:
    """The first clause of a description, lower-cased at its start: "Track a parcel (by
    its number) and say where it is. Use for ..." -> "track a parcel and say where it is"."""
    text = re.split(r"[:.;]\s|[:.;]$", _ASIDES.sub("", description).strip(), maxsplit=1)[0]
    words = text.split()
    if len(words) > _LONGEST:
        for cut in (m.start() for m in re.finditer(",", text)):
            if len(text[:cut].split()) >= _SHORTEST:
                text = text[:cut]
                break
    text = text.strip().rstrip(",")
    return text[:1].lower() + text[1:] if text[1:2].islower() or len(text) == 1 else text
