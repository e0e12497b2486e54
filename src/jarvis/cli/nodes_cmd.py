"""jarvis nodes add / list / revoke (on the center's machine) and jarvis node login (a node)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jarvis.cli.node_cmds import fail

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

nodes_app = typer.Typer(
    help="Nodes allowed to use this center (run where the center runs, with its settings).",
    no_args_is_help=True,
)

DataDirOption = Annotated[
    Path | None, typer.Option("--data-dir", help="The center's data folder (as for serve).")
]
DatabaseOption = Annotated[
    str | None, typer.Option("--database-url", help="The center's database (as for serve).")
]


def _keys(data_dir: Path | None, database_url: str | None) -> Any:
    """The node keys of the center's store, opened with the settings `jarvis serve` uses."""
    from jarvis.center.auth import NodeKeys
    from jarvis.center.settings import SettingsError, load_settings
    from jarvis.center.store import Store

    try:
        settings = load_settings({"data_dir": data_dir, "database_url": database_url})
        return NodeKeys(Store(settings.resolved_database_url()))
    except (SettingsError, OSError) as exc:
        fail(str(exc))
    except Exception as exc:  # the database is down or unreachable: say so in one line
        fail(f"cannot open the center's database: {type(exc).__name__}: {exc}")


@nodes_app.command("add")
def nodes_add(
    name: Annotated[str, typer.Argument(help="A name for the node, e.g. kitchen.")],
    replace: Annotated[
        bool, typer.Option("--replace", help="Give a node that has a key a new one.")
    ] = False,
    data_dir: DataDirOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Create a node and print its key (shown only this once; the center keeps a hash)."""
    from jarvis.center.store.node_keys import NodeExistsError

    keys = _keys(data_dir, database_url)
    try:
        key = keys.add(name, replace=replace)
    except (NodeExistsError, ValueError) as exc:
        fail(str(exc))
    finally:
        keys.store.close()
    err_console.print(f"Node [bold]{escape(name)}[/bold] added. Its key (shown only now):")
    typer.echo(key)
    err_console.print("On the node: jarvis node login <center URL> (and paste this key), "
                      "or set JARVIS_CENTER_KEY there.")


@nodes_app.command("list")
def nodes_list(data_dir: DataDirOption = None, database_url: DatabaseOption = None) -> None:
    """Every node: when it was added, last seen, and whether its key is revoked."""
    keys = _keys(data_dir, database_url)
    try:
        records = keys.list()
    finally:
        keys.store.close()
    if not records:
        console.print("No nodes yet. Add one with: jarvis nodes add NAME")
        return
    table = Table("name", "added (UTC)", "last seen (UTC)", "key")
    for record in records:
        seen = record.last_seen_at.strftime("%Y-%m-%d %H:%M") if record.last_seen_at else "never"
        state = (f"revoked {record.revoked_at:%Y-%m-%d %H:%M}" if record.revoked_at is not None
                 else "active")
        table.add_row(escape(record.name), f"{record.created_at:%Y-%m-%d %H:%M}", seen, state)
    console.print(table)


@nodes_app.command("revoke")
def nodes_revoke(
    name: Annotated[str, typer.Argument(help="The node whose key stops working.")],
    data_dir: DataDirOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Revoke a node's key: its next request gets 401 (its conversations are kept)."""
    from jarvis.center.store.node_keys import UnknownNodeError

    keys = _keys(data_dir, database_url)
    try:
        changed = keys.revoke(name)
    except UnknownNodeError as exc:
        fail(str(exc))
    finally:
        keys.store.close()
    console.print(f"Node {escape(name)}: key revoked." if changed
                  else f"Node {escape(name)}: its key was already revoked.")


# --- the node's side -------------------------------------------------------------------------
node_app = typer.Typer(help="This node's link to its command center.", no_args_is_help=True)


def _read_key() -> str:
    """The key, typed without echo or piped in; never taken from the command line (ps)."""
    if sys.stdin.isatty():
        key = typer.prompt("Node key (from jarvis nodes add on the center)", hide_input=True)
    else:
        key = sys.stdin.readline()
    key = key.strip()
    if not key:
        fail("no key given: paste the key `jarvis nodes add NAME` printed on the center")
    return key


@node_app.command("login")
def node_login(
    url: Annotated[str, typer.Argument(help="The center's URL, e.g. http://192.168.1.10:7700.")],
) -> None:
    """Check this node's key with the center and keep both (with the node's secrets)."""
    from jarvis.node.center_login import save_login
    from jarvis.node.client import CenterError, JarvisCommandCenterClient
    from jarvis.node.settings import NodeSettings
    from jarvis.node.store import NodeStore, SecretKeyError

    if not url.startswith(("http://", "https://")):
        fail(f"{url!r} is not a center URL: use http://HOST:PORT or https://HOST:PORT")
    key = _read_key()
    try:
        settings = NodeSettings.from_env()
        with JarvisCommandCenterClient(url, key=key, ca_file=settings.center_ca,
                                       retries=1) as client:
            who = client.whoami()
    except CenterError as exc:
        fail(f"the center did not accept this key: {exc.message}")
    except ValueError as exc:
        fail(str(exc))
    store = NodeStore(settings.data_dir)
    try:
        save_login(store, url.rstrip("/"), key)
    except (SecretKeyError, ValueError) as exc:
        fail(str(exc))
    finally:
        store.close()
    console.print(f"Logged in to {escape(url)} as node [bold]{escape(who.node or '?')}[/bold]. "
                  "jarvis ask, chat and listen now use this center.")


@node_app.command("logout")
def node_logout() -> None:
    """Forget the center and key `jarvis node login` stored."""
    from jarvis.node.center_login import CENTER_KEY, CENTER_URL, SCOPE
    from jarvis.node.settings import NodeSettings
    from jarvis.node.store import NodeStore

    try:
        settings = NodeSettings.from_env()
    except ValueError as exc:
        fail(str(exc))
    store = NodeStore(settings.data_dir)
    try:
        removed = sum(store.secrets.delete_secret(name, SCOPE) for name in (CENTER_KEY, CENTER_URL)
                      ) if store.exists() else 0
    finally:
        store.close()
    console.print("Logged out." if removed else "This node was not logged in.")


def register(app: typer.Typer) -> None:
    """Add this part's commands to the main app."""
    app.add_typer(nodes_app, name="nodes")
    app.add_typer(node_app, name="node")
