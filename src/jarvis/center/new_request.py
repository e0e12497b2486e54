"""An answer to a question that is a request of its own.

Asked "What city should I use?", a user may move on instead of answering: "track my
parcel please". Read as the city, the request is lost; the center takes it as a new request
instead when it is put as one (an order, a question, a want) and means another tool
more than the one asked about. An answer that is a value ("Paris", "20 minutes",
"tomorrow at 9") is no request, whatever it is near in meaning.
"""

from __future__ import annotations

from jarvis.center.acting import declared_actions
from jarvis.center.claims import asks_for_something
from jarvis.center.evocation import EVOKED_BY_MEANING
from jarvis.center.keywords import (
    DOING_VERBS,
    LOOKUP_VERBS,
    asks_a_question,
    opens_with,
    without_lead_ins,
)
from jarvis.center.toolspec import ToolSpec
from jarvis.center.turn import Turn

__all__ = ["is_a_new_request"]


def is_a_new_request(turn: Turn, answer: str, asked_tool: str | None) -> bool:
    """Whether `answer`, given to a question about `asked_tool`, is a new request: put as
    one, and nearest in meaning to another tool, which it means (`EVOKED_BY_MEANING`)."""
    if asked_tool is None:
        return False
    related = turn.related(answer)
    if not related:
        return False
    nearest, score = max(related.items(), key=lambda kv: kv[1])
    if nearest == asked_tool or score < EVOKED_BY_MEANING:
        return False
    return score > related.get(asked_tool, 0.0) and _put_as_a_request(
        answer, turn.catalog.tools[nearest])


def _put_as_a_request(answer: str, spec: ToolSpec) -> bool:
    """Whether `answer` asks for something: a question, a want, or an order that opens
    with a verb of doing or looking up, or with what `spec` declares it does."""
    heard = without_lead_ins(answer)
    if not heard:
        return False
    named = spec.name.split("_")[0].lower()
    return (asks_a_question(answer) or asks_for_something(answer)
            or heard[0] in DOING_VERBS | LOOKUP_VERBS or heard[0] == named
            or opens_with(answer, declared_actions(spec)))
