"""The read API over real HTTP: a real center (uvicorn, loopback port) on SQLite and
PostgreSQL, with a scripted LLM (these tests check what is recorded and shown)."""

from __future__ import annotations

from typing import Any

import pytest
from center_helpers import CALCULATOR_COMMAND, WEATHER_TOOL, conversation_id

from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call

TOKEN = "admin-token-for-tests-5d1c"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _start(center: Any, cid: str, node: str, commands: list[dict[str, Any]] | None = None,
           tools: list[dict[str, Any]] | None = None) -> None:
    body: dict[str, Any] = {"conversation_id": cid,
                            "node_context": {"timezone": "Europe/Paris", "node_id": node,
                                             "room": "den"},
                            "client_tools": tools if tools is not None else [WEATHER_TOOL]}
    if commands is not None:
        body["available_commands"] = commands
    response = center.client.post("/api/v0/conversation/start", json=body)
    assert response.status_code == 200, response.text


def _get(center: Any, path: str, **params: Any) -> Any:
    response = center.client.get(path, params=params, headers=AUTH)
    assert response.status_code == 200, response.text
    return response.json()


def test_without_admin_token_the_read_api_and_console_are_off(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    for path in ("/api/v0/conversations", "/api/v0/conversations/x", "/api/v0/nodes"):
        response = center.client.get(path, headers=AUTH)
        assert response.status_code == 403
        assert "JARVIS_ADMIN_TOKEN" in response.json()["error"]
    page = center.client.get("/console", headers=AUTH)
    assert page.status_code == 403 and "JARVIS_ADMIN_TOKEN" in page.text
    assert center.client.get("/console/login").status_code == 403


@pytest.mark.parametrize("header", [None, "Bearer wrong-token", "Basic " + TOKEN, "Bearer", TOKEN])
def test_missing_or_wrong_token_is_401(make_center: Any, header: str | None) -> None:
    center = make_center(ScriptedBackend([]), admin_token=TOKEN)
    headers = {"Authorization": header} if header is not None else {}
    response = center.client.get("/api/v0/conversations", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "admin token" in response.json()["error"]


def test_conversations_per_node_newest_first_with_pages(make_center: Any) -> None:
    center = make_center(ScriptedBackend([text("Hello.")], loop=True), admin_token=TOKEN)
    # Node names of this test only: the PostgreSQL schema is shared by the whole run.
    suffix = conversation_id()[-6:]
    kitchen_node, den_node = f"kitchen-{suffix}", f"den-{suffix}"
    kitchen = [conversation_id() for _ in range(5)]
    for i, cid in enumerate(kitchen):
        _start(center, cid, kitchen_node)
        center.command(cid, f"hello number {i}")
    den = conversation_id()
    _start(center, den, den_node)
    center.command(den, "hello from the den")

    first = _get(center, "/api/v0/conversations", node=kitchen_node, limit=2)
    assert [c["id"] for c in first["conversations"]] == kitchen[::-1][:2]
    assert first["total"] == 5 and first["next_offset"] == 2
    summary = first["conversations"][0]
    assert summary["node_id"] == kitchen_node and summary["room"] == "den"
    assert summary["voice_command"] == "hello number 4"
    assert summary["turns"] == 1 and summary["last_stop_reason"] == "complete"
    last = _get(center, "/api/v0/conversations", node=kitchen_node, limit=2, offset=4)
    assert [c["id"] for c in last["conversations"]] == [kitchen[0]]
    assert last["next_offset"] is None
    everyone = _get(center, "/api/v0/conversations")
    assert everyone["conversations"][0]["id"] == den and everyone["total"] >= 6
    nodes = [(n["node_id"], n["conversations"]) for n in _get(center, "/api/v0/nodes")["nodes"]]
    assert nodes[:2] == [(den_node, 1), (kitchen_node, 5)]


@pytest.mark.parametrize("params", [
    {"limit": 0}, {"limit": 501}, {"limit": "ten"}, {"offset": -1}, {"offset": "1e3"},
    {"node": ""}, {"limit": 10**30},
])
def test_bad_pagination_is_422(make_center: Any, params: dict[str, Any]) -> None:
    center = make_center(ScriptedBackend([]), admin_token=TOKEN)
    response = center.client.get("/api/v0/conversations", params=params, headers=AUTH)
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith("invalid request")
    if "node" not in params:  # the conversation page takes limit and offset too
        detail = center.client.get("/api/v0/conversations/abc", params=params, headers=AUTH)
        assert detail.status_code == 422, detail.text


def test_unknown_conversation_is_404(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]), admin_token=TOKEN)
    response = center.client.get("/api/v0/conversations/nope", headers=AUTH)
    assert response.status_code == 404
    assert response.json()["error"] == "unknown conversation 'nope'"


