"""jarvis ask / chat / commands / secrets (the node)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jarvis.cli.in_process_center import CenterStartError, InProcessCenter
from jarvis.node.actions import pick_action
from jarvis.node.center_login import CenterLogin, center_login
from jarvis.node.client import CenterError, CenterUnreachableError, JarvisCommandCenterClient
from jarvis.node.installer import (
    CommandState,
    InstallError,
    InstallReport,
    command_states,
    install_commands,
)
from jarvis.node.registry import CommandRegistry
from jarvis.node.runtime import Node, load_registry, open_node
from jarvis.node.scheduler import Scheduler
from jarvis.node.service import VoiceCommandResult
from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore, SecretKeyError
from jarvis.sdk import JarvisButton

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

commands_app = typer.Typer(
    help="List, install and set up the node's commands.", no_args_is_help=True
)
secrets_app = typer.Typer(
    help="Manage the node's secrets (stored encrypted; values are never printed).",
    no_args_is_help=True,
)

CenterOption = Annotated[
    str | None,
    typer.Option(
        "--center",
        envvar="JARVIS_CENTER_URL",
        help="URL of a running command center; without it a center runs inside this process.",
    ),
]
ScopeOption = Annotated[
    str | None,
    typer.Option("--scope", help="integration, node or user (default: the declared scope)."),
]


def fail(message: str, code: int = 1) -> NoReturn:
    """One clear line on stderr and a non-zero exit, never a traceback."""
    err_console.print(f"[red]Error:[/red] {escape(message)}")
    raise typer.Exit(code)


def _settings(center_url: str | None = None) -> NodeSettings:
    try:
        return NodeSettings.from_env(center_url=center_url)
    except ValueError as exc:
        fail(str(exc))


def _login(settings: NodeSettings) -> CenterLogin:
    """The center and key to use; no URL: the CLI starts a center of its own."""
    store = NodeStore(settings.data_dir)
    try:
        return center_login(settings, store)
    except SecretKeyError as exc:
        fail(str(exc))
    finally:
        store.close()


def _center_access(center: InProcessCenter) -> tuple[Callable[[], str], Callable[[], str]]:
    """The center's URL and this node's key, read when the node first needs them; a center
    that cannot start ends the command with one clear line."""
    def url() -> str:
        try:
            return center.url()
        except CenterStartError as exc:
            fail(str(exc))

    def key() -> str:
        try:
            return center.key()
        except (CenterStartError, SecretKeyError) as exc:
            fail(str(exc))

    return url, key


@contextlib.contextmanager
def running_node(center: str | None, early: bool = False) -> Iterator[Node]:
    """The node, with the center it talks to; `early`: start a center of its own now, in
    the background (someone is about to talk), not at the first request."""
    settings = _settings(center)
    login = _login(settings)
    in_process = None if login.url else InProcessCenter(settings.data_dir)
    if in_process is not None and early:
        in_process.start_early()
    url, key = _center_access(in_process) if in_process else (str(login.url), login.key)
    client = JarvisCommandCenterClient(
        url, ca_file=None if in_process else settings.center_ca, key=key)
    node = open_node(settings, client=client, progress=_progress)
    for problem in node.registry.problems:
        err_console.print(f"[yellow]Warning:[/yellow] {escape(str(problem))}")
    try:
        yield node
    finally:
        node.close()
        if in_process is not None:
            in_process.stop()


def _progress(line: str) -> None:
    """Long steps (a package installed on first use) reported on stderr, beside the answers."""
    err_console.print(f"[dim]{escape(line)}[/dim]")


def _ask_once(node: Node, text: str) -> VoiceCommandResult:
    try:
        return node.service.process_voice_command(text)
    except CenterUnreachableError as exc:
        fail(exc.message)
    except CenterError as exc:
        fail(f"the command center refused the request: {exc.message}")
    except (SecretKeyError, ValueError) as exc:
        fail(str(exc))


# --- ask / chat ------------------------------------------------------------------------------
def ask(
    text: Annotated[str, typer.Argument(help="What you would say to Jarvis.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the structured result as JSON.")
    ] = False,
    center: CenterOption = None,
) -> None:
    """Send one utterance through the whole pipeline and print the answer."""
    if not text.strip():
        fail("nothing to ask")
    with running_node(center) as node:
        result = _ask_once(node, text)
        # Said before the node and its center shut down, which takes a moment more.
        if as_json:
            typer.echo(json.dumps(result.to_dict(), indent=2, default=str))
        elif result.stop_reason != "error":
            console.print(escape(result.message))
    if result.stop_reason == "error":
        if as_json:
            raise typer.Exit(1)
        fail(result.message)


def _lines() -> Iterator[str]:
    """Utterances from the terminal (with a prompt) or from piped stdin."""
    interactive = sys.stdin.isatty()
    while True:
        try:
            line = console.input("[bold]you>[/bold] ") if interactive else input()
        except (EOFError, KeyboardInterrupt):
            return
        yield line


def _say(message: str) -> None:
    """The chat's output; the scheduler announces through it too."""
    console.print(f"[bold cyan]jarvis>[/bold cyan] {escape(message)}")


