"""CommandResponse and friends: constructors, fields, buttons, JSON."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pydantic import ValidationError

from jarvis.sdk import (
    CommandResponse,
    JarvisButton,
    PreRouteResult,
    RequestInformation,
    ValidationResult,
)


def test_success_response_speaks_its_message() -> None:
    response = CommandResponse.success_response({"result": 8, "message": "5 plus 3 is 8"})
    assert response.success is True
    assert response.wait_for_input is False
    assert response.message == "5 plus 3 is 8"
    assert response.context_data["result"] == 8
    assert response.actions is None and response.error_details is None
    assert response.llm_wording is False
    same = CommandResponse.success_response({"result": 8}, message="5 plus 3 is 8")
    assert same.context_data == response.context_data


def test_follow_up_response_keeps_the_conversation_open() -> None:
    response = CommandResponse.follow_up_response({"result": 16}, message="8 times 2 is 16")
    assert response.success and response.wait_for_input is True
    assert response.message == "8 times 2 is 16"


def test_error_response_carries_the_details_and_speaks_them() -> None:
    response = CommandResponse.error_response("The weather service is down")
    assert response.success is False
    assert response.error_details == "The weather service is down"
    assert response.message == "The weather service is down"
    kept = CommandResponse.error_response("failed", {"message": "Sorry, try later", "code": 503})
    assert kept.message == "Sorry, try later" and kept.context_data["code"] == 503


def test_llm_wording_flag() -> None:
    response = CommandResponse.success_response({"temps": [3, 5]}, llm_wording=True)
    assert response.llm_wording is True
    assert response.message is None  # nothing to speak as-is: the LLM words it


def test_validation_error_context_format() -> None:
    response = CommandResponse.validation_error([
        ValidationResult(success=False, param_name="entity_id", command_name="lights",
                         message="Device 'lamp' not found",
                         valid_values=["light.kitchen", "light.living_room_main"]),
        ValidationResult(success=False, param_name="level", message="too bright"),
        ValidationResult(success=True, param_name="room", suggested_value="kitchen"),
    ])
    assert response.success is False and response.is_validation_error
    assert response.context_data == {
        "_validation_error": True,
        "message": "Device 'lamp' not found; too bright",
        "errors": [
            {"param_name": "entity_id", "message": "Device 'lamp' not found",
             "valid_values": ["light.kitchen", "light.living_room_main"]},
            {"param_name": "level", "message": "too bright", "valid_values": None},
        ],
        "valid_values": {"entity_id": ["light.kitchen", "light.living_room_main"]},
    }
    assert response.error_details == "Device 'lamp' not found; too bright"


def test_buttons() -> None:
    buttons = [JarvisButton(text="Undo", action="undo", type="secondary"),
               JarvisButton(text="Delete all", action="delete_all", type="destructive"),
               JarvisButton(text="Open", action="open")]
    assert buttons[2].type == "primary"
    response = CommandResponse.success_response({"message": "Added"}, actions=buttons)
    assert [b.action for b in response.actions or []] == ["undo", "delete_all", "open"]


@pytest.mark.parametrize("bad", ["danger", "PRIMARY", ""])
def test_an_invalid_button_type_fails(bad: str) -> None:
    with pytest.raises(ValidationError):
        JarvisButton(text="x", action="y", type=bad)  # type: ignore[arg-type]


def test_everything_serialises_to_json() -> None:
    response = CommandResponse.follow_up_response(
        {"when": dt.datetime(2026, 1, 18, 5, tzinfo=dt.UTC), "day": dt.date(2026, 1, 18),
         "message": "Set"},
        actions=[JarvisButton(text="Cancel", action="cancel", type="destructive")],
    )
    dumped = response.model_dump(mode="json")
    text = json.dumps(dumped)
    assert json.loads(text)["context_data"]["when"] == "2026-01-18T05:00:00Z"
    assert dumped["actions"] == [{"text": "Cancel", "action": "cancel", "type": "destructive"}]
    assert dumped["wait_for_input"] is True
    assert CommandResponse.model_validate(json.loads(text)).actions == response.actions
    for model in (
        CommandResponse.validation_error([ValidationResult(success=False, param_name="x")]),
        CommandResponse.error_response("boom"),
        PreRouteResult(arguments={"action": "pause"}, spoken_response="Paused"),
        RequestInformation(voice_command="pause", timezone="UTC"),
        ValidationResult(success=True, param_name="x", suggested_value=[1, 2]),
    ):
        json.dumps(model.model_dump(mode="json"))


def test_pre_route_result_defaults() -> None:
    hit = PreRouteResult()
    assert hit.arguments == {} and hit.spoken_response is None
