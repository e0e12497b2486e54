"""Where the secrets key lives: never beside the database; an old key there is moved."""

from __future__ import annotations

import base64
import configparser
import stat
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from cryptography.fernet import Fernet
from keyring.backends import fail
from keyrings.alt.file import PlaintextKeyring

from jarvis.node.store import NodeStore, SecretKeyError

VALUE = "tok-4f8a9d2e-very-private"


def _old_store(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """A store as Jarvis used to leave it: secrets encrypted with `<data_dir>/secret.key`."""
    key = Fernet.generate_key()
    monkeypatch.setenv("JARVIS_SECRET_KEY", key.decode())
    store = NodeStore(data_dir)
    store.secrets.set_secret("TOKEN", VALUE)
    store.close()
    monkeypatch.delenv("JARVIS_SECRET_KEY")
    legacy = data_dir / "secret.key"
    legacy.write_bytes(key + b"\n")
    legacy.chmod(0o600)
    return key


def _key_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("node-*.key")) if folder.exists() else []


def test_default_key_folder_is_in_the_config_folder(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JARVIS_KEY_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
    folder = tmp_path / "config" / "jarvis" / "keys"
    [key_file] = _key_files(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    Fernet(key_file.read_bytes().strip())  # a real key
    assert not [p for p in data_dir.rglob("*") if p.name.endswith(".key")]
    assert NodeStore(data_dir).secrets.get_secret("TOKEN") == VALUE


def test_each_data_folder_has_its_own_key(tmp_path: Path, key_dir: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    NodeStore(first).secrets.set_secret("TOKEN", "1")
    NodeStore(second).secrets.set_secret("TOKEN", "2")
    files = _key_files(key_dir)
    assert len(files) == 2 and files[0].read_bytes() != files[1].read_bytes()
    assert NodeStore(first).secrets.get_secret("TOKEN") == "1"
    assert NodeStore(second).secrets.get_secret("TOKEN") == "2"


def test_a_key_folder_inside_the_data_folder_is_refused(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_KEY_DIR", str(data_dir / "keys"))
    with pytest.raises(SecretKeyError, match="lies inside the data folder"):
        NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
    assert not (data_dir / "keys").exists()


def test_a_key_folder_others_can_open_is_refused(data_dir: Path, key_dir: Path) -> None:
    key_dir.mkdir(mode=0o755)
    key_dir.chmod(0o755)
    with pytest.raises(SecretKeyError, match="chmod 700"):
        NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
    assert _key_files(key_dir) == []


def test_a_key_beside_the_database_is_moved_to_the_key_folder(
    data_dir: Path, key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _old_store(data_dir, monkeypatch)
    assert NodeStore(data_dir).secrets.get_secret("TOKEN") == VALUE
    assert not (data_dir / "secret.key").exists()
    [key_file] = _key_files(key_dir)
    assert key_file.read_bytes().strip() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    # Later starts find it there, and new secrets use the same key.
    store = NodeStore(data_dir)
    store.secrets.set_secret("OTHER", "2")
    assert store.secrets.get_secret("TOKEN") == VALUE
    assert _key_files(key_dir) == [key_file]


def test_an_interrupted_move_is_finished(
    data_dir: Path, key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _old_store(data_dir, monkeypatch)
    NodeStore(data_dir).secrets.get_secret("TOKEN")
    (data_dir / "secret.key").write_bytes(key + b"\n")  # copied, but not yet deleted
    assert NodeStore(data_dir).secrets.get_secret("TOKEN") == VALUE
    assert not (data_dir / "secret.key").exists()


def test_two_different_keys_are_never_merged(
    data_dir: Path, key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    NodeStore(data_dir).secrets.set_secret("NEW", "1")
    [key_file] = _key_files(key_dir)
    current = key_file.read_bytes()
    _old_store(data_dir / "old", monkeypatch)
    (data_dir / "secret.key").write_bytes((data_dir / "old" / "secret.key").read_bytes())
    with pytest.raises(SecretKeyError, match="hold different keys"):
        NodeStore(data_dir).secrets.get_secret("NEW")
    assert (data_dir / "secret.key").exists() and key_file.read_bytes() == current


def test_an_invalid_key_beside_the_database_is_not_moved(data_dir: Path, key_dir: Path) -> None:
    (data_dir / "secret.key").write_text("not-a-key\n")
    with pytest.raises(SecretKeyError, match=r"secret\.key is not a valid key"):
        NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
    assert (data_dir / "secret.key").exists() and _key_files(key_dir) == []


# --- the OS keyring ------------------------------------------------------------------------
@pytest.fixture
def keyring_file(tmp_path: Path) -> Iterator[Path]:
    """A real keyring backend whose entries live in a file of this test."""
    previous = keyring.get_keyring()
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring" / "keyring_pass.cfg")
    keyring.set_keyring(backend)
    try:
        yield Path(backend.file_path)
    finally:
        keyring.set_keyring(previous)


def _keyring_entries(path: Path) -> dict[str, bytes]:
    parser = configparser.RawConfigParser()
    parser.read(path)
    if not parser.has_section("jarvis"):
        return {}
    return {name: base64.b64decode(value) for name, value in parser.items("jarvis")}


def test_keyring_holds_the_key_when_asked(
    data_dir: Path, key_dir: Path, keyring_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_SECRET_KEY_STORE", "keyring")
    NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
    [key] = _keyring_entries(keyring_file).values()
    Fernet(key)
    assert _key_files(key_dir) == [] and not (data_dir / "secret.key").exists()
    assert NodeStore(data_dir).secrets.get_secret("TOKEN") == VALUE


def test_a_key_beside_the_database_is_moved_to_the_keyring(
    data_dir: Path, key_dir: Path, keyring_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _old_store(data_dir, monkeypatch)
    monkeypatch.setenv("JARVIS_SECRET_KEY_STORE", "keyring")
    assert NodeStore(data_dir).secrets.get_secret("TOKEN") == VALUE
    assert list(_keyring_entries(keyring_file).values()) == [key]
    assert not (data_dir / "secret.key").exists() and _key_files(key_dir) == []


def test_auto_skips_a_keyring_that_stores_keys_in_plain_text(
    data_dir: Path, key_dir: Path, keyring_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_SECRET_KEY_STORE", "auto")
    NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
    assert len(_key_files(key_dir)) == 1
    assert _keyring_entries(keyring_file) == {}


def test_keyring_asked_for_but_missing_is_a_clear_error(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        monkeypatch.setenv("JARVIS_SECRET_KEY_STORE", "keyring")
        with pytest.raises(SecretKeyError, match="no OS keyring is available"):
            NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
        monkeypatch.setenv("JARVIS_SECRET_KEY_STORE", "vault")
        with pytest.raises(SecretKeyError, match="must be one of auto, keyring, file"):
            NodeStore(data_dir).secrets.set_secret("TOKEN", VALUE)
    finally:
        keyring.set_keyring(previous)
