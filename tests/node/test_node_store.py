"""The node store: secrets encrypted at rest, the key file, command storage."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from jarvis.node.store import NodeStore, SecretKeyError
from jarvis.sdk import JarvisSecret

VALUE = "tok-4f8a9d2e-very-private"


def test_secret_is_encrypted_at_rest(data_dir: Path) -> None:
    store = NodeStore(data_dir)
    store.secrets.set_secret("HOME_ASSISTANT_TOKEN", VALUE)
    store.close()

    # the database and its write-ahead log, whichever holds the row
    raw = b"".join(p.read_bytes() for p in data_dir.glob("node.db*"))
    assert VALUE.encode() not in raw
    assert b"HOME_ASSISTANT_TOKEN" in raw  # the key itself is not secret
    assert NodeStore(data_dir).secrets.get_secret("HOME_ASSISTANT_TOKEN") == VALUE


def test_key_file_is_created_owner_only_outside_the_data(data_dir: Path, key_dir: Path) -> None:
    store = NodeStore(data_dir)
    assert not key_dir.exists()
    store.secrets.set_secret("A", "1")
    [key_file] = key_dir.glob("node-*.key")
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_dir.stat().st_mode) == 0o700
    assert not (data_dir / "secret.key").exists()


def test_env_key_is_used_and_no_key_file_written(
    data_dir: Path, key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = Fernet.generate_key()
    monkeypatch.setenv("JARVIS_SECRET_KEY", key.decode())
    store = NodeStore(data_dir)
    store.secrets.set_secret("A", VALUE)
    assert not (data_dir / "secret.key").exists()
    assert not key_dir.exists()
    assert store.secrets.get_secret("A") == VALUE
    store.close()

    monkeypatch.setenv("JARVIS_SECRET_KEY", Fernet.generate_key().decode())
    with pytest.raises(SecretKeyError, match="cannot be decrypted"):
        NodeStore(data_dir).secrets.get_secret("A")


def test_invalid_env_key_is_a_clear_error(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JARVIS_SECRET_KEY", "not-a-key")
    with pytest.raises(SecretKeyError, match="JARVIS_SECRET_KEY is not a valid key"):
        NodeStore(data_dir).secrets.set_secret("A", "1")


def test_lost_key_file_is_not_silently_replaced(data_dir: Path, key_dir: Path) -> None:
    store = NodeStore(data_dir)
    store.secrets.set_secret("A", VALUE)
    store.close()
    [key_file] = key_dir.glob("node-*.key")
    key_file.unlink()

    store = NodeStore(data_dir)
    with pytest.raises(SecretKeyError, match="no key is configured"):
        store.secrets.get_secret("A")
    with pytest.raises(SecretKeyError, match=f"key is missing from {key_file}"):
        store.secrets.set_secret("B", "2")
    assert not key_file.exists()


def test_seed_keeps_existing_values_and_scopes_are_separate(data_dir: Path) -> None:
    secrets = NodeStore(data_dir).secrets
    secrets.set_secret("URL", "http://ha.local", scope="node")
    assert secrets.seed(JarvisSecret("URL", "Home Assistant URL", scope="node")) is False
    assert secrets.seed(JarvisSecret("URL", "per-user URL", scope="user", required=False))
    assert secrets.get_secret("URL", "node") == "http://ha.local"
    assert secrets.get_secret("URL", "user") is None
    assert secrets.get_secret("URL") is None  # integration scope was never set

    records = {(r.key, r.scope): r for r in secrets.list_secrets()}
    assert records[("URL", "node")].is_set
    assert records[("URL", "node")].description == "Home Assistant URL"
    assert not records[("URL", "user")].is_set
    assert records[("URL", "user")].required is False
    assert not any(VALUE in repr(r) or "http://ha.local" in repr(r) for r in records.values())


def test_delete_secret(data_dir: Path) -> None:
    secrets = NodeStore(data_dir).secrets
    secrets.set_secret("A", "1")
    secrets.set_secret("A", "2", scope="user")
    assert secrets.delete_secret("A", "user") == 1
    assert secrets.get_secret("A") == "1"
    assert secrets.delete_secret("A") == 1
    assert secrets.list_secrets() == []


def test_command_storage_round_trip_and_persistence(data_dir: Path) -> None:
    store = NodeStore(data_dir)
    store.storage.set("todo", "groceries", {"items": ["milk", "eggs"], "done": []})
    store.storage.set("todo", "work", {"items": []})
    store.storage.set("todo", "groceries", {"items": ["milk"], "done": ["eggs"]})
    store.storage.set("timers", "t1", {"id": "t1", "fired": False})
    store.storage.delete("todo", "work")
    store.close()

    storage = NodeStore(data_dir).storage
    assert storage.items("todo") == {"groceries": {"items": ["milk"], "done": ["eggs"]}}
    assert storage.get("todo", "missing", default=[]) == []
    assert storage.get("timers", "t1") == {"id": "t1", "fired": False}


def test_storage_rejects_non_json_values_and_keeps_the_old_one(data_dir: Path) -> None:
    storage = NodeStore(data_dir).storage
    storage.set("ns", "k", [1, 2])
    with pytest.raises(TypeError, match="must be JSON"):
        storage.set("ns", "k", {1, 2})
    assert storage.get("ns", "k") == [1, 2]


def test_store_is_lazy_and_migrates_once(data_dir: Path) -> None:
    store = NodeStore(data_dir)
    assert not store.exists()
    assert store.pending_migrations()
    assert store.migrate() is True
    assert store.exists()
    assert store.migrate() is False
    assert not store.pending_migrations()