_CHOICE_STYLES = {"primary": "bold", "secondary": "dim", "destructive": "red"}


def _show_choices(actions: list[JarvisButton]) -> None:
    """The answer's buttons as numbered choices; the user types a number or a label."""
    for number, action in enumerate(actions, start=1):
        style = _CHOICE_STYLES.get(action.type, "bold")
        console.print(f"  [{style}]{number}. {escape(action.text)}[/{style}]")


class _Answer:
    """The chat's answer line, printed sentence by sentence as the center sends them."""

    def __init__(self) -> None:
        self.started = False

    def __call__(self, sentence: str) -> None:
        lead = " " if self.started else "[bold cyan]jarvis>[/bold cyan] "
        console.print(lead + escape(sentence), end="")
        self.started = True

    def end(self) -> None:
        if self.started:
            console.print()
            self.started = False


def _chat_turn(node: Node, text: str) -> VoiceCommandResult | None:
    answer = _Answer()
    try:
        return node.service.process_voice_command(text, on_sentence=answer)
    except CenterUnreachableError as exc:
        fail(exc.message)
    except (CenterError, SecretKeyError) as exc:
        answer.end()
        err_console.print(f"[red]Error:[/red] {escape(str(exc))}")
        return None
    finally:
        answer.end()  # the line of a streamed answer is closed whatever happened


def chat(center: CenterOption = None) -> None:
    """Talk to Jarvis in text; timers and reminders are announced while it runs.

    When an answer offers choices, typing a choice's number or label picks it.
    """
    with running_node(center, early=True) as node, Scheduler(node.store.storage, _say):
        choices: list[JarvisButton] = []
        for line in _lines():
            text = line.strip()
            if not text:
                continue
            if text.lower() in ("exit", "quit", "bye"):
                break
            picked = pick_action(text, choices)
            result = _chat_turn(node, picked.action if picked else text)
            choices = result.actions if result is not None else []
            _show_choices(choices)  # the answer itself was printed as it came


# --- commands ----------------------------------------------------------------------------------
@contextlib.contextmanager
def _registry(store: NodeStore, settings: NodeSettings) -> Iterator[CommandRegistry]:
    """The node's commands; MCP server processes started for them stop on leaving."""
    registry = load_registry(settings, store)
    for problem in registry.problems:
        err_console.print(f"[yellow]Warning:[/yellow] {escape(str(problem))}")
    try:
        yield registry
    finally:
        registry.close()


def _secret_state(is_set: bool, required: bool) -> str:
    if is_set:
        return "[green]set[/green]"
    return "[red]missing[/red]" if required else "[yellow]not set[/yellow]"


@commands_app.command("list")
def commands_list() -> None:
    """Show every command, where it comes from, and whether its secrets are set."""
    settings = _settings()
    store = NodeStore(settings.data_dir)
    with _registry(store, settings) as registry:
        _print_commands(registry, store)


