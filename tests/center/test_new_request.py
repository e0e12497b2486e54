"""An answer to a question that is a new request (real sentence encoder, scripted LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from center_helpers import conversation_id, function_tool

from jarvis.center.engine import Engine
from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.center.meaning import Relatedness
from jarvis.center.store import Store
from jarvis.protocol import ContinueRequest, ConversationStartRequest, VoiceCommandRequest

FIND_BUS = function_tool("find_bus", {"from_city": {"type": "string"}}, ["from_city"],
                         "Find a bus journey for a given pair of cities")
ROLL_DICE = function_tool("roll_dice", {"sides": {"type": "integer"}}, [],
                          "Roll dice with a given number of sides")


def _asked_then_answered(tmp_path: Path, relatedness: Relatedness, answer: str,
                         second: Any) -> tuple[Any, ScriptedBackend, Store, str]:
    """'find me a bus' (its city asked for), then `answer`; the LLM replies `second`."""
    backend = ScriptedBackend([tool_call("find_bus"), second])
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    engine = Engine(store, backend, relatedness=relatedness)
    cid = conversation_id()
    engine.start(ConversationStartRequest(conversation_id=cid,
                                          client_tools=[FIND_BUS, ROLL_DICE]))
    asked = engine.command(VoiceCommandRequest(conversation_id=cid,
                                               voice_command="find me a bus"))
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request is not None
    assert asked.validation_request.parameter_name == "from_city"
    reply = engine.continue_(ContinueRequest(conversation_id=cid, validation_response=answer))
    return reply, backend, store, cid


def test_a_request_in_place_of_an_answer_is_taken_as_a_request(
        tmp_path: Path, relatedness: Relatedness) -> None:
    reply, backend, store, cid = _asked_then_answered(
        tmp_path, relatedness, "roll a 20 sided die", tool_call("roll_dice", sides=20))
    try:
        assert reply.stop_reason == "tool_calls"
        assert [c.function.name for c in reply.tool_calls or []] == ["roll_dice"]
        assert reply.request_information.voice_command == "roll a 20 sided die"
        # The conversation's request is the new one, and its question is not forced on it.
        record = store.load(cid)
        assert record is not None and record.voice_command == "roll a 20 sided die"
        assert backend.requests[-1].answers is None
        assert store.turns(cid)[-1]["trace"]["answered_with_a_request"] is True
    finally:
        store.close()


def test_a_value_given_as_the_answer_stays_the_answer(
        tmp_path: Path, relatedness: Relatedness) -> None:
    reply, backend, store, cid = _asked_then_answered(
        tmp_path, relatedness, "from Fresno", tool_call("find_bus", from_city="Fresno"))
    try:
        assert [c.function.name for c in reply.tool_calls or []] == ["find_bus"]
        assert reply.request_information.voice_command == "find me a bus"
        # The backend is told which value the answer is for.
        assert backend.requests[-1].answers == ("find_bus", "from_city")
        assert "answered_with_a_request" not in store.turns(cid)[-1]["trace"]
    finally:
        store.close()
