"""Helpers shared by the center tests: an HTTP client wrapper and sample tools."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from jarvis.center.app import NODE_PATHS
from jarvis.center.engine import Engine
from jarvis.center.llm.scripted import ScriptedBackend
from jarvis.center.meaning import Relatedness
from jarvis.center.server import CenterServer
from jarvis.center.store import Store
from jarvis.protocol import ConversationStartRequest, VoiceCommandRequest


def node_name() -> str:
    """A node name of this test only (the PostgreSQL schema is shared by the whole run)."""
    return f"node-{uuid.uuid4().hex[:12]}"


class NodeKeyAuth(httpx.Auth):
    """Sends the node key to the node routes only (the console and read API take the admin
    token), unless the request carries an Authorization header of its own."""

    def __init__(self, key: str) -> None:
        self.key = key

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        if request.url.path in NODE_PATHS and "authorization" not in request.headers:
            request.headers["Authorization"] = f"Bearer {self.key}"
        yield request


class Center:
    """A running center and an HTTP client for it, authenticated as a node of its own."""

    def __init__(self, server: CenterServer, node: tuple[str, str] | None = None) -> None:
        """`node`: (name, key) of a node the center's database already knows."""
        self.server = server
        self.node, self.key = node or (name := node_name(), server.add_node(name))
        self.client = httpx.Client(base_url=server.url, timeout=30, auth=NodeKeyAuth(self.key))

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def store(self) -> Any:
        return self.server.app.state.store  # type: ignore[union-attr]

    def start(self, conversation_id: str, tools: list[dict[str, Any]] | None = None,
              commands: list[dict[str, Any]] | None = None,
              timezone: str = "America/New_York") -> httpx.Response:
        body: dict[str, Any] = {
            "conversation_id": conversation_id,
            "node_context": {"timezone": timezone, "node_id": "kitchen-pi", "room": "kitchen"},
            "client_tools": tools or [],
        }
        if commands is not None:
            body["available_commands"] = commands
        response = self.client.post("/api/v0/conversation/start", json=body)
        assert response.status_code == 200, response.text
        return response

    def command(self, conversation_id: str, text: str) -> dict[str, Any]:
        response = self.client.post(
            "/api/v0/voice/command",
            json={"conversation_id": conversation_id, "voice_command": text},
        )
        assert response.status_code == 200, response.text
        return response.json()

    def results(self, conversation_id: str, *results: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        response = self.client.post(
            "/api/v0/voice/command/continue",
            json={
                "conversation_id": conversation_id,
                "tool_results": [{"tool_call_id": i, "output": o} for i, o in results],
            },
        )
        assert response.status_code == 200, response.text
        return response.json()

    def answer(self, conversation_id: str, text: str) -> dict[str, Any]:
        response = self.client.post(
            "/api/v0/voice/command/continue",
            json={"conversation_id": conversation_id, "validation_response": text},
        )
        assert response.status_code == 200, response.text
        return response.json()

    def close(self) -> None:
        self.client.close()
        self.server.stop()



def conversation_id() -> str:
    return f"conv-{uuid.uuid4().hex[:12]}"


def scripted_turn(tmp_path: Path, utterance: str, replies: Sequence[Any],
                  tools: list[dict[str, Any]], relatedness: Relatedness | None = None
                  ) -> tuple[Any, ScriptedBackend]:
    """One utterance to an engine on a SQLite file in `tmp_path` whose LLM answers
    `replies` in turn: the response and the backend (its requests)."""
    backend = ScriptedBackend(list(replies))
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    engine = Engine(store, backend, relatedness=relatedness)
    cid = conversation_id()
    engine.start(ConversationStartRequest(conversation_id=cid, client_tools=tools))
    try:
        return engine.command(VoiceCommandRequest(conversation_id=cid,
                                                  voice_command=utterance)), backend
    finally:
        store.close()


def function_tool(name: str, properties: dict[str, Any], required: list[str] | None = None,
                  description: str = "") -> dict[str, Any]:
    """An OpenAI tool definition."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description or f"The {name} command.",
            "parameters": {"type": "object", "properties": properties,
                           "required": required or []},
        },
    }


WEATHER_TOOL = function_tool(
    "open_weather_command", {"city": {"type": "string", "description": "City name"}},
    description="Gets weather for a city",
)

CALCULATOR_COMMAND: dict[str, Any] = {
    "command_name": "calculate",
    "description": "Do arithmetic on two numbers.",
    "parameters": [
        {"name": "num1", "type": "float", "required": True, "description": "First number"},
        {"name": "num2", "type": "float", "required": True, "description": "Second number"},
        {"name": "operation", "type": "string", "required": True,
         "enum_values": ["add", "subtract", "multiply", "divide"],
         # The words said for each operation: a choice never said is asked for.
         "enum_synonyms": {"add": ["plus"], "subtract": ["minus"], "multiply": ["times"],
                           "divide": ["divided by"]}},
    ],
    "examples": [{"voice_command": "what is 2 plus 2",
                  "expected_parameters": {"num1": 2, "num2": 2, "operation": "add"},
                  "is_primary": True}],
    "rules": ["Use the previous result when the user says 'that'."],
    "critical_rules": ["Never compute the answer yourself; always call calculate."],
    "antipatterns": [{"command_name": "convert_units",
                      "description": "Unit conversions go to convert_units."}],
}

CALENDAR_COMMAND: dict[str, Any] = {
    "command_name": "create_event",
    "description": "Put an event in the calendar.",
    "parameters": [
        {"name": "title", "type": "string", "required": True},
        {"name": "start", "type": "datetime", "required": True,
         "description": "When the event starts"},
        {"name": "reminder", "type": "timedelta", "required": False},
    ],
}

EVENTS_COMMAND: dict[str, Any] = {
    "command_name": "get_calendar_events",
    "description": "Read calendar events.",
    "parameters": [
        {"name": "resolved_datetimes", "type": "array<datetime>", "required": False},
    ],
}
