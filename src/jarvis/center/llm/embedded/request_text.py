"""What a request to the embedded model holds as text: the user's words, everything said,
and what the system prompt quotes (which an answer or a value must not copy).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jarvis.center.grounding import is_said
from jarvis.center.llm.base import LLMRequest
from jarvis.center.llm.embedded.grammar import tool_name

# A string the prompt quotes: an example's request or one of its values.
_QUOTED = re.compile(r'"([^"\\]{3,})"')

# An example request in the compact prompt: `"where is my parcel" -> track_parcel {..}`.
_EXAMPLE_REQUEST = re.compile(r'^"(.+)" -> (?!say:)', re.MULTILINE)


def _system_texts(request: LLMRequest) -> list[str]:
    """The texts of the request's system messages, in order (the first is the prompt)."""
    return [m["content"] for m in request.messages
            if m.get("role") == "system" and isinstance(m.get("content"), str)]


def not_to_copy(request: LLMRequest) -> list[str]:
    """What an answer must not copy from the prompt: the example requests of the first
    system message (its example answers are fine to say) and the messages after it (the
    day's date and clock)."""
    system = _system_texts(request)
    if not system:
        return []
    return [*_EXAMPLE_REQUEST.findall(system[0]), *system[1:]]


def said_text(request: LLMRequest) -> str:
    """Everything said in the conversation but the system prompt: user turns, answers and
    tool results (a follow-up such as "now times 3" uses an earlier result)."""
    return "\n".join(str(m.get("content")) for m in request.messages
                     if m.get("role") != "system" and isinstance(m.get("content"), str))


def utterance(request: LLMRequest) -> str | None:
    """What the user just said, when the reply answers it (not a tool result)."""
    last = request.messages[-1] if request.messages else {}
    content = last.get("content")
    return content if last.get("role") == "user" and isinstance(content, str) else None


def only_tool(request: LLMRequest) -> list[dict[str, Any]]:
    """The tools the name is chosen from: the one `only_tool` names, else all of them."""
    chosen = [t for t in request.tools if tool_name(t) == request.only_tool]
    return chosen or request.tools


def user_turns(request: LLMRequest) -> str | None:
    """Everything the user said in the conversation, when the reply answers the user: a
    value said in the request stays said after the user answers a question about another
    one ("find a cheap restaurant" ... "italian")."""
    if utterance(request) is None:
        return None
    # Joined as sentences, so each turn is a clause of its own.
    return ". ".join(str(m["content"]) for m in request.messages
                     if m.get("role") == "user" and isinstance(m.get("content"), str))


def example_copy_check(request: LLMRequest, said: str) -> Callable[[str], bool]:
    """A check for the decoder: whether a free-text value is one the system prompt quotes
    (an example's "the blue parcel") and shares no meaningful word with what was
    `said`."""
    system = next(iter(_system_texts(request)), "")
    quoted = {q.lower() for q in _QUOTED.findall(system)}
    return lambda value: value.lower() in quoted and not is_said(value, said)


def first_utterance(request: LLMRequest) -> bool:
    """Whether the reply answers the conversation's first user message."""
    roles = [m.get("role") for m in request.messages]
    return utterance(request) is not None and roles.count("user") == 1 and not (
        {"assistant", "tool"} & set(roles))
