"""Node keys and ownership over real HTTP: a real center (uvicorn, loopback port) on
SQLite and PostgreSQL with a scripted LLM. A request without a valid key is refused with
401 and changes nothing; another node's conversation is 404 wherever it is named; the
admin side takes the admin token and never a node key; no key is ever shown."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from center_helpers import WEATHER_TOOL, Center, conversation_id, node_name

from jarvis.center.app import NODE_PATHS
from jarvis.center.auth import hash_token
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings, SettingsError, load_settings
from jarvis.center.store.schema import nodes

ADMIN = "admin-token-for-auth-tests-91c4"


def _bodies(cid: str) -> dict[str, dict[str, Any]]:
    """A valid body for every node route (the streamed turns too)."""
    said = {"conversation_id": cid, "voice_command": "weather in Oslo"}
    answer = {"conversation_id": cid, "validation_response": "Oslo"}
    return {
        "/api/v0/conversation/start": {"conversation_id": cid, "client_tools": [WEATHER_TOOL]},
        "/api/v0/voice/command": said,
        "/api/v0/voice/command/stream": said,
        "/api/v0/voice/command/continue": answer,
        "/api/v0/voice/command/continue/stream": answer,
    }


def _assert_refused(response: httpx.Response, words: str) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert set(body) == {"error", "detail"} and words in body["error"]


@pytest.fixture
def center(make_center: Any) -> Center:
    backend = ScriptedBackend([tool_call("open_weather_command", city="Oslo"),
                               text("Sunny.")], loop=True)
    return make_center(backend, admin_token=ADMIN)


@pytest.mark.parametrize("header, words", [
    (None, "missing node key"), ("Bearer", "missing node key"),
    ("Basic abc", "missing node key"), ("Bearer jnk_not-a-key", "invalid or revoked"),
    (f"Bearer {ADMIN}", "invalid or revoked"),
])
def test_every_node_route_refuses_a_request_without_a_valid_key(
    center: Center, header: str | None, words: str,
) -> None:
    known = conversation_id()
    center.start(known, [WEATHER_TOOL])
    stranger = httpx.Client(base_url=center.url, timeout=30)
    headers = {"Authorization": header} if header is not None else {}
    for cid in (known, conversation_id()):
        for path, body in _bodies(cid).items():
            _assert_refused(stranger.post(path, json=body, headers=headers), words)
        # Not even a body that could not be read gets past the gate first.
        _assert_refused(stranger.post("/api/v0/voice/command", content=b"{", headers=headers),
                        words)
    _assert_refused(stranger.get("/api/v0/whoami", headers=headers), words)
    # Nothing happened: no new conversation, no turn on the known one, no LLM call.
    assert center.store.load(known).message_count == 0
    assert center.store.turns(known) == []
    assert center.server.backend.requests == []
    stranger.close()


def test_a_revoked_key_stops_working_at_once_and_changes_nothing(center: Center) -> None:
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    assert center.command(cid, "weather in Oslo")["stop_reason"] == "tool_calls"
    before = center.store.load(cid)
    from jarvis.center.auth import NodeKeys

    assert NodeKeys(center.store).revoke(center.node) is True
    for path, body in _bodies(cid).items():
        _assert_refused(center.client.post(path, json=body), "invalid or revoked")
    after = center.store.load(cid)
    assert (after.version, after.message_count) == (before.version, before.message_count)
    # A new key for the same node: its conversations are its own again.
    center.client.auth.key = center.server.add_node(center.node, replace=True)  # type: ignore[attr-defined]
    assert center.client.get("/api/v0/whoami").json() == {"node": center.node,
                                                          "authenticated": True}


def test_another_nodes_conversation_is_404_everywhere(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command", city="Oslo")], loop=True)
    mine = make_center(backend)
    other_key = mine.server.add_node(node_name())
    other = httpx.Client(base_url=mine.url, timeout=30,
                         headers={"Authorization": f"Bearer {other_key}"})
    cid = conversation_id()
    mine.start(cid, [WEATHER_TOOL])
    call = mine.command(cid, "weather in Oslo")["tool_calls"][0]
    before = mine.store.load(cid)
    results = {"conversation_id": cid, "tool_results": [
        {"tool_call_id": call["id"], "output": {"success": True}}]}
    attempts = {
        **_bodies(cid),
        "/api/v0/voice/command/continue": results,
        "/api/v0/voice/command/continue/stream": results,
    }
    for path, body in attempts.items():
        response = other.post(path, json=body)
        assert response.status_code == 404, (path, response.text)
        assert response.json()["error"].startswith(f"unknown conversation '{cid}'")
    after = mine.store.load(cid)
    assert (after.version, after.client_tools, after.pending) == (
        before.version, before.client_tools, before.pending)
    # The owner goes on where it was.
    done = mine.results(cid, (call["id"], {"success": True, "context": {"sky": "clear"}}))
    assert done["stop_reason"] in ("complete", "tool_calls")
    other.close()


def test_admin_routes_take_the_admin_token_and_never_a_node_key(center: Center) -> None:
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    admin_paths = ["/api/v0/nodes", "/api/v0/conversations", f"/api/v0/conversations/{cid}"]
    node_key = {"Authorization": f"Bearer {center.key}"}
    for path in admin_paths:
        refused = center.client.get(path, headers=node_key)
        assert refused.status_code == 401 and "admin token" in refused.json()["error"]
        assert center.client.get(path, headers={"Authorization": f"Bearer {ADMIN}"}).is_success
    for page in ("/console", "/console/nodes", f"/console/conversations/{cid}"):
        assert center.client.get(page, headers=node_key).status_code == 401
    # The admin token is no node key either.
    admin_as_node = center.client.post("/api/v0/conversation/start", json=_bodies(cid)[
        "/api/v0/conversation/start"], headers={"Authorization": f"Bearer {ADMIN}"})
    assert admin_as_node.status_code == 401


def test_nodes_are_listed_for_the_admin_without_their_keys(
    center: Center, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    revoked = node_name()
    revoked_key = center.server.add_node(revoked)
    from jarvis.center.auth import NodeKeys

    NodeKeys(center.store).revoke(revoked)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    center.command(cid, "weather in Oslo")
    auth = {"Authorization": f"Bearer {ADMIN}"}
    listed = center.client.get("/api/v0/nodes", headers=auth)
    registered = {n["name"]: n for n in listed.json()["registered"]}
    assert registered[center.node]["revoked"] is False
    assert registered[center.node]["last_seen_at"] is not None
    assert registered[revoked]["revoked"] is True
    page = center.client.get("/console/nodes", headers=auth)
    assert page.status_code == 200 and center.node in page.text and "revoked" in page.text
    shown = [listed.text, page.text, center.client.get("/console", headers=auth).text,
             center.client.get(f"/api/v0/conversations/{cid}", headers=auth).text,
             caplog.text]
    for secret in (center.key, revoked_key, hash_token(center.key), hash_token(revoked_key)):
        assert not any(secret in text for text in shown)


def test_only_a_digest_of_each_key_is_stored(center: Center) -> None:
    with center.store.engine.connect() as connection:
        row = connection.execute(sa.select(nodes).where(nodes.c.name == center.node)).one()
    assert row.key_hash == hash_token(center.key) and len(row.key_hash) == 64
    assert center.key not in str(tuple(row))
    assert center.key.startswith("jnk_") and len(center.key) > 40


def test_the_rate_limit_counts_per_authenticated_node(make_center: Any) -> None:
    center = make_center(ScriptedBackend([text("Hi.")], loop=True),
                         rate_limit_per_minute=1, rate_limit_burst=2)
    other = httpx.Client(base_url=center.url, timeout=30, headers={
        "Authorization": f"Bearer {center.server.add_node(node_name())}"})
    # Two declared node ids, one key: one bucket (2 requests), the third is refused.
    for declared in ("kitchen-pi", "pretending-to-be-another"):
        body = {"conversation_id": conversation_id(), "client_tools": [],
                "node_context": {"node_id": declared}}
        assert center.client.post("/api/v0/conversation/start", json=body).status_code == 200
    refused = center.client.post("/api/v0/conversation/start", json={
        "conversation_id": conversation_id(), "client_tools": [],
        "node_context": {"node_id": "yet-another"}})
    assert refused.status_code == 429 and refused.json()["detail"]["node_id"] == center.node
    # The same declared node id with another key: a bucket of its own.
    body = {"conversation_id": conversation_id(), "client_tools": [],
            "node_context": {"node_id": "kitchen-pi"}}
    assert other.post("/api/v0/conversation/start", json=body).status_code == 200
    other.close()


def test_without_authentication_only_on_loopback(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="only allowed on a loopback address"):
        CenterSettings(data_dir=tmp_path, insecure_no_auth=True, host="0.0.0.0")
    with pytest.raises(SettingsError, match="loopback"):
        load_settings({"host": "192.168.1.20"}, {"JARVIS_INSECURE_NO_AUTH": "1",
                                                 "JARVIS_DATA_DIR": str(tmp_path)})
    settings = CenterSettings(data_dir=tmp_path, insecure_no_auth=True, log_level="warning")
    with pytest.raises(ValueError, match="loopback"):
        CenterServer(settings, ScriptedBackend([]), host="0.0.0.0").start()
    for host in ("127.0.0.1", "localhost", "::1"):
        CenterSettings(data_dir=tmp_path, insecure_no_auth=True, host=host)
    backend = ScriptedBackend([text("Hello.")])
    with CenterServer(settings, backend) as server, httpx.Client(base_url=server.url) as client:
        cid = conversation_id()
        assert client.post("/api/v0/conversation/start", json=_bodies(cid)[
            "/api/v0/conversation/start"]).status_code == 200
        said = client.post("/api/v0/voice/command", json=_bodies(cid)["/api/v0/voice/command"])
        assert said.json()["assistant_message"] == "Hello."
        assert client.get("/api/v0/whoami").json() == {"node": None, "authenticated": False}


def test_the_node_routes_are_the_ones_the_gate_guards(center: Center) -> None:
    schema = center.client.get("/openapi.json").json()
    routes = {path for path, item in schema["paths"].items()
              if "401" in next(iter(item.values()))["responses"]
              and "admin" not in str(item).lower()}
    assert routes == set(NODE_PATHS)


def _database_at_0001(url: str) -> None:
    """A database as a center before node keys left it, with one conversation in it."""
    from datetime import UTC, datetime

    from alembic import command
    from alembic.config import Config

    from jarvis.center.store.migrate import MIGRATIONS

    engine = sa.create_engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001_initial")
        now = datetime.now(UTC)
        connection.execute(sa.text(
            "INSERT INTO center_conversations (id, node_context, client_tools, created_at, "
            "updated_at) VALUES ('old-conversation', '{\"node_id\": \"attic\"}', '[]', :now, :now)"
        ), {"now": now})
    engine.dispose()


@pytest.fixture
def old_database(db_url: str) -> Any:
    """A database of its own at the first schema: a SQLite file, or a PostgreSQL schema."""
    if db_url.startswith("sqlite"):
        _database_at_0001(db_url)
        yield db_url
        return
    import uuid

    base = db_url.split("?", 1)[0]  # the test database, without the session's schema
    schema = f"jarvis_auth_upgrade_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(base)
    with admin.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = f"{base}?options=-csearch_path%3D{schema}"
    try:
        _database_at_0001(url)
        yield url
    finally:
        with admin.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def test_an_older_database_upgrades_and_its_conversations_have_no_owner(
    old_database: str, make_center: Any,
) -> None:
    center = make_center(ScriptedBackend([text("Hi.")], loop=True), database_url=old_database,
                         admin_token=ADMIN)
    assert center.store.load("old-conversation").owner is None
    refused = center.client.post("/api/v0/voice/command", json={
        "conversation_id": "old-conversation", "voice_command": "hello"})
    assert refused.status_code == 404
    seen = center.client.get("/api/v0/conversations/old-conversation",
                             headers={"Authorization": f"Bearer {ADMIN}"})
    assert seen.status_code == 200 and seen.json()["node_id"] == "attic"
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    assert center.store.load(cid).owner == center.node


def test_refusals_are_counted_in_the_metrics(center: Center) -> None:
    stranger = httpx.post(f"{center.url}/api/v0/voice/command",
                          json={"conversation_id": "x", "voice_command": "hi"})
    assert stranger.status_code == 401
    metrics = center.client.get("/metrics").text
    assert ('jarvis_http_requests_total{method="POST",route="/api/v0/voice/command",'
            'status="401"} 1.0') in metrics