def _print_commands(registry: CommandRegistry, store: NodeStore) -> None:
    known = store.exists()
    for name in sorted(registry.commands):
        command = registry.commands[name]
        console.print(f"[bold]{escape(name)}[/bold]  [dim]{escape(registry.sources[name])}[/dim]")
        for secret in command.all_possible_secrets:
            is_set = known and store.secrets.is_set(secret.key, secret.scope)
            state = _secret_state(is_set, secret.required)
            console.print(f"  secret {escape(secret.key)} ({secret.scope}): {state}")
        for package in command.required_packages:
            console.print(f"  package {escape(package.requirement)}")
    console.print(f"{len(registry)} command(s)")


def _print_report(report: InstallReport) -> None:
    would = "would " if report.dry_run else ""
    if report.migrations_applied:
        console.print(f"Database: {would}apply migrations")
    for plan in report.commands:
        console.print(f"[bold]{escape(plan.name)}[/bold]")
        for secret in plan.secrets_created:
            console.print(f"  secret {escape(secret.key)} ({secret.scope}): {would}declare (empty)")
        for secret in plan.secrets_kept:
            console.print(f"  secret {escape(secret.key)} ({secret.scope}): already declared, kept")
        for requirement in plan.packages:
            console.print(f"  package {escape(requirement)}: {would}pip install")
    for requirement in report.packages_installed:
        console.print(f"[green]installed[/green] {escape(requirement)}")
    for requirement, why in report.packages_failed.items():
        err_console.print(f"[red]failed[/red] {escape(requirement)}: {escape(why)}")
    if report.dry_run:
        console.print("Dry run: nothing was changed.")


_STATE_COLOURS = {"ready": "green"}


def _print_state(state: CommandState, auto_install: bool) -> None:
    colour = _STATE_COLOURS.get(state.state, "yellow")
    console.print(f"[bold]{escape(state.name)}[/bold]  [{colour}]{state.state}[/{colour}]  "
                  f"[dim]{escape(state.source)}[/dim]")
    later = "installed on first use" if auto_install else f"jarvis commands install {state.name}"
    for requirement, installed in state.packages.items():
        shown = "[green]installed[/green]" if installed else f"[yellow]missing[/yellow] ({later})"
        console.print(f"  package {escape(requirement)}: {shown}")
    for secret, is_set in state.secrets:
        console.print(f"  secret {escape(secret.key)} ({secret.scope}): "
                      f"{_secret_state(is_set, secret.required)}")


def _list_installable(names: list[str] | None) -> None:
    """Every command (or the named ones) and what it still lacks; changes nothing."""
    settings = _settings()
    store = NodeStore(settings.data_dir)
    with _registry(store, settings) as registry:
        unknown = [name for name in names or [] if name not in registry]
        if unknown:
            fail(f"unknown command(s): {', '.join(unknown)} (see: jarvis commands install --list)")
        states = [s for s in command_states(registry, store) if not names or s.name in names]
    for state in states:
        _print_state(state, settings.auto_install)
    ready = sum(state.state == "ready" for state in states)
    console.print(f"{len(states)} command(s), {ready} ready")


@commands_app.command("install")
def commands_install(
    names: Annotated[list[str] | None, typer.Argument(help="Commands to install.")] = None,
    all_commands: Annotated[bool, typer.Option("--all", help="Install every command.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be done and change nothing.")
    ] = False,
    list_only: Annotated[
        bool,
        typer.Option("--list", help="List the installable commands and what each still lacks."),
    ] = False,
) -> None:
    """Run migrations, declare each command's secrets and pip-install its packages."""
    if list_only:
        _list_installable(names)
        return
    if not names and not all_commands:
        fail("name the commands to install, pass --all, or see them with --list")
    if names and all_commands:
        fail("give command names or --all, not both")
    settings = _settings()
    store = NodeStore(settings.data_dir)
    with _registry(store, settings) as registry:
        try:
            report = install_commands(registry, store, None if all_commands else names,
                                      dry_run=dry_run)
        except (InstallError, SecretKeyError) as exc:
            fail(str(exc))
    _print_report(report)
    if not report.ok:
        raise typer.Exit(1)


