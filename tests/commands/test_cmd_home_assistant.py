"""control_device against a fake Home Assistant: a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import logging

import pytest
from command_helpers import LocalServer, Recorded, make_context, request

from jarvis.commands import home_assistant
from jarvis.commands.home_assistant import ControlDeviceCommand
from jarvis.sdk import MissingSecretsError

TOKEN = "test-token-3f9c"
STATES = [
    {"entity_id": "light.kitchen", "state": "off",
     "attributes": {"friendly_name": "Kitchen Light", "brightness": None}},
    {"entity_id": "fan.kitchen", "state": "off", "attributes": {"friendly_name": "Kitchen Fan"}},
    {"entity_id": "light.living_room_lamp", "state": "on",
     "attributes": {"friendly_name": "Living Room Lamp"}},
    {"entity_id": "light.bedroom_ceiling", "state": "off",
     "attributes": {"friendly_name": "Bedroom Ceiling Light"}},
    {"entity_id": "lock.front_door", "state": "locked",
     "attributes": {"friendly_name": "Front Door"}},
    {"entity_id": "switch.coffee_maker", "state": "off",
     "attributes": {"friendly_name": "Coffee Maker"}},
    {"entity_id": "cover.garage_door", "state": "closed",
     "attributes": {"friendly_name": "Garage Door"}},
    {"entity_id": "sensor.outside_temperature", "state": "4.2",
     "attributes": {"friendly_name": "Outside Temperature"}},
    {"entity_id": "sun.sun", "state": "below_horizon", "attributes": {"friendly_name": "Sun"}},
]


def _authorized(record: Recorded) -> bool:
    return record.headers.get("authorization") == f"Bearer {TOKEN}"


@pytest.fixture
def hass(local_server: LocalServer) -> LocalServer:
    home_assistant._cache.clear()

    def states(record: Recorded) -> tuple[int, object]:
        return (200, STATES) if _authorized(record) else (401, {"message": "Unauthorized"})

    def service(record: Recorded) -> tuple[int, object]:
        return (200, []) if _authorized(record) else (401, {"message": "Unauthorized"})

    local_server.route("GET", "/api/states", states)
    local_server.route("POST", "/api/services/*", service)
    return local_server


def _cmd(server: LocalServer, token: str = TOKEN) -> ControlDeviceCommand:
    secrets = {"HOME_ASSISTANT_URL": server.url + "/", "HOME_ASSISTANT_TOKEN": token}
    return ControlDeviceCommand().bind(make_context(secrets))


def _service_calls(server: LocalServer) -> list[tuple[str, dict]]:
    return [(r.path, r.body) for r in server.requests if r.method == "POST"]


def test_missing_secrets_raise_before_anything_runs(hass: LocalServer) -> None:
    cmd = ControlDeviceCommand().bind(make_context({"HOME_ASSISTANT_URL": hass.url}))
    with pytest.raises(MissingSecretsError) as info:
        cmd.execute(request(), action="turn_on", entity="kitchen light")
    assert info.value.missing == ["HOME_ASSISTANT_TOKEN"]
    assert hass.requests == []


def test_turn_on_by_friendly_name(hass: LocalServer) -> None:
    response = _cmd(hass).execute(request(), action="turn_on", entity="Kitchen Light")
    assert response.success, response.message
    assert response.message == "Turned on the Kitchen Light."
    assert _service_calls(hass) == [("/api/services/light/turn_on",
                                     {"entity_id": "light.kitchen"})]


def test_fuzzy_suggestion_reaches_run(hass: LocalServer) -> None:
    response = _cmd(hass).execute(request(), action="turn_off", entity="bedroom light")
    assert response.success and response.context_data["entity_id"] == "light.bedroom_ceiling"
    assert _service_calls(hass) == [("/api/services/light/turn_off",
                                     {"entity_id": "light.bedroom_ceiling"})]


def test_validate_call_suggests_entity_id(hass: LocalServer) -> None:
    results = _cmd(hass).validate_call(action="turn_on", entity="living room lamps")
    (result,) = results
    assert result.success and result.suggested_value == "light.living_room_lamp"


def test_unknown_entity_is_validation_error_with_names(hass: LocalServer) -> None:
    response = _cmd(hass).execute(request(), action="turn_on", entity="attic light")
    assert response.is_validation_error
    names = response.context_data["valid_values"]["entity"]
    assert "Kitchen Light" in names and "Front Door" in names
    assert "Outside Temperature" not in names and "Sun" not in names
    assert _service_calls(hass) == []


def test_states_are_cached(hass: LocalServer) -> None:
    cmd = _cmd(hass)
    cmd.execute(request(), action="turn_on", entity="kitchen light")
    cmd.execute(request(), action="turn_off", entity="kitchen light")
    assert sum(1 for r in hass.requests if r.path == "/api/states") == 1


def test_brightness_lock_and_cover(hass: LocalServer) -> None:
    cmd = _cmd(hass)
    args = cmd.post_process_tool_call({"action": "turn_on", "entity": "the kitchen light",
                                       "brightness": "40%"}, "kitchen light to 40 percent")
    assert args == {"action": "set_brightness", "entity": "kitchen light", "brightness": 40}
    assert cmd.execute(request(), **args).message == "Set the Kitchen Light to 40 percent."
    assert cmd.execute(request(), action="lock", entity="front door").message == (
        "Locked the Front Door.")
    assert cmd.execute(request(), action="turn_on", entity="garage door").success
    assert _service_calls(hass) == [
        ("/api/services/light/turn_on", {"entity_id": "light.kitchen", "brightness_pct": 40}),
        ("/api/services/lock/lock", {"entity_id": "lock.front_door"}),
        ("/api/services/cover/open_cover", {"entity_id": "cover.garage_door"}),
    ]


def test_invalid_combinations(hass: LocalServer) -> None:
    cmd = _cmd(hass)
    not_lock = cmd.execute(request(), action="lock", entity="Coffee Maker")
    assert not_lock.is_validation_error
    assert not_lock.context_data["valid_values"]["entity"] == ["Front Door"]
    too_bright = cmd.execute(request(), action="set_brightness", entity="Kitchen Light",
                             brightness=150)
    assert too_bright.is_validation_error
    no_level = cmd.execute(request(), action="set_brightness", entity="Kitchen Light")
    assert no_level.context_data["errors"][0]["param_name"] == "brightness"
    bad_action = cmd.execute(request(), action="explode", entity="Kitchen Light")
    assert "turn_on" in bad_action.context_data["valid_values"]["action"]
    assert _service_calls(hass) == []


def test_post_process_actions() -> None:
    cmd = ControlDeviceCommand()
    assert cmd.post_process_tool_call({"action": "on", "entity": "x"}, "")["action"] == "turn_on"
    assert cmd.post_process_tool_call({"action": "Switch Off", "entity": "x"}, "")[
        "action"] == "turn_off"


def test_bad_token_is_spoken_and_never_logged(hass: LocalServer,
                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    response = _cmd(hass, token="wrong-token-77").execute(request(), action="turn_on",
                                                          entity="kitchen light")
    assert not response.success
    assert "refused the access token" in response.message
    assert "wrong-token-77" not in caplog.text
    assert "wrong-token-77" not in response.model_dump_json()


def test_home_assistant_down_is_spoken(closed_port_url: str) -> None:
    home_assistant._cache.clear()
    cmd = ControlDeviceCommand().bind(make_context({"HOME_ASSISTANT_URL": closed_port_url,
                                                   "HOME_ASSISTANT_TOKEN": TOKEN}))
    response = cmd.execute(request(), action="turn_on", entity="kitchen light")
    assert not response.success
    assert response.message == "I couldn't reach Home Assistant."
