"""jarvis serve (the command center)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from jarvis.center.settings import CenterSettings, SettingsError, load_settings


def serve(
    host: str | None = typer.Option(None, "--host", help="Address to listen on [127.0.0.1]."),
    port: int | None = typer.Option(None, "--port", help="Port to listen on [7700]."),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Data folder (db, config)."),
    database_url: str | None = typer.Option(
        None, "--database-url", help="SQLAlchemy URL [sqlite:///<data_dir>/center.db]."
    ),
    llm_backend: str | None = typer.Option(
        None, "--llm-backend", help="embedded, openai or scripted [embedded]."
    ),
    llm_base_url: str | None = typer.Option(
        None, "--llm-base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1."
    ),
    llm_model: str | None = typer.Option(None, "--llm-model", help="Model name for the backend."),
    llm_script: Path | None = typer.Option(
        None, "--llm-script", help="JSON list of replies for the scripted backend."
    ),
    max_retries: int | None = typer.Option(None, "--max-retries", help="Validation retries [2]."),
    log_level: str | None = typer.Option(None, "--log-level", help="uvicorn log level [info]."),
    ssl_certfile: Path | None = typer.Option(
        None, "--ssl-certfile", help="Serve https with this certificate (PEM, with its chain)."
    ),
    ssl_keyfile: Path | None = typer.Option(
        None, "--ssl-keyfile", help="The certificate's private key (PEM)."
    ),
    insecure_no_auth: bool | None = typer.Option(
        None, "--insecure-no-auth",
        help="Serve nodes without keys (refused unless --host is a loopback address).",
    ),
    show_settings: bool = typer.Option(
        False, "--show-settings", help="Print the effective settings (no secrets) and exit."
    ),
) -> None:
    """Run the command center (HTTP API for nodes)."""
    settings = _load_or_exit(
        {
            "host": host,
            "port": port,
            "data_dir": data_dir,
            "database_url": database_url,
            "llm_backend": llm_backend,
            "llm_base_url": llm_base_url,
            "llm_model": llm_model,
            "llm_script": llm_script,
            "max_retries": max_retries,
            "log_level": log_level,
            "ssl_certfile": ssl_certfile,
            "ssl_keyfile": ssl_keyfile,
            "insecure_no_auth": insecure_no_auth,
        }
    )
    if show_settings:
        typer.echo(json.dumps(settings.redacted(), indent=2))
        return
    _run_center(settings)


def _load_or_exit(overrides: dict[str, Any]) -> CenterSettings:
    """The settings with the command line's `overrides`; exit 2 when they are invalid."""
    try:
        return load_settings(overrides)
    except SettingsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def _run_center(settings: CenterSettings) -> None:
    """Build the center's app and serve it with uvicorn until it stops."""
    import uvicorn

    from jarvis.center.app import create_app
    from jarvis.center.llm import BackendConfigError
    from jarvis.center.logs import configure_logging, uvicorn_log_config
    from jarvis.model_files import ModelStoreError

    level = settings.log_level.lower()
    log_config = uvicorn_log_config(settings.log_format)
    if log_config is not None:  # before the app is built: what its start logs is JSON too
        configure_logging(settings.log_format, level)
    try:
        _first_admin_token(settings)
        app = create_app(settings)
    except (BackendConfigError, ModelStoreError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    scheme = "https" if settings.tls else "http"
    typer.echo(
        f"Jarvis center on {scheme}://{settings.host}:{settings.port} "
        f"(LLM: {settings.llm_backend}, database: {settings.redacted()['database_url']})"
    )
    tls = {"ssl_certfile": str(settings.ssl_certfile) if settings.tls else None,
           "ssl_keyfile": str(settings.ssl_keyfile) if settings.tls else None}
    if log_config is None:
        uvicorn.run(app, host=settings.host, port=settings.port, log_level=level, **tls)
        return
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=level,
                log_config=log_config, **tls)


def _first_admin_token(settings: CenterSettings, replace: bool = False) -> None:
    """Generate the admin token when none is set or kept, and show it this once."""
    if settings.admin_token is not None and not replace:
        return
    from jarvis.center.auth import ADMIN_TOKEN_PREFIX, hash_token, new_token
    from jarvis.center.store import Store
    from jarvis.center.store.node_keys import NodeTable

    store = Store(settings.resolved_database_url())
    try:
        table = NodeTable(store.engine)
        if table.admin_hash() is not None and not replace:
            return
        token = new_token(ADMIN_TOKEN_PREFIX)
        if not table.set_admin_hash(hash_token(token), replace=replace):
            return  # another center generated one at the same moment
    finally:
        store.close()
    typer.echo(
        "Admin token for the console and the read API (shown only now; the center keeps a "
        f"hash):\n  {token}\nA new one: jarvis admin-token"
    )


def admin_token(
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Data folder (db, config)."),
    database_url: str | None = typer.Option(None, "--database-url", help="SQLAlchemy URL."),
) -> None:
    """Replace the generated admin token with a new one (restart the center to use it)."""
    try:
        settings = load_settings({"data_dir": data_dir, "database_url": database_url})
    except SettingsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if settings.admin_token is not None:
        typer.echo("note: admin_token is set in the settings; it wins over this one", err=True)
    _first_admin_token(settings, replace=True)


def register(app: typer.Typer) -> None:
    """Add this part's commands to the main app."""
    app.command("serve")(serve)
    app.command("admin-token")(admin_token)
