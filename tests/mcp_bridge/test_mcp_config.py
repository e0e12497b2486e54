"""The node's MCP server list: what it accepts, and the errors that name the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis.node.mcp import McpConfigError, McpServerConfig, SecretRef, load_mcp_config
from jarvis.node.settings import NodeSettings


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mcp_servers.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_stdio_and_http_servers_with_secret_references(tmp_path: Path) -> None:
    path = _write(tmp_path, """
servers:
  time:
    command: mcp-server-time --local-timezone "Europe/Paris"
    env: {LANG: C, TOKEN: {secret: TIME_TOKEN, scope: node}}
    call_timeout: 5
  search:
    url: http://127.0.0.1:9000/mcp
    headers:
      Authorization: {secret: SEARCH_AUTH}
""")
    time, search = load_mcp_config(path)
    assert time.command == ["mcp-server-time", "--local-timezone", "Europe/Paris"]
    assert time.transport == "stdio" and time.call_timeout == 5.0
    assert time.env == {"LANG": "C", "TOKEN": SecretRef("TIME_TOKEN", "node")}
    assert [(s.key, s.scope) for s in time.secrets] == [("TIME_TOKEN", "node")]
    assert search.transport == "http" and search.url == "http://127.0.0.1:9000/mcp"
    assert search.headers == {"Authorization": SecretRef("SEARCH_AUTH")}


def test_a_missing_file_lists_no_servers(tmp_path: Path) -> None:
    assert load_mcp_config(tmp_path / "absent.yaml") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("servers: [a, b]", "expected a 'servers:' mapping"),
        ("servers: {x: {command: a, url: 'http://h/mcp'}}", "exactly one of 'command'"),
        ("servers: {x: {}}", "exactly one of 'command'"),
        ("servers: {x: {url: 'ftp://h'}}", "must start with http://"),
        ("servers: {x: {command: a, retries: 3}}", "unknown key(s) retries"),
        ("servers: {'a b': {command: a}}", "server 'a b': a name is"),
        ("servers: {x: {command: a, env: {K: {secret: 1}}}}", "env.K must be {secret: KEY}"),
        ("servers: {x: {command: a, call_timeout: 0}}", "'call_timeout' is a number"),
        ("servers: {x: {command: []}}", "'command' is a command line"),
        ("servers: {x: [unclosed", "cannot be read"),
    ],
)
def test_mistakes_are_named(tmp_path: Path, text: str, expected: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(McpConfigError) as caught:
        load_mcp_config(path)
    assert expected in str(caught.value)
    assert str(path) in str(caught.value)


def test_the_settings_name_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JARVIS_MCP_SERVERS", raising=False)
    settings = NodeSettings.from_env(data_dir=tmp_path)
    assert settings.mcp_config == tmp_path / "mcp_servers.yaml"
    monkeypatch.setenv("JARVIS_MCP_SERVERS", str(tmp_path / "elsewhere.yaml"))
    assert NodeSettings.from_env(data_dir=tmp_path).mcp_config == tmp_path / "elsewhere.yaml"


def test_a_server_is_shown_without_credentials() -> None:
    from jarvis.node.mcp.loader import server_source

    shown = server_source(McpServerConfig("s", url="https://me:pa55word@example.org/mcp"))
    assert shown == "MCP server s (https://example.org/mcp)"
    assert server_source(McpServerConfig("t", command=["mcp-server-time"])) == (
        "MCP server t (mcp-server-time)")
