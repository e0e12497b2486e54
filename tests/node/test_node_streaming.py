"""The node's side of streamed turns: `on_sentence` over real HTTP to a live center with a
scripted LLM (protocol tests), and the event-stream reader on its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from node_helpers import CountingTransport, PauseMusic, Thermometer

from jarvis.center.llm.base import LLMReply, LLMRequest, LLMTimeoutError
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.node import CenterError, CommandExecutionService, JarvisCommandCenterClient
from jarvis.node.registry import CommandRegistry
from jarvis.node.runtime import command_context
from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore
from jarvis.node.turn_stream import StreamedTurnError, read_turn
from jarvis.protocol import format_event

EXPLAINED = "The thermometer is not answering. Dr. Heat says: it was 21.5 °C, try again."


Node = tuple[CommandExecutionService, CountingTransport]


@pytest.fixture
def node(tmp_path: Path, data_dir: Path) -> Iterator[Node]:
    def explain(_request: LLMRequest) -> LLMReply:
        return text(EXPLAINED)

    def down(_request: LLMRequest) -> LLMReply:
        raise LLMTimeoutError("too slow")

    backend = ScriptedBackend([tool_call("read_thermometer"), explain, down])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning",
                              direct_tool_message=False)
    server = CenterServer(settings, backend).start()
    paths = CountingTransport()
    client = JarvisCommandCenterClient(server.url, transport=paths, key=server.add_node("hall"))
    node_settings = NodeSettings(data_dir=data_dir, timezone="Europe/Paris", node_id="hall")
    store = NodeStore(data_dir)
    registry = CommandRegistry.from_commands([Thermometer(), PauseMusic()],
                                             command_context(node_settings, store))
    yield CommandExecutionService(registry, client, node_settings), paths
    client.close()
    server.stop()


def test_sentences_reach_on_sentence_and_the_result_is_unchanged(
        node: Node) -> None:
    service, paths = node
    heard: list[str] = []
    result = service.process_voice_command("what does the room thermometer say",
                                           on_sentence=heard.append)
    assert heard == ["The thermometer is not answering.",
                     "Dr. Heat says: it was 21.5 °C, try again."]
    assert result.message == EXPLAINED and result.stop_reason == "complete"
    assert paths.paths[1:] == ["/api/v0/voice/command/stream",
                              "/api/v0/voice/command/continue/stream"]
    assert 0 < result.timings["first_sentence_ms"] <= result.timings["total_ms"]

    # Answers that were not streamed reach on_sentence whole: a local command's, an error.
    heard.clear()
    assert service.process_voice_command("Pause the music", on_sentence=heard.append).pre_routed
    assert heard == ["Paused."]
    heard.clear()
    failed = service.process_voice_command("and now", on_sentence=heard.append)
    assert failed.stop_reason == "error" and heard == [failed.message]


def _lines(*events: tuple[str, dict[str, object]]) -> list[str]:
    return b"".join(format_event(name, data) for name, data in events).decode().splitlines()


def test_the_reader_reports_errors_and_broken_streams() -> None:
    error = ("error", {"status": 409, "error": "conversation 'c1' was changed", "detail": None})
    with pytest.raises(StreamedTurnError) as caught:
        read_turn(_lines(("sentence", {"text": "Hi."}), error), lambda _s: None)
    assert (caught.value.status_code, caught.value.message) == (409, error[1]["error"])
    with pytest.raises(StreamedTurnError, match="ended before"):
        read_turn(_lines(("sentence", {"text": "Hi."})), lambda _s: None)
    with pytest.raises(StreamedTurnError, match="not the protocol"):
        read_turn(["event: done", "data: {\"stop_reason\": 3}", ""], lambda _s: None)


def test_an_error_event_is_a_center_error_with_its_status() -> None:
    def center(_request: httpx.Request) -> httpx.Response:
        body = b"".join([format_event("sentence", {"text": "Half an answer."}),
                         format_event("error", {"status": 409, "error": "changed meanwhile"})])
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = JarvisCommandCenterClient("http://center.test", transport=httpx.MockTransport(center))
    heard: list[str] = []
    with pytest.raises(CenterError) as caught:
        client.send_tool_results("c1", [], on_sentence=heard.append)
    assert caught.value.status_code == 409 and heard == ["Half an answer."]