@commands_app.command("init-data")
def commands_init_data(name: Annotated[str, typer.Argument(help="The command to set up.")]) -> None:
    """Run a command's first-install setup (it may ask questions) and print its summary."""
    settings = _settings()
    store = NodeStore(settings.data_dir)
    with _registry(store, settings) as registry:
        command = registry.get(name)
        if command is None:
            fail(f"unknown command '{name}' (see: jarvis commands list)")
        try:
            summary: Any = command.init_data()
        except Exception as exc:
            fail(f"{name}.init_data failed: {type(exc).__name__}: {exc}")
    if not summary:
        console.print(f"{escape(name)}: nothing to set up")
        return
    table = Table("key", "value", title=f"{name} init_data")
    items = summary.items() if isinstance(summary, dict) else [("result", summary)]
    for key, value in items:
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        table.add_row(escape(str(key)), escape(shown))
    console.print(table)


# --- secrets -----------------------------------------------------------------------------------
def _read_value(key: str) -> str:
    if sys.stdin.isatty():
        value = typer.prompt(f"Value for {key}", hide_input=True, confirmation_prompt=True)
    else:
        value = sys.stdin.read()
        value = value[:-1] if value.endswith("\n") else value
        value = value[:-1] if value.endswith("\r") else value
    if not value:
        fail("empty value; to remove a secret use: jarvis secrets delete " + key)
    return value


def _resolve_scope(store: NodeStore, key: str, scope: str | None) -> str:
    """An explicit scope, else the one the command declared (installation seeded it)."""
    if scope:
        return scope
    scopes = store.secrets.scopes_of(key) if store.exists() else []
    return scopes[0] if len(scopes) == 1 else "integration"


@secrets_app.command("set")
def secrets_set(
    key: Annotated[str, typer.Argument(help="The secret's key, e.g. HOME_ASSISTANT_TOKEN.")],
    scope: ScopeOption = None,
) -> None:
    """Store a secret (prompted without echo, or read from stdin in scripts)."""
    settings = _settings()
    store = NodeStore(settings.data_dir)
    resolved = _resolve_scope(store, key, scope)
    value = _read_value(key)
    try:
        store.secrets.set_secret(key, value, resolved)
    except (SecretKeyError, ValueError) as exc:
        fail(str(exc))
    console.print(f"Secret {escape(key)} ({resolved}) saved.")


@secrets_app.command("list")
def secrets_list() -> None:
    """Show declared secrets and whether each has a value (never the value)."""
    settings = _settings()
    store = NodeStore(settings.data_dir)
    records = store.secrets.list_secrets() if store.exists() else []
    if not records:
        console.print("No secrets declared. Install commands first: jarvis commands install --all")
        return
    for record in records:
        state = _secret_state(record.is_set, record.required)
        line = f"{escape(record.key)} ({record.scope}, {escape(record.value_type)}): {state}"
        if record.description:
            line += f"  [dim]{escape(record.description)}[/dim]"
        console.print(line)


@secrets_app.command("delete")
def secrets_delete(
    key: Annotated[str, typer.Argument(help="The secret's key.")],
    scope: ScopeOption = None,
) -> None:
    """Delete a secret (in every scope unless --scope is given)."""
    settings = _settings()
    store = NodeStore(settings.data_dir)
    removed = store.secrets.delete_secret(key, scope) if store.exists() else 0
    if not removed:
        fail(f"no secret named {key}" + (f" in scope {scope}" if scope else ""))
    console.print(f"Deleted {escape(key)} ({removed} row(s)).")


def register(app: typer.Typer) -> None:
    """Add this part's commands to the main app."""
    app.command("ask")(ask)
    app.command("chat")(chat)
    app.add_typer(commands_app, name="commands")
    app.add_typer(secrets_app, name="secrets")
