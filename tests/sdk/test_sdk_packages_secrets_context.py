"""JarvisPackage requirement strings, secrets, and the command context."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis.sdk import (
    CommandContext,
    CommandStorage,
    EnvironmentSecretStore,
    JarvisPackage,
    JarvisSecret,
    MemoryStorage,
    MissingSecretsError,
    SecretStore,
)


@pytest.mark.parametrize(
    ("name", "version", "requirement"),
    [
        ("music-assistant-client", ">=1.3.0", "music-assistant-client>=1.3.0"),
        ("requests", None, "requests"),
        ("requests", "==2.*", "requests==2.*"),
        ("requests[socks]", ">=2.31,<3", "requests[socks]>=2.31,<3"),
        ("zope.interface", "~=6.0", "zope.interface~=6.0"),
        ("pkg_name", " >= 1.0 , < 2 ", "pkg_name>=1.0,<2"),
        ("a", "!=1.5", "a!=1.5"),
        ("torch", "===2.1.0+cpu", "torch===2.1.0+cpu"),
    ],
)
def test_requirement_strings(name: str, version: str | None, requirement: str) -> None:
    package = JarvisPackage(name, version)
    assert package.requirement == requirement
    assert str(package) == requirement


@pytest.mark.parametrize(
    "name",
    ["-e", "--index-url", "-r", "git+https://example.com/x.git", "https://x/y.whl", "./local",
     "/abs/path", "a b", "pkg;rm -rf", "pkg\n--extra-index-url", "", "pkg@https://x", "-",
     "pkg-", ".pkg", "pkg[extra"],
)
def test_names_pip_could_read_as_an_option_url_or_path_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="Invalid package name"):
        JarvisPackage(name)


@pytest.mark.parametrize(
    "version",
    ["1.3.0", "latest", "@ https://x", ">=1.0; python_version<'3'", ">=1.0\n--index-url=x",
     ">=1.0\n,<2", "-e", ">= ", "", ">=1.0,", ">=1 <2"],
)
def test_version_specs_outside_the_plain_operator_list_are_refused(version: str) -> None:
    with pytest.raises(ValueError, match="Invalid version specifier"):
        JarvisPackage("pkg", version)


def test_missing_secrets_error_lists_keys_and_how_to_set_them() -> None:
    error = MissingSecretsError(["API_KEY", "API_URL"], "get_weather")
    assert error.missing == ["API_KEY", "API_URL"]
    assert "Missing secrets for 'get_weather': API_KEY, API_URL" in str(error)
    assert "jarvis secrets set API_KEY" in str(error)


def test_secret_declaration_defaults() -> None:
    secret = JarvisSecret("WEATHER_API_KEY", "OpenWeather key")
    assert (secret.scope, secret.value_type, secret.required, secret.is_sensitive) == (
        "integration", "string", True, True,
    )


def test_environment_secret_store(monkeypatch: pytest.MonkeyPatch) -> None:
    store = EnvironmentSecretStore()
    assert isinstance(store, SecretStore)
    monkeypatch.setenv("JARVIS_TEST_SECRET", "v")
    monkeypatch.setenv("JARVIS_EMPTY_SECRET", "")
    assert store.get_secret("JARVIS_TEST_SECRET") == "v"
    assert store.get_secret("JARVIS_EMPTY_SECRET") is None
    assert store.get_secret("JARVIS_NOT_SET_ANYWHERE") is None


def test_memory_storage_is_a_namespaced_key_value_store() -> None:
    storage = MemoryStorage()
    assert isinstance(storage, CommandStorage)
    storage.set("lists", "shopping", ["milk"])
    storage.set("timers", "t1", {"label": "pasta"})
    assert storage.get("lists", "shopping") == ["milk"]
    assert storage.get("lists", "missing", default=[]) == []
    assert storage.items("timers") == {"t1": {"label": "pasta"}}
    assert storage.items("nothing") == {}
    storage.delete("lists", "shopping")
    storage.delete("lists", "shopping")  # deleting twice is fine
    assert storage.items("lists") == {}
    # items() is a copy: changing it does not change the store.
    storage.items("timers")["t2"] = {}
    assert list(storage.items("timers")) == ["t1"]


def test_command_context_defaults(tmp_path: Path) -> None:
    ctx = CommandContext()
    assert isinstance(ctx.secrets, EnvironmentSecretStore)
    assert isinstance(ctx.storage, MemoryStorage)
    assert ctx.data_dir is None and ctx.timezone is None
    assert CommandContext(data_dir=tmp_path, timezone="UTC").data_dir == tmp_path
    # Each context gets its own storage.
    assert CommandContext().storage is not CommandContext().storage
