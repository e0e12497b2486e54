"""HTTP errors, health and OpenAPI, durability across restarts and processes, the CLI."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from center_helpers import CALCULATOR_COMMAND, WEATHER_TOOL, Center, conversation_id

from jarvis.center.llm.base import LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings


def test_unknown_conversation_is_404_with_a_hint(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    for path, body in [
        ("/api/v0/voice/command", {"conversation_id": "nope", "voice_command": "hi"}),
        ("/api/v0/voice/command/continue", {"conversation_id": "nope",
                                            "validation_response": "yes"}),
    ]:
        response = center.client.post(path, json=body)
        assert response.status_code == 404
        error = response.json()["error"]
        assert "nope" in error and "/api/v0/conversation/start" in error


def test_malformed_bodies_are_422_naming_the_field(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    cases = [
        ("/api/v0/voice/command", {"conversation_id": cid}, "voice_command"),
        ("/api/v0/voice/command", {"conversation_id": cid, "voice_command": 5}, "voice_command"),
        ("/api/v0/conversation/start",
         {"conversation_id": cid, "node_context": {"timezone": "Mars/Olympus"}},
         "node_context.timezone"),
        ("/api/v0/conversation/start",
         {"conversation_id": cid, "available_commands": [
             {"command_name": "x", "parameters": [{"name": "n", "type": "integr"}]}]},
         "available_commands"),
        ("/api/v0/conversation/start",
         {"conversation_id": cid, "client_tools": [
             {"type": "function", "function": {"name": "ask_user"}}]},
         "client_tools"),
        ("/api/v0/voice/command/continue", {"conversation_id": cid}, "tool_results"),
        ("/api/v0/voice/command/continue",
         {"conversation_id": cid, "tool_results": [{"tool_call_id": "a"}]},
         "tool_results.0.output"),
    ]
    for path, body, field in cases:
        response = center.client.post(path, json=body)
        assert response.status_code == 422, (path, body, response.text)
        assert field in response.json()["error"], response.text
    response = center.client.post(
        "/api/v0/voice/command", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    # None of that touched the conversation.
    assert center.store.load(cid).message_count == 0


def test_tool_results_for_unknown_ids_are_400(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command", city="Kyiv")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in kyiv")["tool_calls"][0]
    response = center.client.post(
        "/api/v0/voice/command/continue",
        json={"conversation_id": cid,
              "tool_results": [{"tool_call_id": "call_bogus", "output": {"success": True}}]},
    )
    assert response.status_code == 400
    assert "call_bogus" in response.json()["error"] and call["id"] in response.json()["error"]
    # The real results are still accepted afterwards.
    done = center.results(cid, (call["id"], {"success": True, "message": "Sunny in Kyiv."}))
    assert done["assistant_message"] == "Sunny in Kyiv."


def test_body_over_the_limit_is_413(make_center: Any) -> None:
    center = make_center(ScriptedBackend([text("ok")]), max_body_bytes=4096)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    big = {"conversation_id": cid, "voice_command": "x" * 3000, "padding": "y" * 5000}
    response = center.client.post("/api/v0/voice/command", json=big)
    assert response.status_code == 413
    assert "4096" in response.json()["error"] and response.json()["detail"] is None

    def chunks() -> Any:  # no Content-Length: the limit applies while streaming
        yield b'{"conversation_id": "' + cid.encode() + b'", "voice_command": "'
        for _ in range(10):
            yield b"z" * 1000
        yield b'"}'

    response = center.client.post("/api/v0/voice/command", content=chunks(),
                                  headers={"content-type": "application/json"})
    assert response.status_code == 413
    # A small chunked body still works.
    small = json.dumps({"conversation_id": cid, "voice_command": "hello"}).encode()
    response = center.client.post("/api/v0/voice/command", content=iter([small]),
                                  headers={"content-type": "application/json"})
    assert response.status_code == 200 and response.json()["assistant_message"] == "ok"


def test_health_and_openapi(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    health = center.client.get("/health").json()
    assert health["status"] == "ok" and health["llm_backend"] == "scripted"
    assert health["database"] in ("sqlite", "postgresql")
    spec = center.client.get("/openapi.json").json()
    for path in ("/api/v0/conversation/start", "/api/v0/voice/command",
                 "/api/v0/voice/command/continue"):
        assert path in spec["paths"]
    schemas = spec["components"]["schemas"]
    assert "ToolCallingResponse" in schemas and "ContinueRequest" in schemas


def test_restart_in_the_middle_of_a_conversation(make_center: Any) -> None:
    first = make_center(ScriptedBackend([tool_call("calculate", num1=5, num2=3,
                                                   operation="add")]))
    cid = conversation_id()
    first.start(cid, commands=[CALCULATOR_COMMAND])
    call = first.command(cid, "what is 5 plus 3")["tool_calls"][0]
    first.close()  # the center goes away with tool calls pending

    second_backend = ScriptedBackend([text("It's 8."), tool_call("calculate", num1=8, num2=2,
                                                                operation="multiply")])
    second = make_center(second_backend, direct_tool_message=False)
    done = second.results(cid, (call["id"], {"success": True, "context": {"result": 8}}))
    assert done["assistant_message"] == "It's 8."
    assert done["request_information"]["voice_command"] == "what is 5 plus 3"
    follow = second.command(cid, "multiply that by 2")
    assert follow["stop_reason"] == "tool_calls"
    history = [m.get("content") for m in second_backend.requests[1].messages[1:-1]]
    assert history[0] == "what is 5 plus 3" and "It's 8." in history


def test_two_centers_share_one_database(make_center: Any) -> None:
    backend_a = ScriptedBackend([tool_call("open_weather_command", city="Cairo"),
                                 text("Anything else?")])
    backend_b = ScriptedBackend([text("Hot in Cairo.")])
    a = make_center(backend_a, direct_tool_message=False)
    b = make_center(backend_b, direct_tool_message=False)
    cid = conversation_id()
    a.start(cid, [WEATHER_TOOL])
    call = a.command(cid, "weather in cairo")["tool_calls"][0]
    assert b.results(cid, (call["id"], {"success": True, "context": {"c": 38}}))[
        "assistant_message"] == "Hot in Cairo."
    # A has the first turn cached; it must still see what B wrote.
    assert a.command(cid, "thanks")["assistant_message"] == "Anything else?"
    seen = [m.get("content") for m in backend_a.requests[1].messages]
    assert "Hot in Cairo." in seen and seen[-2] == "thanks"


def test_concurrent_change_is_409_and_loses_nothing(make_center: Any) -> None:
    holder: dict[str, Center] = {}
    started = threading.Event()

    def slow(request: LLMRequest) -> Any:
        # While this request is thinking, the conversation is started again elsewhere.
        center = holder["center"]
        center.client.post("/api/v0/conversation/start",
                           json={"conversation_id": holder["cid"], "client_tools": [WEATHER_TOOL]})
        started.set()
        return text("late answer")

    center = make_center(ScriptedBackend([slow, text("fresh answer")]))
    cid = conversation_id()
    holder.update(center=center, cid=cid)
    center.start(cid, [WEATHER_TOOL])
    response = center.client.post("/api/v0/voice/command",
                                  json={"conversation_id": cid, "voice_command": "hi"})
    assert started.is_set()
    assert response.status_code == 409
    assert "send this request again" in response.json()["error"]
    assert center.command(cid, "hi")["assistant_message"] == "fresh answer"
    history = center.store.history(center.store.load(cid))
    assert [m["content"] for m in history] == ["hi", "fresh answer"]


def test_writes_are_durable_before_the_response(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command", city="Quito")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    center.command(cid, "weather in quito")
    # A fresh store on the same database (another process's view) sees everything.
    from jarvis.center.store import Store

    other = Store(center.store.url)
    try:
        record = other.load(cid)
        assert record is not None and record.pending["kind"] == "tool_calls"
        assert [m["role"] for m in other.history(record)] == ["user", "assistant"]
        turns = other.turns(cid)
        assert turns[-1]["stop_reason"] == "tool_calls"
        assert turns[-1]["trace"]["llm_calls"][0]["tool_calls"][0]["name"] == (
            "open_weather_command"
        )
        assert "llm" in turns[-1]["trace"]["stages_ms"]
    finally:
        other.close()


@pytest.mark.postgres
def test_center_reconnects_after_postgres_drops_its_connections(
    pg_schema_url: str, tmp_path: Path, request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    backend = ScriptedBackend([tool_call("open_weather_command", city="Lima"),
                               text("Mild in Lima.")])
    settings = CenterSettings(data_dir=tmp_path, database_url=pg_schema_url,
                              direct_tool_message=False, log_level="warning")
    center = Center(CenterServer(settings, backend).start())
    request.addfinalizer(center.close)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in lima")["tool_calls"][0]
    app_name = make_url(pg_schema_url).query["application_name"]
    admin = sa.create_engine(pg_schema_url.split("?")[0])
    with admin.begin() as connection:  # what a database restart does to open connections
        killed = connection.execute(
            sa.text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = :name AND pid <> pg_backend_pid()"),
            {"name": app_name},
        ).scalar()
    admin.dispose()
    assert killed >= 1
    with caplog.at_level(logging.WARNING, logger="jarvis.center.store.store"):
        done = center.results(cid, (call["id"], {"success": True, "context": {"c": 19}}))
    assert done["assistant_message"] == "Mild in Lima."
    assert "database connection lost; reconnecting" in caplog.text


def test_sqlite_uses_wal(tmp_path: Path) -> None:
    settings = CenterSettings(data_dir=tmp_path, log_level="warning")
    with CenterServer(settings, ScriptedBackend([])) as server:
        assert (tmp_path / "center.db").exists()
        with server.app.state.store.engine.connect() as connection:  # type: ignore[union-attr]
            mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
        assert mode == "wal"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_jarvis_serve_with_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "open_weather_command", "arguments": {"city": "Lagos"}}]},
    ]))
    port = _free_port()
    env = {**os.environ, "JARVIS_LLM_BACKEND": "scripted", "JARVIS_LLM_SCRIPT": str(script),
           "JARVIS_DATA_DIR": str(tmp_path)}
    env.pop("JARVIS_DATABASE_URL", None)
    env.pop("JARVIS_CONFIG", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "jarvis.cli.main", "serve", "--port", str(port),
         "--log-level", "warning"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.stdout.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "jarvis serve did not come up"
            time.sleep(0.1)
        # A node key from `jarvis nodes add` on the same data folder (stdout: the key alone).
        added = subprocess.run([sys.executable, "-m", "jarvis.cli.main", "nodes", "add", "den"],
                               env=env, capture_output=True, text=True, check=True)
        auth = {"Authorization": f"Bearer {added.stdout.strip()}"}
        cid = conversation_id()
        httpx.post(f"{base}/api/v0/conversation/start", headers=auth,
                   json={"conversation_id": cid, "client_tools": [WEATHER_TOOL]})
        reply = httpx.post(f"{base}/api/v0/voice/command", headers=auth,
                           json={"conversation_id": cid, "voice_command": "weather in lagos"})
        assert reply.json()["tool_calls"][0]["function"]["name"] == "open_weather_command"
        assert (tmp_path / "center.db").exists()
    finally:
        process.terminate()
        process.wait(10)


def test_settings_precedence(tmp_path: Path) -> None:
    from jarvis.center.settings import SettingsError, load_settings

    config = tmp_path / "center.toml"
    config.write_text('[center]\nmax_retries = 5\ndirect_tool_message = false\nport = 9000\n')
    env = {"JARVIS_DATA_DIR": str(tmp_path), "JARVIS_MAX_RETRIES": "3"}
    settings = load_settings({}, env)
    assert (settings.max_retries, settings.direct_tool_message, settings.port) == (3, False, 9000)
    settings = load_settings({"max_retries": 1, "port": None}, env)
    assert settings.max_retries == 1 and settings.port == 9000
    assert load_settings({}, {"JARVIS_DATA_DIR": str(tmp_path / "none")}).max_retries == 2
    from_file = load_settings({}, {"JARVIS_CONFIG": str(config)})
    assert (from_file.max_retries, from_file.direct_tool_message) == (5, False)
    config.write_text("bogus_key = 1\n")
    with pytest.raises(SettingsError, match="bogus_key"):
        load_settings({}, {"JARVIS_CONFIG": str(config)})
    with pytest.raises(SettingsError, match="max_retries"):
        load_settings({}, {"JARVIS_DATA_DIR": str(tmp_path / "none"), "JARVIS_MAX_RETRIES": "x"})
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings({}, {"JARVIS_CONFIG": str(tmp_path / "missing.toml")})
    secret = load_settings(
        {"llm_api_key": "sk-hidden", "database_url": "postgresql+psycopg://u:pw@h/db"},
        {"JARVIS_DATA_DIR": str(tmp_path / "x")},
    )
    shown = json.dumps(secret.redacted())
    assert "sk-hidden" not in shown and "pw" not in shown
