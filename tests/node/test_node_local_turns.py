"""Follow-ups after the fast path: a real center over HTTP, the scripted LLM (protocol tests).

"what's 5 plus 3" is answered by the calculator's pre_route on the node; the follow-up
"now multiply that by 2" goes to the center, which must see the earlier exchange.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from node_helpers import PauseMusic

from jarvis.center.llm.base import LLMReply, LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.commands.calculate import CalculateCommand
from jarvis.commands.timers import SetTimerCommand
from jarvis.node import CommandExecutionService, JarvisCommandCenterClient, NodeSettings, NodeStore
from jarvis.node.registry import CommandRegistry
from jarvis.node.runtime import command_context


class BodyRecorder(httpx.HTTPTransport):
    """Keeps every request body the node sends (path, JSON)."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[tuple[str, dict[str, Any]]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append((request.url.path, json.loads(request.content or b"{}")))
        return super().handle_request(request)


class Setup:
    def __init__(self, service: CommandExecutionService, backend: ScriptedBackend,
                 transport: BodyRecorder) -> None:
        self.service = service
        self.backend = backend
        self.transport = transport


@pytest.fixture
def setup(tmp_path: Path, data_dir: Path) -> Iterator[Setup]:
    backend = ScriptedBackend([])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning")
    transport = BodyRecorder()
    with CenterServer(settings, backend) as server, JarvisCommandCenterClient(
        server.url, transport=transport, key=server.add_node("kitchen-pi")
    ) as client:
        node = NodeSettings(data_dir=data_dir, timezone="Europe/Paris", node_id="kitchen-pi")
        store = NodeStore(data_dir)
        registry = CommandRegistry.from_commands(
            [CalculateCommand(), PauseMusic(), SetTimerCommand()], command_context(node, store)
        )
        yield Setup(CommandExecutionService(registry, client, node), backend, transport)


def _from(messages: list[dict[str, Any]], content: str) -> list[dict[str, Any]]:
    """The non-system messages from the user message `content` on."""
    start = next(i for i, m in enumerate(messages) if m.get("content") == content)
    return [m for m in messages[start:] if m["role"] != "system"]


def test_a_follow_up_after_the_fast_path_carries_the_exchange(setup: Setup) -> None:
    def multiply(request: LLMRequest) -> LLMReply:
        return tool_call("calculate", num1=8, num2=2, operation="multiply")

    setup.backend.add(multiply)
    service = setup.service

    first = service.process_voice_command("what's 5 plus 3")

    assert first.pre_routed and first.message == "5 plus 3 is 8."
    assert first.wait_for_input and service.awaiting_follow_up
    assert setup.transport.bodies == []  # the fast path still never calls the center

    second = service.process_voice_command("now multiply that by 2")

    assert not second.pre_routed and second.message == "8 times 2 is 16."
    user, call, result, spoken, follow_up = _from(setup.backend.requests[0].messages,
                                                  "what's 5 plus 3")
    assert user["role"] == "user"
    [made] = call["tool_calls"]
    assert made["function"]["name"] == "calculate"
    assert json.loads(made["function"]["arguments"]) == {
        "num1": 5.0, "num2": 3.0, "operation": "add"}
    assert result["role"] == "tool" and json.loads(result["content"])["context"]["result"] == 8
    assert spoken == {"role": "assistant", "content": "5 plus 3 is 8."}
    assert follow_up == {"role": "user", "content": "now multiply that by 2"}
    # Sent once, with the voice command that follows it; the calculator keeps it open.
    sent = [body.get("local_turns") for path, body in setup.transport.bodies
            if path.endswith("/voice/command")]
    assert [len(t or []) for t in sent] == [1]
    assert second.wait_for_input and service.pending_local_turns == []
    assert service.pending_conversation_id == second.conversation_id


def test_a_fast_path_answer_without_follow_up_forgets_the_exchange(setup: Setup) -> None:
    setup.backend.add(text("Once upon a time..."))
    service = setup.service

    service.process_voice_command("what's 5 plus 3")
    paused = service.process_voice_command("pause")
    assert paused.pre_routed and not paused.wait_for_input
    assert not service.awaiting_follow_up

    service.process_voice_command("tell me a story")
    spoken = [m for m in setup.backend.requests[0].messages if m["role"] != "system"]
    assert spoken == [{"role": "user", "content": "tell me a story"}]


def test_an_answer_kept_only_for_a_change_is_no_referent_after_another(setup: Setup) -> None:
    # The timer's 600 seconds must not reach "multiply that by 2" after "5 plus 3".
    setup.backend.add(tool_call("calculate", num1=8, num2=2, operation="multiply"))
    service = setup.service
    timer = service.process_voice_command("set a timer for 10 minutes")
    assert timer.pre_routed and not timer.wait_for_input
    assert [t.voice_command for t in service.pending_local_turns] == [
        "set a timer for 10 minutes"]  # "actually make it 20 minutes" may still follow

    service.process_voice_command("what's 5 plus 3")
    assert [t.voice_command for t in service.pending_local_turns] == ["what's 5 plus 3"]
    second = service.process_voice_command("now multiply that by 2")

    assert second.message == "8 times 2 is 16."
    heard = [m["content"] for m in setup.backend.requests[0].messages if m["role"] == "user"]
    assert heard == ["what's 5 plus 3", "now multiply that by 2"]


def test_fast_path_follow_ups_pile_up_until_the_center_hears_them(setup: Setup) -> None:
    setup.backend.add(text("That is all I know."))
    service = setup.service
    service.process_voice_command("what's 5 plus 3")
    service.process_voice_command("what is 8 times 2")
    assert [t.voice_command for t in service.pending_local_turns] == [
        "what's 5 plus 3", "what is 8 times 2"]

    service.process_voice_command("and what did I ask first")

    users = [m["content"] for m in setup.backend.requests[0].messages if m["role"] == "user"]
    assert users == ["what's 5 plus 3", "what is 8 times 2", "and what did I ask first"]
    service.end_conversation()
    assert not service.awaiting_follow_up
