"""A spoken request through the real center with a scripted LLM (a protocol test).

The center asks which room; the question is spoken and the answer heard without the wake
word, then the command runs on the node. Stand-in engines: no model is needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from voice_standins import LoudnessVad, MarkWakeWord, ScriptedStt, ToneTts, sound

from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.node import JarvisCommandCenterClient, NodeSettings, open_node
from jarvis.node.voice import (
    ArraySource,
    CollectingSink,
    LoopSettings,
    RecorderSettings,
    VoiceLoop,
    service_responder,
)
from jarvis.node.voice.engines import VoiceEngines
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisParameter, RequestInformation


class RoomLight(IJarvisCommand):
    command_name = "set_room_light"
    description = "Turn on the light in a room."
    parameters: ClassVar[list[JarvisParameter]] = [
        JarvisParameter("room", "string", required=True)
    ]

    def __init__(self) -> None:
        self.rooms: list[str] = []

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        self.rooms.append(kwargs["room"])
        return CommandResponse.success_response(message=f"The {kwargs['room']} light is on.")


@pytest.fixture
def scripted_center(tmp_path: Path) -> Iterator[tuple[CenterServer, ScriptedBackend]]:
    backend = ScriptedBackend([
        tool_call("ask_user", question="Which room?", options=["kitchen", "bedroom"]),
        tool_call("set_room_light", room="bedroom"),
    ])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning",
                              rate_limit_per_minute=0)
    with CenterServer(settings, backend) as server:
        yield server, backend


def test_a_question_from_the_center_is_spoken_and_answered_by_voice(
    scripted_center, data_dir: Path
) -> None:
    server, backend = scripted_center
    light = RoomLight()
    client = JarvisCommandCenterClient(server.url, key=server.add_node("voice-node", replace=True))
    node = open_node(NodeSettings(data_dir=data_dir, timezone="Europe/Paris"),
                     commands=[light], client=client)
    audio = sound(("wake", 0.5), ("silence", 0.3), ("speech", 1), ("silence", 1),
                  ("speech", 0.6), ("silence", 1))
    stt = ScriptedStt(["turn on the light", "the bedroom"])
    events: list[tuple[str, str]] = []
    loop = VoiceLoop(
        VoiceEngines(MarkWakeWord(), LoudnessVad(), stt, ToneTts()),
        ArraySource(audio), CollectingSink(), service_responder(node.service),
        settings=LoopSettings(recorder=RecorderSettings(end_silence=0.3, start_timeout=2.0)),
        on_event=lambda kind, detail: events.append((kind, detail)),
    )
    try:
        exchanges = loop.run(max_exchanges=1)
    finally:
        node.close()
        client.close()

    assert ("question", "Which room? You can say: kitchen, bedroom.") in events
    assert ("sentence", "The bedroom light is on.") in events  # spoken as it streamed in
    assert light.rooms == ["bedroom"]
    assert exchanges[0].reply.commands == ("set_room_light",)
    assert exchanges[0].reply.text == "The bedroom light is on."
    assert [m["content"] for m in backend.requests[-1].messages if m.get("role") == "user"][-1] \
        == "the bedroom"