def test_a_turn_shows_what_was_said_called_retried_asked_and_answered(make_center: Any) -> None:
    backend = ScriptedBackend([
        # An invalid call (num1 is not a number): the center retries, then the LLM asks.
        tool_call("calculate", num1="two", num2=3, operation="add"),
        tool_call("resolve_relative_date", expression="tomorrow"),
        tool_call("calculate", num1=2, num2=3, operation="add"),
        text("Two plus three is five."),
    ])
    center = make_center(backend, admin_token=TOKEN, direct_tool_message=False)
    cid = conversation_id()
    _start(center, cid, "study", commands=[CALCULATOR_COMMAND], tools=[])
    reply = center.command(cid, "what is 2 plus 3")
    assert reply["stop_reason"] == "tool_calls"
    call = reply["tool_calls"][0]
    done = center.results(cid, (call["id"], {"success": True, "context": {"result": 5}}))
    assert done["stop_reason"] == "complete"

    found = _get(center, f"/api/v0/conversations/{cid}")
    assert found["node_id"] == "study" and found["commands"] == ["calculate"]
    assert found["turn_count"] == 2 and found["waiting_for"] is None
    first, second = found["turns"]
    assert first["said"] == "what is 2 plus 3"
    assert first["tool_calls"] == [{"id": call["id"], "name": "calculate",
                                    "arguments": {"num1": 2, "num2": 3, "operation": "add"}}]
    [retry] = first["retries"]
    assert retry["source"] == "center" and retry["problems"][0]["parameter"] == "num1"
    assert [s["name"] for s in first["server_tools"]] == ["resolve_relative_date"]
    assert first["llm_calls"] == 3 and first["answer"] is None
    assert {s["stage"] for s in first["stages"]} >= {"history", "prompt", "llm", "validate"}
    assert second["tool_results"][0]["success"] is True
    assert second["answer"] == "Two plus three is five."
    node = [s for s in second["stages"] if s["stage"] == "node"]
    assert len(node) == 1 and node[0]["ms"] >= 0
    assert second["trace"]["llm_calls"][0]["tools_disabled"] is True

    page = _get(center, f"/api/v0/conversations/{cid}", limit=1, offset=1)
    assert [t["id"] for t in page["turns"]] == [second["id"]] and page["next_offset"] is None
    # The node time needs the turn before, which is outside this page.
    assert [s["stage"] for s in page["turns"][0]["stages"]][-1] == "node"


def test_a_question_is_shown_as_a_question(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command")])
    center = make_center(backend, admin_token=TOKEN)
    cid = conversation_id()
    tool = {**WEATHER_TOOL, "function": {**WEATHER_TOOL["function"], "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
    _start(center, cid, "hall", tools=[tool])
    reply = center.command(cid, "what's the weather")
    assert reply["stop_reason"] == "validation_required"
    [turn] = _get(center, f"/api/v0/conversations/{cid}")["turns"]
    assert turn["question"] == reply["validation_request"]["question"]
    assert turn["answer"] is None and turn["tool_calls"] == []


def test_admin_token_and_log_format_come_from_the_environment() -> None:
    from jarvis.center.settings import load_settings

    settings = load_settings(env={"JARVIS_ADMIN_TOKEN": TOKEN, "JARVIS_LOG_FORMAT": "json",
                                  "JARVIS_CONFIG": ""})
    assert settings.admin_token is not None
    assert settings.admin_token.get_secret_value() == TOKEN
    assert settings.log_format == "json"
    assert TOKEN not in str(settings.redacted()) and TOKEN not in repr(settings)
