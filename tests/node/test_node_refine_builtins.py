"""A refinement changes what the refined call made: the node runs the real built-in timer
and reminder against a real center over HTTP, with the scripted LLM backend (protocol
tests). "set a timer for 10 minutes" then "actually make it 20 minutes" leaves one timer."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.commands._schedule import parse_utc
from jarvis.node import Node, NodeSettings, open_node

ZONE = "Europe/Paris"


@pytest.fixture
def node(tmp_path: Path, data_dir: Path) -> Iterator[tuple[Node, ScriptedBackend]]:
    backend = ScriptedBackend([])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning")
    with CenterServer(settings, backend) as server:
        opened = open_node(NodeSettings(data_dir=data_dir, timezone=ZONE,
                                        center_url=server.url,
                                        center_key=server.add_node("kitchen-pi")))
        yield opened, backend
        opened.close()


def _entries(node: Node, namespace: str) -> list[dict[str, Any]]:
    command = node.registry.get("set_timer")
    assert command is not None
    return [e for e in command.context.storage.items(namespace).values()
            if isinstance(e, dict) and not e.get("fired")]


def _length(entry: dict[str, Any]) -> dt.timedelta:
    return parse_utc(entry["due_at"]) - parse_utc(entry["created_at"])


@pytest.mark.parametrize("streamed", [False, True])
def test_a_refined_timer_is_the_same_timer_with_the_new_length(node: Any, streamed: bool) -> None:
    jarvis, backend = node
    first = jarvis.service.process_voice_command("set a timer for 10 minutes")
    assert first.pre_routed and first.message == "Timer set for 10 minutes."
    [timer] = _entries(jarvis, "timers")
    # The focused decision of the refinement: only the new length.
    backend.add(tool_call("set_timer", duration="PT20M"))
    heard: list[str] = []
    second = jarvis.service.process_voice_command("actually make it 20 minutes",
                                                  on_sentence=heard.append if streamed else None)
    assert not second.pre_routed and second.message == "OK, the timer is now 20 minutes."
    assert heard == (["OK, the timer is now 20 minutes."] if streamed else [])
    [changed] = _entries(jarvis, "timers")
    assert changed["id"] == timer["id"] and _length(changed) == dt.timedelta(minutes=20)
    assert changed["announcement"] == "Your 20 minute timer is done."
    # A chain: the next change refines the refined call, still the one timer.
    third = jarvis.service.process_voice_command("5 minutes longer")
    assert third.message == "OK, the timer is now 25 minutes."
    [longer] = _entries(jarvis, "timers")
    assert longer["id"] == timer["id"] and _length(longer) == dt.timedelta(minutes=25)
    assert len(backend.requests) == 1  # "longer" is a step worked out without the LLM


def test_a_refined_reminder_moves_instead_of_doubling(node: Any) -> None:
    jarvis, backend = node
    backend.add(tool_call("reminder", action="set", text="call mom", time="17:00"),
                tool_call("reminder", time="18:00"))
    first = jarvis.service.process_voice_command("remind me to call mom at 5 pm")
    assert first.message.startswith("OK, I'll remind you to call mom ")
    [reminder] = _entries(jarvis, "reminders")
    second = jarvis.service.process_voice_command("actually make it 6 pm")
    assert second.message.startswith("OK, the reminder to call mom is now ")
    assert second.message.endswith(" at 6 PM.")
    [moved] = _entries(jarvis, "reminders")
    assert moved["id"] == reminder["id"] and moved["text"] == "call mom"
    # An hour later, or (said after 5 pm, when 5 pm meant tomorrow) today at 6 pm.
    assert parse_utc(moved["due_at"]) - parse_utc(reminder["due_at"]) in (
        dt.timedelta(hours=1), dt.timedelta(hours=-23))


def test_a_new_request_still_makes_a_second_timer(node: Any) -> None:
    jarvis, backend = node
    jarvis.service.process_voice_command("set a timer for 10 minutes")
    jarvis.service.process_voice_command("set a timer for 3 minutes")
    assert sorted(round(_length(e).total_seconds()) for e in _entries(jarvis, "timers")) == [
        180, 600]
    assert backend.requests == []  # both pre-routed: nothing was refined
