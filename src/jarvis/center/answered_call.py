"""The call after an answer keeps what the user gave before the question.

"Book a table at Luigi's" ran as a call without a time; the node refused it and the
user was asked "What time should I use?". Given "at 7 pm", the model wrote the call
anew and put the answer into the restaurant's name as well. The values of the refused
call were checked against what the user said when it was made, and the answer was for
one parameter only: the new call of that tool keeps every other value the refused call
held, and those count as said (they are carried, as in a refinement).
"""

from __future__ import annotations

import json

from jarvis.center.llm.base import LLMToolCall
from jarvis.center.turn import Turn, parsed

__all__ = ["keep_given"]


def keep_given(turn: Turn, calls: list[LLMToolCall]) -> list[LLMToolCall]:
    """`calls`, each one of the given call's tool holding the given values (all but the
    answered one); the keys kept are recorded in `turn.carried`."""
    given = turn.given
    if given is None:
        return calls
    kept = {k: v for k, v in given.arguments.items() if k != given.answered}
    out: list[LLMToolCall] = []
    for call in calls:
        arguments = parsed(call) if call.name == given.tool else None
        if arguments is None or not kept:
            out.append(call)
            continue
        turn.carried[call.id] = turn.carried.get(call.id, frozenset()) | frozenset(kept)
        out.append(LLMToolCall(call.id, call.name, json.dumps({**arguments, **kept})))
    return out
