"""The full node <-> center loop over real HTTP, with a scripted LLM (protocol tests).

The center is the real FastAPI app served by uvicorn on a loopback port; only the LLM is
scripted, so each test states exactly which tool calls "the model" makes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest
from node_helpers import (
    Calculator,
    CountingTransport,
    CurrentTime,
    Forecast,
    HomeAssistantWeather,
    PauseMusic,
    Recording,
    Thermometer,
)

from jarvis.center.llm.base import LLMReply, LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call, tool_calls
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.node import (
    CommandExecutionService,
    JarvisCommandCenterClient,
    NodeSettings,
    NodeStore,
)
from jarvis.node.registry import CommandRegistry
from jarvis.node.runtime import command_context
from jarvis.protocol import ValidationRequest
from jarvis.sdk import RequestInformation, ValidationResult
from jarvis.sdk.parameter import JarvisParameter


class Harness:
    def __init__(self, tmp: Path, data_dir: Path) -> None:
        self.tmp = tmp
        self.data_dir = data_dir
        self.servers: list[CenterServer] = []
        self.clients: list[JarvisCommandCenterClient] = []
        self.transport = CountingTransport()
        self.backend: ScriptedBackend | None = None

    def start(
        self,
        replies: list[LLMReply | Callable[[LLMRequest], LLMReply]],
        commands: list[Recording],
        **center_settings: Any,
    ) -> CommandExecutionService:
        self.backend = ScriptedBackend(replies)
        settings = CenterSettings(data_dir=self.tmp / "center", log_level="warning",
                                  **center_settings)
        server = CenterServer(settings, self.backend).start()
        self.servers.append(server)
        client = JarvisCommandCenterClient(server.url, transport=self.transport,
                                           key=server.add_node("node", replace=True))
        self.clients.append(client)
        node = NodeSettings(data_dir=self.data_dir, timezone="Europe/Paris",
                            node_id="kitchen-pi", room="kitchen")
        self.store = NodeStore(self.data_dir)
        registry = CommandRegistry.from_commands(commands, command_context(node, self.store))
        return CommandExecutionService(registry, client, node)

    def close(self) -> None:
        for client in self.clients:
            client.close()
        for server in self.servers:
            server.stop()


@pytest.fixture
def harness(tmp_path: Path, data_dir: Path) -> Iterator[Harness]:
    h = Harness(tmp_path, data_dir)
    yield h
    h.close()


def _tool_messages(request: LLMRequest) -> list[dict[str, Any]]:
    return [m for m in request.messages if m.get("role") == "tool"]


def test_pre_route_runs_locally_and_never_contacts_the_center(harness: Harness) -> None:
    music = PauseMusic()
    service = harness.start([], [Forecast(), music])

    result = service.process_voice_command("Pause the music")

    assert result.message == "Paused."
    assert result.pre_routed and result.stop_reason == "complete"
    assert result.conversation_id is None
    assert [kwargs for _, kwargs in music.calls] == [{"action": "pause"}]
    assert result.tool_calls[0].name == "control_music"
    assert harness.transport.paths == []
    assert harness.backend is not None and harness.backend.requests == []


def test_dates_reach_run_as_aware_datetimes(harness: Harness) -> None:
    forecast = Forecast()
    service = harness.start(
        [tool_call("get_forecast", city="Lyon",
                   dates=["2025-03-14T09:00:00+01:00", "2025-03-15T09:00:00+01:00"])],
        [forecast, PauseMusic()],
    )

    result = service.process_voice_command("weather in Lyon on Friday and Saturday")

    [(info, kwargs)] = forecast.calls
    assert kwargs["city"] == "Lyon"
    assert all(isinstance(d, datetime) and d.tzinfo is not None for d in kwargs["dates"])
    assert [d.day for d in kwargs["dates"]] == [14, 15]
    assert result.message == "Sunny in Lyon on Friday 14 March, Saturday 15 March."
    assert result.stop_reason == "complete"
    assert info.conversation_id == result.conversation_id
    assert (info.node_id, info.room, info.timezone) == ("kitchen-pi", "kitchen", "Europe/Paris")
    assert info.tool_call_id == result.tool_calls[0].tool_call_id
    assert info.voice_command == "weather in Lyon on Friday and Saturday"
    # the node registered its tools first, with both the rich and the OpenAI schemas
    assert harness.transport.paths == [
        "/api/v0/conversation/start", "/api/v0/voice/command", "/api/v0/voice/command/continue",
    ]
    tools = {t["function"]["name"] for t in harness.backend.requests[0].tools}
    assert {"get_forecast", "control_music"} <= tools


def test_a_tool_that_raises_becomes_an_error_the_llm_sees(harness: Harness) -> None:
    def explain(request: LLMRequest) -> LLMReply:
        [tool] = _tool_messages(request)
        assert "sensor offline" in tool["content"]
        return text("The thermometer is not answering right now.")

    service = harness.start([tool_call("read_thermometer"), explain], [Thermometer()],
                            direct_tool_message=False)

    result = service.process_voice_command("what does the room thermometer say")

    assert result.message == "The thermometer is not answering right now."
    assert result.stop_reason == "complete"
    [record] = result.tool_calls
    assert not record.success and record.error_type == "RuntimeError"
    assert "sensor offline" in (record.message or "")
    assert harness.backend.remaining == 0


def test_missing_secret_names_the_setting_and_the_conversation_goes_on(harness: Harness) -> None:
    ha = HomeAssistantWeather()
    service = harness.start(
        [tool_call("ha_weather"), tool_call("ha_weather")], [ha, PauseMusic()]
    )

    first = service.process_voice_command("what does home assistant say about the weather")

    assert first.stop_reason == "complete"
    assert "HOME_ASSISTANT_TOKEN" in first.message
    assert "jarvis secrets set HOME_ASSISTANT_TOKEN" in first.message
    assert ha.calls == []
    assert first.tool_calls[0].error_type == "MissingSecretsError"

    harness.store.secrets.set_secret("HOME_ASSISTANT_TOKEN", "abcdefghij")
    # Each utterance starts a conversation: the request names the command again.
    second = service.process_voice_command("and what does home assistant say now?")
    assert second.message == "HA answered with a 10-char token"
    assert "abcdefghij" not in json.dumps(second.to_dict())


class RoomLight(Recording):
    command_name = "set_room_light"
    description = "Turns on the light in a room."
    parameters: ClassVar[list[JarvisParameter]] = [JarvisParameter("room", "string", required=True)]
    known: ClassVar[list[str]] = ["kitchen", "bedroom"]

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        if kwargs.get("room") not in self.known:
            results.append(ValidationResult(
                success=False, param_name="room", command_name=self.command_name,
                message=f"No room called {kwargs.get('room')!r}", valid_values=self.known))
        return results

    def answer(self, **kwargs: Any) -> Any:
        from jarvis.sdk import CommandResponse

        return CommandResponse.success_response(message=f"The {kwargs['room']} light is on.")


def test_validation_error_lets_the_llm_retry(harness: Harness) -> None:
    def retry(request: LLMRequest) -> LLMReply:
        [tool] = _tool_messages(request)
        assert "kitchen" in tool["content"] and "bedroom" in tool["content"]  # valid values
        return tool_call("set_room_light", room="kitchen")

    light = RoomLight()
    service = harness.start([tool_call("set_room_light", room="cuisine"), retry], [light])

    result = service.process_voice_command("turn on the cuisine light")

    assert result.message == "The kitchen light is on."
    assert [r.success for r in result.tool_calls] == [False, True]
    assert result.tool_calls[0].output["context"]["_validation_error"] is True
    assert [kwargs for _, kwargs in light.calls] == [{"room": "kitchen"}]


def test_validation_required_is_answered_by_the_handler(harness: Harness) -> None:
    asked: list[ValidationRequest] = []

    def handler(request: ValidationRequest) -> str:
        asked.append(request)
        return "Bedroom"

    def after_answer(request: LLMRequest) -> LLMReply:
        users = [m["content"] for m in request.messages if m.get("role") == "user"]
        assert users[-1] == "Bedroom"
        return tool_call("set_room_light", room="bedroom")

    light = RoomLight()
    service = harness.start(
        [tool_call("ask_user", question="Which room?", options=["kitchen", "bedroom"]),
         after_answer],
        [light],
    )

    result = service.process_voice_command("turn on the light", validation_handler=handler)

    assert [(q.question, q.options) for q in asked] == [("Which room?", ["kitchen", "bedroom"])]
    assert result.message == "The bedroom light is on."
    assert result.round_trips == 3


def test_two_tools_in_one_turn_send_both_results_together(harness: Harness) -> None:
    def word(request: LLMRequest) -> LLMReply:
        contents = [m["content"] for m in _tool_messages(request)]
        assert len(contents) == 2
        return text(" ".join(json.loads(c)["message"] for c in contents))

    forecast, clock = Forecast(), CurrentTime()
    service = harness.start(
        [tool_calls(("get_forecast", {"city": "Nice", "dates": ["2025-03-14T09:00:00+01:00"]}),
                    ("tell_time", {})),
         word],
        [forecast, clock],
    )

    result = service.process_voice_command("weather in Nice on Friday and the time")

    assert result.message == "Sunny in Nice on Friday 14 March. It is noon."
    assert [r.name for r in result.tool_calls] == ["get_forecast", "tell_time"]
    assert len(forecast.calls) == len(clock.calls) == 1
    # one continue request carried both results
    assert harness.transport.paths.count("/api/v0/voice/command/continue") == 1


def test_wait_for_input_keeps_the_conversation_for_a_follow_up(harness: Harness) -> None:
    def follow_up(request: LLMRequest) -> LLMReply:
        history = json.dumps(request.messages)
        assert "What is 5 plus 3" in history and "That makes 8" in history
        return tool_call("calc_add", a=8, b=2)

    calc = Calculator()
    service = harness.start([tool_call("calc_add", a=5, b=3), follow_up], [calc])

    first = service.process_voice_command("What is 5 plus 3")
    assert first.message == "That makes 8." and first.wait_for_input
    assert service.pending_conversation_id == first.conversation_id

    second = service.process_voice_command("now add 2 to that")
    assert second.message == "That makes 10."
    assert second.conversation_id == first.conversation_id
    # the follow-up went straight to the open conversation, with no new registration
    assert harness.transport.paths.count("/api/v0/conversation/start") == 1


class Lamp(Recording):
    command_name = "set_lamp"
    description = "Set a lamp's brightness."
    parameters: ClassVar[list[JarvisParameter]] = [
        JarvisParameter("lamp", "string", required=True),
        JarvisParameter("brightness", "int", required=True, refinable=True)]


def test_a_refinable_command_keeps_the_conversation_for_a_change(harness: Harness) -> None:
    lamp = Lamp()
    service = harness.start([tool_call("set_lamp", lamp="desk", brightness=40),
                             tool_call("set_lamp", brightness=70)], [lamp, CurrentTime()])
    first = service.process_voice_command("set the desk lamp to 40")
    # No listening without the wake word ...
    assert not first.wait_for_input and not service.awaiting_follow_up
    assert service.pending_conversation_id == first.conversation_id  # ... but the same talk
    second = service.process_voice_command("actually make it 70")
    assert second.conversation_id == first.conversation_id
    assert [kwargs for _, kwargs in lamp.calls] == [{"lamp": "desk", "brightness": 40},
                                                    {"lamp": "desk", "brightness": 70}]
    # A command without refinable values starts the next utterance afresh, as before.
    harness.backend.add(tool_call("tell_time"))  # type: ignore[union-attr]
    service.end_conversation()
    service.process_voice_command("what time is it")
    assert service.pending_conversation_id is None


def test_center_error_message_becomes_a_typed_error(harness: Harness) -> None:
    from jarvis.node import CenterError

    service = harness.start([], [CurrentTime()])
    client = service.client
    assert client is not None
    with pytest.raises(CenterError) as caught:
        client.send_command("hello", "no-such-conversation")
    assert caught.value.status_code == 404
    assert "no-such-conversation" in caught.value.message


def test_round_trips_are_bounded(harness: Harness) -> None:
    # every call fails validation, so the center keeps retrying and asking
    service = harness.start([tool_call("set_room_light", room="attic") for _ in range(20)],
                            [RoomLight()], max_retries=10)
    service.max_round_trips = 3
    result = service.process_voice_command("light in the attic", validation_handler=lambda q: "x")
    assert result.stop_reason == "error"
    assert result.round_trips == 3
    assert len(result.tool_calls) == 2
    assert service.pending_conversation_id is None


def test_request_info_for_pre_routed_commands(harness: Harness) -> None:
    music = PauseMusic()
    service = harness.start([], [music])
    service.process_voice_command("pause")
    [(info, _)] = music.calls
    assert isinstance(info, RequestInformation)
    assert (info.voice_command, info.node_id, info.timezone) == ("pause", "kitchen-pi",
                                                                 "Europe/Paris")


def test_bad_utterances_are_refused_before_any_request(harness: Harness) -> None:
    service = harness.start([], [CurrentTime()])
    with pytest.raises(ValueError, match="empty utterance"):
        service.process_voice_command("   ")
    with pytest.raises(ValueError, match="the limit is 4000"):
        service.process_voice_command("la " * 2000)
    assert harness.transport.paths == []


def test_a_cancelled_clarification_ends_the_conversation(harness: Harness) -> None:
    service = harness.start([tool_call("ask_user", question="Which room?")], [RoomLight()])
    result = service.process_voice_command("turn on the light", validation_handler=lambda q: None)
    assert result.stop_reason == "complete" and result.message == "Okay, never mind."
    assert result.tool_calls == []
