"""Node identity as a user sets it up: `jarvis nodes add/list/revoke` on the center's data
folder, `jarvis node login` on the node, and `jarvis ask` with and without a login, all
against a real center on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from jarvis.center.auth import hash_token
from jarvis.center.llm.scripted import ScriptedBackend, text
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.cli.main import app
from jarvis.node.center_login import CENTER_KEY, CENTER_URL, LOCAL_CENTER_KEY
from jarvis.node.store import NodeStore

runner = CliRunner()


def _nodes(center_dir: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["nodes", *args, "--data-dir", str(center_dir)], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _stored_nodes(center_dir: Path) -> list[tuple[str, str, bool]]:
    engine = sa.create_engine(f"sqlite:///{center_dir / 'center.db'}")
    with engine.connect() as connection:
        rows = connection.execute(sa.text(
            "SELECT name, key_hash, revoked_at IS NOT NULL FROM center_nodes ORDER BY name"))
        found = [(r[0], r[1], bool(r[2])) for r in rows]
    engine.dispose()
    return found


@pytest.fixture
def center(tmp_path: Path) -> Iterator[CenterServer]:
    """A center on its own data folder, as `jarvis serve --data-dir` would run it."""
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning")
    backend = ScriptedBackend([text("Hello from the center.")], loop=True)
    with CenterServer(settings, backend) as server:
        yield server


def _whoami(server: CenterServer, key: str) -> httpx.Response:
    return httpx.get(f"{server.url}/api/v0/whoami", headers={"Authorization": f"Bearer {key}"})


def test_nodes_add_list_and_revoke_on_the_centers_data_folder(
    center: CenterServer, data_dir: Path,
) -> None:
    center_dir = Path(center.settings.data_dir or "")
    code, out, err = _nodes(center_dir, "add", "kitchen")
    assert code == 0, err
    key = out.strip()
    assert key.startswith("jnk_") and "\n" not in key and "shown only now" in err
    assert key not in err
    # The database holds a digest, never the key.
    assert _stored_nodes(center_dir) == [("kitchen", hash_token(key), False)]
    assert key.encode() not in (center_dir / "center.db").read_bytes()
    assert _whoami(center, key).json() == {"node": "kitchen", "authenticated": True}

    code, out, err = _nodes(center_dir, "add", "kitchen")
    assert code == 1 and "already has a key" in err
    code, out, _ = _nodes(center_dir, "list")
    assert code == 0 and "kitchen" in out and "active" in out and key not in out

    code, out, _ = _nodes(center_dir, "revoke", "kitchen")
    assert code == 0 and "revoked" in out
    assert _whoami(center, key).status_code == 401  # at once, on the running center
    code, out, _ = _nodes(center_dir, "list")
    assert "revoked" in out
    code, _, err = _nodes(center_dir, "revoke", "cellar")
    assert code == 1 and "no node named 'cellar'" in err

    # A new key for the node: the old one stays dead.
    code, out, _ = _nodes(center_dir, "add", "kitchen", "--replace")
    new_key = out.strip()
    assert code == 0 and new_key != key
    assert _whoami(center, new_key).status_code == 200 and _whoami(center, key).status_code == 401


def test_node_login_keeps_the_key_with_the_nodes_secrets_and_ask_uses_it(
    center: CenterServer, data_dir: Path,
) -> None:
    key = center.add_node("hall")
    refused = runner.invoke(app, ["node", "login", center.url], input="jnk_wrong\n")
    assert refused.exit_code == 1 and "did not accept this key" in refused.stderr
    assert not NodeStore(data_dir).exists() or NodeStore(data_dir).secrets.get_secret(
        CENTER_KEY, "node") is None

    done = runner.invoke(app, ["node", "login", center.url], input=key + "\n")
    assert done.exit_code == 0, done.output
    assert "as node hall" in done.stdout and key not in done.output
    store = NodeStore(data_dir)
    assert store.secrets.get_secret(CENTER_KEY, "node") == key
    assert store.secrets.get_secret(CENTER_URL, "node") == center.url
    # Encrypted at rest: the key is nowhere in the node's database file.
    assert key.encode() not in (data_dir / "node.db").read_bytes()
    store.close()
    listed = runner.invoke(app, ["secrets", "list"])
    assert CENTER_KEY in listed.stdout and key not in listed.stdout

    # No --center, no environment: the stored center and key are used.
    asked = runner.invoke(app, ["ask", "hello there"])
    assert asked.exit_code == 0, asked.output
    assert asked.stdout.strip() == "Hello from the center."

    out = runner.invoke(app, ["node", "logout"])
    assert out.exit_code == 0 and "Logged out" in out.stdout


def test_a_revoked_node_is_told_how_to_log_in_again(
    center: CenterServer, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = center.add_node("porch")
    monkeypatch.setenv("JARVIS_CENTER_KEY", key)
    from jarvis.center.auth import NodeKeys

    NodeKeys(center.app.state.store).revoke("porch")  # type: ignore[union-attr]
    asked = runner.invoke(app, ["ask", "--center", center.url, "hello there"])
    assert asked.exit_code == 1
    assert "invalid or revoked node key" in asked.stderr
    assert f"jarvis node login {center.url}" in asked.stderr and key not in asked.output


def test_ask_with_no_set_up_registers_this_machine_as_a_local_node(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = data_dir / "script.json"
    script.write_text('["Hi."]')
    monkeypatch.setenv("JARVIS_LLM_BACKEND", "scripted")
    monkeypatch.setenv("JARVIS_LLM_SCRIPT", str(script))
    for _ in range(2):
        asked = runner.invoke(app, ["ask", "hello"])
        assert asked.exit_code == 0, asked.output
        assert asked.stdout.strip() == "Hi."
    store = NodeStore(data_dir)
    key = store.secrets.get_secret(LOCAL_CENTER_KEY, "node")
    store.close()
    assert key is not None
    # One local node, made on the first run and reused: its digest, never its key.
    assert _stored_nodes(data_dir) == [("local", hash_token(key), False)]


def test_serve_refuses_to_run_without_keys_on_a_network_address(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--insecure-no-auth", "--host", "0.0.0.0",
                                 "--data-dir", str(tmp_path), "--show-settings"])
    assert result.exit_code == 2
    assert "only allowed on a loopback address" in result.stderr
    shown = runner.invoke(app, ["serve", "--insecure-no-auth", "--data-dir", str(tmp_path),
                                "--show-settings"])
    assert shown.exit_code == 0 and '"insecure_no_auth": true' in shown.stdout


def test_the_admin_token_is_generated_once_and_only_its_digest_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from jarvis.cli.serve_cmd import _first_admin_token

    settings = CenterSettings(data_dir=tmp_path, log_level="warning")
    _first_admin_token(settings)
    first = capsys.readouterr().out
    [token] = [w for w in first.split() if w.startswith("jat_")]
    _first_admin_token(settings)
    assert capsys.readouterr().out == ""  # shown once: a second start says nothing
    assert token.encode() not in (tmp_path / "center.db").read_bytes()
    with CenterServer(settings, ScriptedBackend([])) as server:
        auth = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{server.url}/api/v0/nodes", headers=auth).status_code == 200
        node_key = server.add_node("kitchen")
        refused = httpx.get(f"{server.url}/api/v0/nodes",
                            headers={"Authorization": f"Bearer {node_key}"})
        assert refused.status_code == 401
    replaced = runner.invoke(app, ["admin-token", "--data-dir", str(tmp_path)])
    assert replaced.exit_code == 0
    new = next(w for w in replaced.stdout.split() if w.startswith("jat_"))
    assert new != token
    with CenterServer(settings, ScriptedBackend([])) as server:
        for given, status in ((token, 401), (new, 200)):
            answer = httpx.get(f"{server.url}/api/v0/nodes",
                               headers={"Authorization": f"Bearer {given}"})
            assert answer.status_code == status
