"""Words where a call belongs, and calls where words belong.

An LLM answer in words may stand in for a tool's work: it promises the action, reports a
result nobody gave, asks back what a tool's parameters would, or writes out a tool's
declaration (claims.py says how each reads). And a call may answer nothing the user
asked for: a remark on how something was, a question about an amount or a method, a
question for information that every call acts on instead.
"""

from __future__ import annotations

import re
from typing import Any

from jarvis.center.acting import acts, declared_actions
from jarvis.center.claims import (
    asks_for_something,
    asks_for_things,
    asks_the_user_back,
    declines,
    echoes_a_declaration,
    lists_a_tools_words,
    offers_help,
    promises_a_deed,
    promises_action,
    restates_an_example,
    settles_the_users_question,
    states_tool_facts,
    unsaid_specifics,
    writes_a_call,
)
from jarvis.center.evocation import EVOKED_BY_MEANING
from jarvis.center.grounding import derived_numbers
from jarvis.center.keywords import asks_a_question, asks_how_much, asks_how_to, opens_with
from jarvis.center.llm.base import LLMReply, LLMToolCall
from jarvis.center.remarks import only_remarks
from jarvis.center.turn import Turn, parsed, said_in
from jarvis.center.unsaid_values import AMOUNT_KINDS, lacks_a_value

__all__ = ["echoes", "not_asked_for", "stands_in_for_a_tool", "words_for_a_call"]

# A request a description quotes: "Use for 'what is 5 plus 3'".
_QUOTED_REQUEST = re.compile(r"'([^']{6,80})'")


def words_for_a_call(turn: Turn, reply: LLMReply,
                     node_errors: list[dict[str, Any]] | None) -> bool:
    """Whether an answer in words stands where a call of a tool the request means
    (relatedness, see center/meaning) belongs: it promises the action ("Yes, I can call
    you a cab now."), settles a question about the user's things or a moment that only a
    tool can ("Yes, my rice is ready."), or, to a request for something done or found
    (an order for what a tool is declared to do: "play hey jude", a question after
    things to find: "what are some cool places to visit?" too), gives a result nobody
    said ("Here are some cool places: 1. Paris ..."), asks the user back ("Which city
    are you leaving from?"), as the tool's parameters would, offers help as if nothing
    were asked ("How can I assist you today?"), declines what a tool is there for
    ("Sorry, I can't help with that.") or writes out a tool's declaration ("Find a
    restaurant of a particular cuisine"). Specifics alone are no sign of a call: an
    answer to a question about the world has them too, and such a question can be near a
    tool in meaning. Not after a node's validation error or a server tool's result."""
    text = (reply.content or "").strip()
    if not text or node_errors or turn.trace["server_tools"] or not turn.catalog.tools:
        return False
    if max(turn.related(turn.voice_command).values(), default=0.0) < EVOKED_BY_MEANING:
        return False
    if promises_action(text) or settles_the_users_question(text, turn.voice_command):
        return True
    said = turn.voice_command or ""
    return (asks_for_something(said) or asks_for_things(said) or _orders_a_tool(turn)) and (
        asks_the_user_back(text) or offers_help(text) or declines(text)
        or states_tool_facts(text) or bool(unsaid_specifics(text, said_in(turn)))
        or echoes(turn, text))


def _orders_a_tool(turn: Turn) -> bool:
    """Whether the request opens with what a tool it means is declared to do ("play
    hey jude" to a player whose action `play` is, "book a table" to a tool that
    reserves one), an order put without "can you" or "I want"."""
    said = turn.voice_command or ""
    if said.rstrip().endswith("?"):
        return False
    related = turn.related(said)
    return any(opens_with(said, declared_actions(spec))
               for name, spec in turn.catalog.tools.items()
               if related.get(name, 0.0) >= EVOKED_BY_MEANING)


def stands_in_for_a_tool(turn: Turn, text: str) -> bool:
    """Whether an answer in words to a request that means a tool gives specifics nobody
    said or promises the action, or one to any request for something done or found
    gives specifics nobody said or promises an act or a search (see claims.py): words
    in place of a tool's result. Meaning, not a shared word: among twenty tools some
    word of some declaration is in nearly every question ("what's the longest river
    in africa")."""
    specifics = unsaid_specifics(text, said_in(turn))
    if (specifics or promises_a_deed(text)) and asks_for_something(turn.voice_command):
        # A made-up result of a request, served by a tool or not, or a promise that no
        # call keeps ("Yes, I can call a cab for you.").
        return True
    if settles_the_users_question(text, turn.voice_command):
        return True  # "Yes, my rice is ready.": a state nobody reported
    if not (promises_action(text) or specifics):
        return False
    related = turn.related(turn.voice_command).values()
    return max(related, default=0.0) >= EVOKED_BY_MEANING


def echoes(turn: Turn, text: str) -> bool:
    """Whether an answer writes out the declaration of a tool of the turn, a call of one,
    a request its examples or description quote, or its keywords (see claims.py), or
    asks again a question asked earlier in the conversation (a small model copies the
    last question it sees instead of answering the new request)."""
    tools = turn.catalog.tools
    keys = {name: list(spec.params) for name, spec in tools.items()}
    return _asked_before(turn, text) or writes_a_call(text, keys) or echoes_a_declaration(
        text, [(spec.name, spec.description) for spec in tools.values()],
        turn.voice_command or "",
    ) or restates_an_example(text, _example_requests(turn), turn.voice_command or "") or (
        lists_a_tools_words(text, [spec.keywords for spec in tools.values()]))


def _asked_before(turn: Turn, text: str) -> bool:
    """Whether `text` is a question an earlier assistant turn of the conversation asked."""
    asked = text.strip().lower()
    return asked.endswith("?") and any(
        m.get("role") == "assistant" and str(m.get("content") or "").strip().lower() == asked
        for m in turn.history or [])


def _example_requests(turn: Turn) -> list[str]:
    """The requests the tools' examples give, and those their descriptions quote."""
    return [request for spec in turn.catalog.tools.values()
            for request in (*spec.example_requests,
                            *_QUOTED_REQUEST.findall(spec.description or ""))]


def not_asked_for(turn: Turn, calls: list[LLMToolCall]) -> str | None:
    """The trace key saying why `calls` answer nothing the user asked for: a remark on
    how something was (remarks.py), a question for an amount that says no number ("a
    cup" says one, "a blue whale" none) and whose call lacks an amount it needs ("how
    many miles is it from London to Leeds" asks for the distance, it gives none), or a
    question for information (keywords.asks_a_question) that every call acts on
    instead (acting.py)."""
    if not calls:
        return None
    said = turn.voice_command or ""
    if only_remarks(said):
        return "remark_not_acted_on"
    if (asks_how_much(said) and not derived_numbers(said)
            and any(lacks_a_value(turn, c, AMOUNT_KINDS) for c in calls)):
        return "amount_asked_about"
    if asks_how_to(said) and any(lacks_a_value(turn, c) for c in calls):
        return "method_asked_about"
    if not asks_a_question(said):
        return None
    for call in calls:
        spec, arguments = turn.catalog.tools.get(call.name), parsed(call)
        if spec is None or arguments is None or not acts(spec, arguments):
            return None
    return "question_not_acted_on"
